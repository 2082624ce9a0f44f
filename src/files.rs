//! Every file rtlab writes, written one way. rtlab runs as root, often in
//! directories other users may write (`/tmp`, a shared results directory), so
//! a file is never opened by a name someone else could have chosen first:
//!
//! - its content goes into a new file with a random name in the target's own
//!   directory, created with `O_CREAT|O_EXCL` (which never follows a symbolic
//!   link, nor opens a file that is already there): the tempfile crate;
//! - when whole (and, if asked, synced), it is renamed onto the target name.
//!   `rename(2)` replaces whatever has that name, a planted symbolic link
//!   included, and never writes through it; a reader sees the old file or the
//!   new one, never half of one.
//!
//! Files another library writes by name (SQLite's bundles and backups) are
//! made in a new private directory ([`private_dir_in`], mode 0700) beside the
//! target, where no one else can plant anything, then moved out by [`place`].

use std::fs::Permissions;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The mode of an ordinary output (a report, an export, a plot, a unit):
/// what `creat(2)` gives, less the umask, as any file rtlab wrote before.
pub const ORDINARY: u32 = 0o666;
/// The mode of a file holding a secret (a password): its owner only.
pub const SECRET: u32 = 0o600;

/// A file to write whole under `path`.
#[derive(Debug, Clone, Copy)]
pub struct NewFile<'a> {
    path: &'a Path,
    mode: u32,
    replace: bool,
    durable: bool,
}

impl<'a> NewFile<'a> {
    /// A file at `path`, mode [`ORDINARY`], replacing what has that name.
    pub fn at(path: &'a Path) -> Self {
        NewFile {
            path,
            mode: ORDINARY,
            replace: true,
            durable: false,
        }
    }

    /// Created with `mode` (less the umask).
    pub fn mode(self, mode: u32) -> Self {
        NewFile { mode, ..self }
    }

    /// Never replaces a file already there: that is an `AlreadyExists` error.
    pub fn no_replace(self) -> Self {
        NewFile {
            replace: false,
            ..self
        }
    }

    /// Synced to the disk, and its directory after the rename, before
    /// returning: a power cut leaves the old file or the new one.
    pub fn durable(self) -> Self {
        NewFile {
            durable: true,
            ..self
        }
    }

    /// Writes `bytes`.
    pub fn write(self, bytes: &[u8]) -> io::Result<()> {
        self.write_with(|w| w.write_all(bytes))
    }

    /// Writes what `fill` writes, as it is made. An error of `fill` leaves
    /// nothing behind and the target as it was.
    pub fn write_with(self, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        let dir = dir_of(self.path);
        let tmp = tempfile::Builder::new()
            .prefix(&hidden_prefix(self.path))
            .permissions(Permissions::from_mode(self.mode))
            .tempfile_in(dir)?;
        let mut out = io::BufWriter::new(tmp);
        fill(&mut out)?;
        let tmp = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        if self.durable {
            tmp.as_file().sync_all()?;
        }
        let kept = if self.replace {
            tmp.persist(self.path)
        } else {
            tmp.persist_noclobber(self.path)
        };
        kept.map_err(|e| e.error)?;
        if self.durable {
            sync_dir(dir)?;
        }
        Ok(())
    }
}

/// The directory a file named `path` goes in.
pub fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `.NAME.` : the start of the temporary names beside `path`, hidden, saying
/// what they will become.
fn hidden_prefix(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // Cut, so that a long name keeps the temporary one within NAME_MAX.
    let mut end = name.len().min(100);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.", &name[..end])
}

/// A new directory with a random name in `dir`, mode 0700, removed with what
/// it holds when dropped.
pub fn private_dir_in(dir: &Path, prefix: &str) -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(Permissions::from_mode(0o700))
        .tempdir_in(dir)
}

/// A new private directory (as [`private_dir_in`]) in the system's temporary
/// directory (`$TMPDIR`, else `/tmp`).
pub fn private_dir(prefix: &str) -> io::Result<tempfile::TempDir> {
    private_dir_in(&std::env::temp_dir(), prefix)
}

