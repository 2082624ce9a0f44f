//! Named pipes (`mkfifo(3)`) that a process writes to only while someone reads
//! them: what cyclictest's `-F` serves its status lines on.

use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Creates a named pipe at `path` (mode 0666 less the umask), replacing a file
/// that is there.
pub fn create(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: mkfifo(3) reads one NUL-terminated path that outlives the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o666) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The write end of the pipe at `path` when a reader has it open; `None` when
/// nobody reads (the open would block).
pub fn open_if_read(path: &Path) -> Option<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_pipe_is_written_only_while_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        std::fs::write(&p, "a file in the way").unwrap();
        create(&p).unwrap();
        assert!(open_if_read(&p).is_none(), "nobody reads yet");
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .unwrap();
        let mut w = open_if_read(&p).expect("a reader is there");
        w.write_all(b"T: 0\n").unwrap();
        drop(w);
        let mut text = String::new();
        (&reader).read_to_string(&mut text).unwrap();
        assert_eq!(text, "T: 0\n");
    }
}
