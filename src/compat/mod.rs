//! Personalities: rtlab standing in for a tool that scripts already call, with
//! that tool's arguments and that tool's output.
//!
//! rtlab behaves as a tool when it is invoked under the tool's name (busybox
//! style: a symlink `stress → rtlab`, made by `rtlab install-links`), or as
//! `rtlab <tool> [--no-store] ARGS…`. A personality parses the tool's own
//! arguments by hand into the typed `step::*::Params` rtlab's own commands
//! build, refuses what rtlab cannot honour (naming the option), runs the
//! step's `measure`, stores the run like any rtlab run ([`Session::save`]) and
//! prints it in the tool's layout.
//!
//! Adding a personality is a module here, a variant of [`Personality`] with its
//! name and its arm in [`Personality::main`], and its `rtlab <tool>` subcommand.

pub mod cyclictest;
pub mod links;
pub mod stress;
pub mod sysbench;

use crate::error::UsageError;
use crate::record::Run;
use crate::store::{self, Store};
use anyhow::Result;
use clap::Args;
use std::ffi::OsStr;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// A tool rtlab can stand in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Personality {
    /// `cyclictest` 2.x (rt-tests).
    Cyclictest,
    /// `stress` 1.0.
    Stress,
    /// `sysbench` 1.0 (and 0.4's option names).
    Sysbench,
    /// `stress-ng`.
    StressNg,
}

impl Personality {
    /// Every personality, in the order `install-links` makes them.
    pub const ALL: &'static [Personality] = &[
        Personality::Cyclictest,
        Personality::Stress,
        Personality::StressNg,
        Personality::Sysbench,
    ];

    /// The tool's name: the name of its symlink and of its subcommand.
    pub fn name(self) -> &'static str {
        match self {
            Personality::Cyclictest => "cyclictest",
            Personality::Stress => "stress",
            Personality::StressNg => "stress-ng",
            Personality::Sysbench => "sysbench",
        }
    }

    /// The personality rtlab was invoked as: the file name of `argv0`.
    pub fn from_argv0(argv0: &OsStr) -> Option<Personality> {
        let name = Path::new(argv0).file_name()?;
        Self::ALL.iter().copied().find(|p| name == p.name())
    }

    /// Runs the tool with its own arguments `args` (without argv[0]).
    pub fn main(self, session: &Session, args: &[String]) -> Result<i32> {
        match self {
            Personality::Cyclictest => cyclictest::main(session, args),
            Personality::Stress => stress::stress_main(session, args),
            Personality::StressNg => stress::ng_main(session, args),
            Personality::Sysbench => sysbench::main(session, args),
        }
    }
}

/// `rtlab <tool> [--no-store] ARGS…`: rtlab's own flag, then the tool's
/// arguments exactly as the tool takes them.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct RawArgs {
    /// Do not store the run (also: environment RTLAB_NO_STORE=1).
    #[arg(long)]
    pub no_store: bool,
    /// The tool's own arguments (`--help` among them is the tool's help)
    /// [default: none, the tool's defaults].
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// The environment variable that keeps personality runs out of the store, for
/// invocations through a symlink, where there is no rtlab flag.
pub const NO_STORE_ENV: &str = "RTLAB_NO_STORE";

/// The environment variable that labels a personality's run (rtlab's
/// `--label`), so that the tool's own command line stays as it is.
pub const LABEL_ENV: &str = "RTLAB_LABEL";

/// The environment variable that tags a personality's run: tags separated by
/// commas (rtlab's `--tag`, repeated).
pub const TAGS_ENV: &str = "RTLAB_TAGS";

/// Where and whether a personality stores its run: the convention every
/// personality follows.
#[derive(Debug, Clone)]
pub struct Session {
    /// `--db` (else `$RTLAB_DB`, else the default path).
    pub db: Option<PathBuf>,
    /// `--no-store` or `RTLAB_NO_STORE=1`.
    pub no_store: bool,
    /// `RTLAB_LABEL`.
    pub label: Option<String>,
    /// `RTLAB_TAGS`.
    pub tags: Vec<String>,
}

impl Session {
    /// The session of an invocation: `db` from `--db` (none through a symlink),
    /// `no_store` from `--no-store`, either of them raised by `RTLAB_NO_STORE`;
    /// the label and tags from `RTLAB_LABEL` and `RTLAB_TAGS`, checked as
    /// `--label` and `--tag` are, before anything runs.
    pub fn new(db: Option<PathBuf>, no_store: bool) -> Result<Session> {
        let env = |name| std::env::var(name).unwrap_or_default();
        Ok(Session {
            db,
            no_store: no_store || no_store_value(&env(NO_STORE_ENV))?,
            label: label_of(&env(LABEL_ENV))?,
            tags: tags_of(&env(TAGS_ENV))?,
        })
    }