/// Moves the file `from` (made in a private directory on the same file
/// system) to `to`, replacing what has that name when `replace`, else failing
/// with `AlreadyExists`.
pub fn place(from: &Path, to: &Path, replace: bool) -> io::Result<()> {
    let from = tempfile::TempPath::try_from_path(from)?;
    let moved = if replace {
        from.persist(to)
    } else {
        from.persist_noclobber(to)
    };
    moved.map_err(|e| {
        // Left where it was, for the private directory to take away.
        let mut path = e.path;
        path.disable_cleanup(true);
        e.error
    })
}

/// Makes a symbolic link to `target` named `path` in one rename, replacing
/// what has that name: the name never goes missing, and the link is first
/// made under a random name no one else could have chosen.
pub fn symlink(target: &Path, path: &Path) -> io::Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix(&hidden_prefix(path))
        .make_in(dir_of(path), |p| std::os::unix::fs::symlink(target, p))?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Makes the renames and removals in `dir` durable (fsync(2) of the directory).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// The hidden names in `dir`: temporary files left behind (none, after any
/// write).
#[cfg(test)]
fn leftovers(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_file_is_written_whole_under_its_name_with_nothing_left_beside() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        NewFile::at(&p).write(b"one").unwrap();
        NewFile::at(&p).durable().write(b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert!(leftovers(d.path()).is_empty());

        let e = NewFile::at(&p)
            .write_with(|w| {
                w.write_all(b"half")?;
                Err(io::Error::other("the writer failed"))
            })
            .unwrap_err();
        assert_eq!(e.to_string(), "the writer failed");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert!(leftovers(d.path()).is_empty());

        let e = NewFile::at(&p).no_replace().write(b"three").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert!(leftovers(d.path()).is_empty());
    }

    #[test]
    fn a_planted_link_is_replaced_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let p = d.path().join("out.csv");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        NewFile::at(&p).write(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!p.symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");

        // Not replaced either when asked not to replace.
        let q = d.path().join("new.db");
        std::os::unix::fs::symlink(&victim, &q).unwrap();
        assert!(NewFile::at(&q).no_replace().write(b"x").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }

    #[test]
    fn modes_are_as_asked_less_the_umask() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().join("monitor.env");
        NewFile::at(&secret)
            .mode(SECRET)
            .write(b"PGPASSWORD=x\n")
            .unwrap();
        assert_eq!(secret.metadata().unwrap().mode() & 0o777, 0o600);
        let unit = d.path().join("rtlab-monitor.service");
        NewFile::at(&unit).mode(0o644).write(b"[Unit]\n").unwrap();
        let mode = unit.metadata().unwrap().mode() & 0o777;
        assert_eq!(mode & !0o644, 0, "never more than asked: {mode:o}");
        assert_eq!(mode & 0o700, 0o600, "{mode:o}");
    }

    #[test]
    fn files_made_in_a_private_directory_are_placed_and_links_swapped() {
        let d = tempfile::tempdir().unwrap();
        let private = private_dir_in(d.path(), ".bundle-").unwrap();
        assert_eq!(private.path().metadata().unwrap().mode() & 0o777, 0o700);
        let made = private.path().join("b.db");
        std::fs::write(&made, "db").unwrap();
        let to = d.path().join("b.rtlab");
        std::fs::write(&to, "there").unwrap();
        assert_eq!(
            place(&made, &to, false).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(made.exists(), "left for the directory to remove");
        place(&made, &to, true).unwrap();
        assert_eq!(std::fs::read_to_string(&to).unwrap(), "db");
        drop(private);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);

        let link = d.path().join("cyclictest");
        symlink(Path::new("/bin/true"), &link).unwrap();
        symlink(Path::new("/bin/false"), &link).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/bin/false"));
        assert!(leftovers(d.path()).is_empty());
    }
}
