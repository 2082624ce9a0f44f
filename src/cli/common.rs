//! What every measuring command shares: saving to the store, labels and tags,
//! `--json`, `--quiet`, `--unit`, and turning a finished run into output and an
//! exit code.

use crate::error::UsageError;
use crate::files;
use crate::format::json;
use crate::record::Run;
use crate::store::{self, Store};
use crate::units::TimeUnit;
use anyhow::{Context as _, Result};
use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Options that apply to the whole invocation.
#[derive(Debug, Clone)]
pub struct Context {
    /// `--db`.
    pub db: Option<PathBuf>,
}

impl Context {
    /// Opens the store named by `--db`, `$RTLAB_DB` or the default path.
    pub fn open_store(&self) -> Result<Store> {
        Store::open(&store::default_path(self.db.as_deref())?)
    }

    /// Opens the results store to change what it holds; a missing database
    /// is an input error rather than a new empty file.
    pub fn open_existing(&self) -> Result<Store> {
        Store::open(&self.existing_db()?)
    }

    /// Opens the results store to read it, read-only: nothing is created
    /// (a missing database, or its directory, is an input error naming the
    /// path), and another user's store can be read.
    pub fn open_read(&self) -> Result<Store> {
        Store::open_reading(&self.existing_db()?)
    }

    /// The store named by `--db`, `$RTLAB_DB` or the default path, which must
    /// exist (a URL is judged when connecting).
    pub fn existing_db(&self) -> Result<std::path::PathBuf> {
        let path = store::default_path(self.db.as_deref())?;
        if !store::exists(&path) {
            return Err(UsageError(format!(
                "no results database at {}: measure something first (e.g. rtlab latency), or name the database with --db PATH or RTLAB_DB",
                store::shown(&path)
            ))
            .into());
        }
        Ok(path)
    }
}

/// Saving options of measuring commands.
#[derive(Debug, Clone, Args)]
pub struct SaveArgs {
    /// Do not save the run to the results store.
    #[arg(long)]
    pub no_save: bool,
    /// Label of the run [default: "<kernel release> <preemption model>"].
    #[arg(long, value_name = "TEXT", value_parser = label_value)]
    pub label: Option<String>,
    /// Tag the run (repeatable) [default: no tags].
    #[arg(long = "tag", value_name = "TAG", value_parser = tag_value)]
    pub tags: Vec<String>,
}

impl SaveArgs {
    /// Labels and tags `run` as asked.
    pub fn apply(&self, run: &mut Run) {
        if let Some(label) = &self.label {
            run.label = label.clone();
        }
        run.tags = self.tags.clone();
    }
}

/// Output options of measuring commands.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print one JSON document (format rtlab/1) on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// No live view and no progress; only the final result.
    #[arg(short, long)]
    pub quiet: bool,
    /// Unit of times in tables.
    #[arg(long, value_enum, default_value_t = TimeUnit::Us)]
    pub unit: TimeUnit,
}

impl OutputArgs {
    /// Whether a live view may be drawn (on stderr, when it is a terminal).
    pub fn live(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

/// Runs `measure` with the system's audit summary read before it, so that the
/// memory the audit takes is free again before anything is measured, and reused
/// by what follows rather than added to it; the run records what else the
/// machine did meanwhile (`system::background`).
pub fn audited(measure: impl FnOnce() -> Result<Run>) -> Result<Run> {
    let audit = crate::tune::audit::summary();
    let mut run = crate::system::background::recorded(measure)?;
    run.audit = Some(audit);
    Ok(run)
}

/// Saves the run (unless `--no-save`), prints it as JSON or as `table`, and
/// returns its exit code. The store is written before anything is printed, so
/// that a closed pipe cannot lose the run.
pub fn finish(
    ctx: &Context,
    save: &SaveArgs,
    out: &OutputArgs,
    run: &mut Run,
    table: impl FnOnce(&Run) -> String,
) -> Result<i32> {
    run.audit.get_or_insert_with(crate::tune::audit::summary);
    let mut saved = None;
    if !save.no_save {
        // Encoded first, its memory and code given back, then written: the
        // two never hold memory at once.
        let ready = store::Ready::of(run)?;
        rtlab_engine::rt::mem::release_unused();
        let mut store = ctx.open_store()?;
        let id = store.save_ready(ready)?;
        run.id = Some(id);
        saved = Some(store.path().display().to_string());
    }
    // The store's pages (and its code's) are not needed to print.
    rtlab_engine::rt::mem::release_unused();
    let mut stdout = std::io::stdout().lock();
    let text = if out.json {
        json::document(run)?
    } else {
        table(run)
    };
    // A closed pipe (`| head`) is not an error.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if let (Some(id), Some(path)) = (run.id, saved) {
        eprintln!("saved as run {id} in {path}");
    }
    Ok(run.exit_code)
}

/// `--tag`: some text. An empty tag cannot be listed, filtered or removed.
pub fn tag_value(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("a tag cannot be empty; give some text (e.g. --tag baseline)".into());
    }
    crate::record::plain_name("tag", text)?;
    Ok(text.to_string())
}

