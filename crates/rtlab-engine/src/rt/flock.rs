//! Advisory whole-file locks (`flock(2)`), for state files that several rtlab
//! processes read, change and write back.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// Opens (creating it if needed, never truncating) the lock file `path`,
/// without following a symbolic link at its name (`O_NOFOLLOW`: `ELOOP`), so
/// that a link planted there never makes the caller create or open a file
/// elsewhere.
pub fn open_lock_file(path: &std::path::Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Tries to take an exclusive lock on `file` without waiting: `Ok(true)` when
/// taken, `Ok(false)` when another open file description holds it (another
/// process, or another `open` of the same file in this one). The lock is released
/// when every descriptor of this open file description is closed.
pub fn try_lock_exclusive(file: &File) -> std::io::Result<bool> {
    loop {
        // SAFETY: flock(2) takes a descriptor that `file` keeps open for the
        // duration of the call, and integer flags.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_opens_exclude_each_other_until_closed() {
        let dir = std::env::temp_dir().join(format!(
            "rtlab-flock-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lock");
        let a = File::create(&path).unwrap();
        let b = File::open(&path).unwrap();
        assert!(try_lock_exclusive(&a).unwrap());
        assert!(!try_lock_exclusive(&b).unwrap());
        drop(a);
        assert!(try_lock_exclusive(&b).unwrap());
        drop(b);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