    /// Stores `run` (with its original command line, as every run has) unless
    /// the session says not to. The run id is said on stderr only when stderr is
    /// a terminal, so that a script sees exactly the tool's output.
    pub fn save(&self, run: &mut Run) -> Result<()> {
        if self.no_store {
            return Ok(());
        }
        let mut store = Store::open(&store::default_path(self.db.as_deref())?)?;
        if let Some(label) = &self.label {
            run.label = label.clone();
        }
        run.tags = self.tags.clone();
        run.audit = Some(crate::tune::audit::summary());
        let id = store.save(run)?;
        run.id = Some(id);
        if std::io::stderr().is_terminal() {
            eprintln!("rtlab: saved as run {id} in {}", store.path().display());
        }
        Ok(())
    }
}

/// `RTLAB_NO_STORE`: unset, empty or 0 stores; 1 does not.
fn no_store_value(text: &str) -> Result<bool> {
    match text.trim() {
        "" | "0" => Ok(false),
        "1" => Ok(true),
        other => Err(UsageError(format!(
            "{NO_STORE_ENV}='{other}': set it to 1 (do not store the run) or 0"
        ))
        .into()),
    }
}

/// `RTLAB_LABEL`: unset or empty is no label, else what `--label` takes.
fn label_of(text: &str) -> Result<Option<String>> {
    if text.is_empty() {
        return Ok(None);
    }
    crate::cli::common::label_value(text)
        .map(Some)
        .map_err(|e| UsageError(format!("{LABEL_ENV}='{text}': {e}")).into())
}

/// `RTLAB_TAGS`: unset or empty is no tag, else tags separated by commas
/// (spaces around each trimmed), each what `--tag` takes.
fn tags_of(text: &str) -> Result<Vec<String>> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .enumerate()
        .map(|(i, t)| {
            crate::cli::common::tag_value(t.trim()).map_err(|e| {
                UsageError(format!(
                    "{TAGS_ENV}='{text}': tag {} of the list: {e}",
                    i + 1
                ))
                .into()
            })
        })
        .collect()
}

/// Runs rtlab invoked as `p` through a symlink: every argument is the tool's.
pub fn invoked_as(p: Personality) -> Result<i32> {
    let args = std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string().map_err(|a| {
                UsageError(format!(
                    "argument {} is not UTF-8 text",
                    a.to_string_lossy()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    p.main(&Session::new(None, false)?, &args)
}

/// Runs `rtlab <tool> [--no-store] ARGS…`.
pub fn subcommand(p: Personality, db: Option<PathBuf>, raw: RawArgs) -> Result<i32> {
    p.main(&Session::new(db, raw.no_store)?, &raw.args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_personality_is_the_file_name_of_argv0() {
        for (argv0, want) in [
            ("stress", Some(Personality::Stress)),
            ("/usr/local/bin/stress-ng", Some(Personality::StressNg)),
            ("./stress", Some(Personality::Stress)),
            ("rtlab", None),
            ("/proc/self/exe", None),
            ("stress-ng.real", None),
            ("/opt/stress/rtlab", None),
            ("", None),
        ] {
            assert_eq!(Personality::from_argv0(OsStr::new(argv0)), want, "{argv0}");
        }
        for p in Personality::ALL {
            assert_eq!(Personality::from_argv0(OsStr::new(p.name())), Some(*p));
        }
    }

    #[test]
    fn labels_and_tags_from_the_environment_are_checked_as_the_flags() {
        assert_eq!(label_of("").unwrap(), None);
        assert_eq!(
            label_of("preempt-rt").unwrap().as_deref(),
            Some("preempt-rt")
        );
        let e = label_of("  ").unwrap_err().to_string();
        assert!(
            e.starts_with("RTLAB_LABEL='  ': a label cannot be empty"),
            "{e}"
        );
        assert!(tags_of("").unwrap().is_empty());
        assert_eq!(tags_of("rt, lab 3 ,x").unwrap(), ["rt", "lab 3", "x"]);
        let e = tags_of("rt,,x").unwrap_err().to_string();
        assert!(
            e.starts_with("RTLAB_TAGS='rt,,x': tag 2 of the list: a tag cannot be empty"),
            "{e}"
        );
        let e = tags_of("a\tb").unwrap_err().to_string();
        assert!(e.contains("control characters"), "{e}");
    }

    #[test]
    fn no_store_is_1_and_store_is_0_or_nothing() {
        assert!(no_store_value("1").unwrap());
        for v in ["", "0", " 0 "] {
            assert!(!no_store_value(v).unwrap(), "{v:?}");
        }
        let e = no_store_value("yes").unwrap_err().to_string();
        assert!(e.contains("RTLAB_NO_STORE='yes'"), "{e}");
    }
}
