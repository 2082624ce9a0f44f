//! `rtlab install-links DIR`: a symlink named after every personality, pointing
//! at the running rtlab, so that scripts calling `stress` run rtlab as stress.

use super::Personality;
use crate::error::{SystemError, UsageError};
use anyhow::{Context as _, Result};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What a personality's name in a directory is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Nothing of that name.
    Missing,
    /// A symlink to this rtlab.
    Ours,
    /// Something else: what it is (`a file`, `a link to /usr/bin/stress`).
    Other(String),
    /// A directory: never replaced.
    Directory,
}

impl State {
    fn describe(&self) -> String {
        match self {
            State::Missing => "missing".into(),
            State::Ours => "a link to this rtlab".into(),
            State::Other(what) => what.clone(),
            State::Directory => "a directory".into(),
        }
    }
}

/// The state of `path`, where a link to `exe` (canonical) is [`State::Ours`].
pub fn state(path: &Path, exe: &Path) -> State {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => return State::Missing,
    };
    if meta.file_type().is_symlink() {
        if fs::canonicalize(path).is_ok_and(|t| t == exe) {
            return State::Ours;
        }
        let target = fs::read_link(path).unwrap_or_default();
        return State::Other(format!("a link to {}", target.display()));
    }
    if meta.is_dir() {
        State::Directory
    } else {
        State::Other("a file".into())
    }
}

/// The running rtlab, as links point at it.
fn this_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the rtlab executable")?;
    Ok(fs::canonicalize(&exe).unwrap_or(exe))
}

/// The lines of `install-links --list`: each personality and, given `dir`, what
/// its name there is now.
pub fn list(dir: Option<&Path>) -> Result<String> {
    let exe = this_exe()?;
    let mut s = format!("personalities of {}:\n", exe.display());
    for p in Personality::ALL {
        match dir {
            Some(d) => {
                let path = d.join(p.name());
                let st = state(&path, &exe);
                s.push_str(&format!(
                    "  {:<10} {}: {}\n",
                    p.name(),
                    path.display(),
                    st.describe()
                ));
            }
            None => s.push_str(&format!("  {}\n", p.name())),
        }
    }
    Ok(s)
}

/// Makes the links in `dir`: every name is checked before any link is made;
/// a name that is something other than a link to this rtlab is refused unless
/// `force`, and a directory always. Returns what was done, a line per name.
pub fn install(dir: &Path, force: bool) -> Result<String> {
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "{} is not a directory; create it first (rtlab does not create directories)",
            dir.display()
        ))
        .into());
    }
    let exe = this_exe()?;
    let plan: Vec<(PathBuf, State)> = Personality::ALL
        .iter()
        .map(|p| {
            let path = dir.join(p.name());
            let st = state(&path, &exe);
            (path, st)
        })
        .collect();
    let refused: Vec<String> = plan
        .iter()
        .filter(|(_, st)| matches!(st, State::Directory) || matches!(st, State::Other(_)) && !force)
        .map(|(path, st)| format!("{} is {}", path.display(), st.describe()))
        .collect();
    if !refused.is_empty() {
        return Err(UsageError(format!(
            "nothing made: {} (--force replaces a file or another link; a directory is never replaced)",
            refused.join("; ")
        ))
        .into());
    }
    let mut out = String::new();
    for (path, st) in plan {
        let verb = match st {
            State::Ours => "kept",
            State::Missing => {
                link(&exe, &path)?;
                "made"
            }
            _ => {
                replace(&exe, &path)?;
                "replaced"
            }
        };
        out.push_str(&format!("{verb} {} -> {}\n", path.display(), exe.display()));
    }
    Ok(out)
}

fn link(exe: &Path, path: &Path) -> Result<()> {
    std::os::unix::fs::symlink(exe, path).map_err(|e| refused(path, e))
}

/// Replaces `path` by a link in one rename, so that the name never goes missing.
fn replace(exe: &Path, path: &Path) -> Result<()> {
    crate::files::symlink(exe, path).map_err(|e| refused(path, e))
}

fn refused(path: &Path, e: std::io::Error) -> anyhow::Error {
    let msg = format!("cannot make {}: {e}", path.display());
    if e.kind() == ErrorKind::PermissionDenied {
        SystemError(format!("{msg} (a system directory needs root)")).into()
    } else {
        SystemError(msg).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_of_a_name() {
        let d = tempfile::tempdir().unwrap();
        let exe = this_exe().unwrap();
        let p = d.path().join("x");
        assert_eq!(state(&p, &exe), State::Missing);
        std::os::unix::fs::symlink(&exe, &p).unwrap();
        assert_eq!(state(&p, &exe), State::Ours);
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/bin/true", &p).unwrap();
        assert_eq!(state(&p, &exe), State::Other("a link to /bin/true".into()));
        fs::remove_file(&p).unwrap();
        fs::write(&p, "x").unwrap();
        assert_eq!(state(&p, &exe), State::Other("a file".into()));
        assert_eq!(state(d.path(), &exe), State::Directory);
    }

    #[test]
    fn a_file_is_kept_unless_forced_and_nothing_is_half_made() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("stress-ng"), "script").unwrap();
        let e = install(d.path(), false).unwrap_err().to_string();
        assert!(e.contains("stress-ng is a file"), "{e}");
        assert!(
            !d.path().join("stress").exists(),
            "nothing is made on a refusal"
        );
        let out = install(d.path(), true).unwrap();
        assert!(out.contains("made ") && out.contains("replaced "), "{out}");
        let again = install(d.path(), false).unwrap();
        assert_eq!(
            again.matches("kept ").count(),
            Personality::ALL.len(),
            "{again}"
        );
        fs::remove_file(d.path().join("stress")).unwrap();
        fs::create_dir(d.path().join("stress")).unwrap();
        let e = install(d.path(), true).unwrap_err().to_string();
        assert!(e.contains("stress is a directory"), "{e}");
    }
}
