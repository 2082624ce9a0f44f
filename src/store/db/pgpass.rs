//! Where a PostgreSQL password comes from when the URL has none, as libpq
//! looks for it: `PGPASSWORD`, else the password file (`PGPASSFILE`, else
//! `~/.pgpass`), whose lines read `host:port:database:user:password` (`*`
//! matches anything, `\` escapes `:` and `\`; the first matching line wins).
//! A password file others may read or write is ignored, with a warning, as
//! libpq does: it must be mode 0600 or stricter.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What a password is looked up for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    /// The host name, or `localhost` for the default Unix socket.
    pub host: &'a str,
    pub port: u16,
    pub database: &'a str,
    pub user: &'a str,
}

/// The password for `t`: `PGPASSWORD`, else the password file's.
pub fn lookup(t: &Target<'_>) -> Option<String> {
    if let Some(pw) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(pw);
    }
    let file = match std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        Some(f) => PathBuf::from(f),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    from_file(&file, t)
}

/// The password for `t` in the password file `path`, if it is private.
fn from_file(path: &Path, t: &Target<'_>) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        eprintln!(
            "rtlab: warning: password file {} is not a plain file",
            path.display()
        );
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "rtlab: warning: password file {} has group or world access, and is ignored; make it private: chmod 0600 {}",
            path.display(),
            path.display()
        );
        return None;
    }
    find(&std::fs::read_to_string(path).ok()?, t)
}

/// The password of the first line of `text` that matches `t`.
fn find(text: &str, t: &Target<'_>) -> Option<String> {
    let port = t.port.to_string();
    let want = [t.host, port.as_str(), t.database, t.user];
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|line| {
            let fields = fields(line);
            let [host, port, db, user, pw] = fields.as_slice() else {
                return None;
            };
            let matches = [host, port, db, user]
                .iter()
                .zip(want)
                .all(|(f, w)| f.as_str() == "*" || f.as_str() == w);
            matches.then(|| pw.clone())
        })
}

/// A line's fields: split at `:`, `\` escaping the next character; the
/// fifth field (the password) runs to the end of the line.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.last_mut().expect("one field").push(next);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Target = Target {
        host: "db.lab",
        port: 5432,
        database: "rtlab",
        user: "rt",
    };

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# comment\n\nother:5432:rtlab:rt:no\ndb.lab:5433:*:*:no\ndb.lab:*:rtlab:rt:p\\:w\\\\x:y\n*:*:*:*:fallback\n";
        assert_eq!(find(text, &T).as_deref(), Some("p:w\\x:y"));
        assert_eq!(
            find(text, &Target { user: "other", ..T }).as_deref(),
            Some("fallback")
        );
        assert_eq!(find("db.lab:5432:rtlab:rt\n", &T), None, "four fields");
    }

    #[test]
    fn a_file_others_may_read_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pgpass");
        std::fs::write(&f, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(from_file(&f, &T), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(from_file(&f, &T).as_deref(), Some("pw"));
        assert_eq!(from_file(d.path(), &T), None, "a directory");
        assert_eq!(from_file(&d.path().join("none"), &T), None);
    }
}