/// `--label`: some text (without it, the default label applies).
pub fn label_value(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "a label cannot be empty; give some text or leave --label out for the default".into(),
        );
    }
    crate::record::plain_name("label", text)?;
    Ok(text.to_string())
}

/// A file rtlab writes (`--histfile`, `--svg`, `--html`, `--output`): its
/// directory must exist. rtlab creates no directories for files, so that a
/// typo (`/nonexistent/dir/x.svg`) is refused before anything runs rather than
/// after a long measurement, and never makes a tree of directories.
pub fn output_file(text: &str) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err("the path is empty; give a file name".into());
    }
    let path = PathBuf::from(text);
    if text == "-" {
        return Ok(path);
    }
    if path.is_dir() {
        return Err(format!("{text} is a directory; give a file name in it"));
    }
    existing_parent(&path)?;
    Ok(path)
}

/// A directory rtlab writes files into (`--plots`, `prio unit --dir`): it
/// exists, or its parent does and rtlab creates just that one directory.
pub fn output_dir(text: &str) -> Result<PathBuf, String> {
    if text.is_empty() {
        return Err("the path is empty; give a directory".into());
    }
    let path = PathBuf::from(text);
    if path.is_dir() {
        return Ok(path);
    }
    if path.exists() {
        return Err(format!("{text} exists and is not a directory"));
    }
    existing_parent(&path)?;
    Ok(path)
}

/// Refuses a path whose directory does not exist.
fn existing_parent(path: &Path) -> Result<(), String> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return Ok(()),
    };
    if parent.is_dir() {
        Ok(())
    } else if parent.exists() {
        Err(format!("{} is not a directory", parent.display()))
    } else {
        Err(format!(
            "the directory {} does not exist; create it first (rtlab does not create directories)",
            parent.display()
        ))
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes to stdout (a closed pipe is not an error) or, through
/// [`files::NewFile`] (a new file with a random name, renamed), to `path`, so
/// that a reader never sees half a file and a link planted at the name is
/// replaced, never written through; errors name `flag`.
pub fn write_output(flag: &str, path: Option<&Path>, text: &str) -> Result<()> {
    write_output_with(flag, path, |out| out.write_all(text.as_bytes()))
}

/// As [`write_output`], with the text handed to `write` as it is made rather than
/// held whole.
pub fn write_output_with(
    flag: &str,
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        None => {
            let mut out = std::io::stdout().lock();
            let _ = write(&mut out);
            let _ = out.flush();
        }
        Some(p) => files::NewFile::at(p)
            .write_with(write)
            .with_context(|| format!("{flag}: cannot write {}", p.display()))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tags_and_labels_are_refused() {
        assert!(tag_value("").unwrap_err().contains("cannot be empty"));
        assert!(tag_value("  ").is_err());
        assert!(tag_value("a\tb").unwrap_err().contains("control"));
        assert!(label_value("a\u{1b}[2J").unwrap_err().contains("control"));
        assert!(label_value("x\ry").unwrap_err().contains("control"));
        assert!(label_value(&"x".repeat(201))
            .unwrap_err()
            .contains("at most 200"));
        assert!(label_value(&"é".repeat(200)).is_ok());
        assert_eq!(tag_value("rt kernel").unwrap(), "rt kernel");
        assert!(label_value(" ").unwrap_err().contains("cannot be empty"));
        assert_eq!(label_value("x").unwrap(), "x");
    }

    #[test]
    fn output_paths_need_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ok = d.join("a.svg");
        assert_eq!(output_file(ok.to_str().unwrap()).unwrap(), ok);
        assert_eq!(output_file("-").unwrap(), PathBuf::from("-"));
        assert!(output_file("relative-in-cwd.svg").is_ok());
        let missing = d.join("no/such/a.svg");
        let e = output_file(missing.to_str().unwrap()).unwrap_err();
        assert!(e.contains("does not exist; create it first"), "{e}");
        assert!(!d.join("no").exists());
        let e = output_file(d.to_str().unwrap()).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        std::fs::write(d.join("f"), "x").unwrap();
        let e = output_file(d.join("f/a.svg").to_str().unwrap()).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        assert!(output_file("").is_err());

        assert!(output_dir(d.join("plots").to_str().unwrap()).is_ok());
        assert!(output_dir(d.join("no/plots").to_str().unwrap()).is_err());
        assert!(output_dir(d.join("f").to_str().unwrap()).is_err());
    }
}
