//! `postgres://` URLs: which ones name a PostgreSQL store, what may be shown of
//! them (never the password), and the TLS parameters rtlab reads itself.

#[cfg(feature = "postgres")]
use {
    crate::error::UsageError,
    anyhow::{bail, Result},
    std::path::PathBuf,
};

/// The scheme of `s` when it is a URL (`scheme://…`, RFC 3986 scheme letters).
pub fn scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Whether `s` names a PostgreSQL database (`postgres://`, `postgresql://`).
pub fn is_postgres(s: &str) -> bool {
    scheme(s)
        .is_some_and(|s| s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql"))
}

pub use crate::record::without_password as redact;

/// The keywords of libpq's connection strings (`host=db dbname=rtlab`).
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "connect_timeout",
    "application_name",
    "options",
    "service",
    "target_session_attrs",
    "channel_binding",
    "gssencmode",
    "require_auth",
];

/// The `keyword=` words of `s` when it is a libpq connection string
/// (`host=db dbname=rtlab`): a word that starts with a libpq keyword and
/// `=`. Only the keywords, never their values (one may be a password).
pub fn libpq_keywords(s: &str) -> Option<Vec<String>> {
    let words: Vec<String> = s
        .match_indices('=')
        .filter_map(|(at, _)| {
            // The word before `=` (spaces allowed between), at the start of
            // the text or after a space.
            let before = s[..at].trim_end();
            let start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let boundary = before[..start]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
            let word = before[start..].to_ascii_lowercase();
            (boundary && LIBPQ_KEYWORDS.contains(&word.as_str())).then(|| format!("{word}=…"))
        })
        .collect();
    (!words.is_empty()).then_some(words)
}

/// The scheme of `s` when it starts `postgres:` or `postgresql:` without
/// the two slashes of a URL (`postgres:/var/db`).
pub fn slashless_postgres(s: &str) -> Option<&str> {
    let (scheme, rest) = s.split_once(':')?;
    let pg = scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql");
    (pg && !rest.starts_with("//")).then_some(scheme)
}

/// `url` without its password, and the password (percent-decoded, as the
/// driver reads it) when it had one: in the user part or a `password=`
/// parameter. What a unit file may show, and what goes in a secret file.
pub fn split_password(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), None);
    };
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let mut password = None;
    let main = match main.rfind('@') {
        Some(at) => {
            let (user, host) = main.split_at(at);
            match user.split_once(':') {
                Some((name, pw)) => {
                    password = Some(percent_decoded(pw));
                    format!("{name}{host}")
                }
                None => main.to_string(),
            }
        }
        None => main.to_string(),
    };
    let kept: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty())
        .filter(|kv| match kv.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("password") => {
                password = Some(percent_decoded(v));
                false
            }
            _ => true,
        })
        .collect();
    let url = match kept.is_empty() {
        true => format!("{scheme}://{main}"),
        false => format!("{scheme}://{main}?{}", kept.join("&")),
    };
    (url, password)
}

/// `%XX` sequences decoded (an incomplete one is kept as it is).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How a connection is encrypted (`sslmode=`, as libpq names them).
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP or a Unix socket (`disable`, or no `sslmode`).
    Disable,
    /// TLS, the server's certificate not checked.
    Require,
    /// TLS, the certificate signed by a trusted authority.
    VerifyCa,
    /// TLS, the certificate trusted and naming the host.
    VerifyFull,
}

/// A PostgreSQL URL taken apart.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone)]
pub struct PgUrl {
    /// The URL handed to the driver (without the parameters read here).
    pub conn: String,
    /// What messages show: the URL without its password.
    pub shown: String,
    pub ssl: SslMode,
    /// `sslrootcert=FILE`: the authorities trusted for `verify-*`.
    pub root_cert: Option<PathBuf>,
}

/// Reads `url`; an `sslmode` rtlab does not offer is refused (exit 2).
#[cfg(feature = "postgres")]
pub fn parse(url: &str) -> Result<PgUrl> {
    let shown = redact(url);
    let (main, query) = match url.split_once('?') {
        Some((m, q)) => (m, q),
        None => (url, ""),
    };
    let mut ssl = SslMode::Disable;
    let mut root_cert = None;
    let mut rest = Vec::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        match kv.split_once('=') {
            Some(("sslmode", v)) => {
                ssl = match v {
                    "disable" => SslMode::Disable,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => bail!(UsageError(format!(
                        "{shown}: sslmode={other} is not offered; give sslmode=disable (or none), require, verify-ca or verify-full"
                    ))),
                }
            }
            Some(("sslrootcert", v)) => root_cert = Some(PathBuf::from(v)),
            _ => rest.push(kv),
        }
    }
    let conn = if rest.is_empty() {
        main.to_string()
    } else {
        format!("{main}?{}", rest.join("&"))
    };
    Ok(PgUrl {
        conn,
        shown,
        ssl,
        root_cert,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        for (url, shown) in [
            ("postgres://u:pw@h:5432/db", "postgres://u:***@h:5432/db"),
            ("postgresql://u@h/db", "postgresql://u@h/db"),
            (
                "postgres://h/db?password=pw&x=1",
                "postgres://h/db?password=***&x=1",
            ),
            ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
        ] {
            assert_eq!(redact(url), shown);
        }
    }

    #[test]
    fn libpq_strings_and_urls_without_slashes_are_recognised() {
        assert_eq!(
            libpq_keywords("host=db port=5432 dbname=rtlab password=secret").unwrap(),
            ["host=…", "port=…", "dbname=…", "password=…"]
        );
        assert_eq!(libpq_keywords("dbname = x").unwrap(), ["dbname=…"]);
        assert!(libpq_keywords("/var/lib/rtlab/rtlab.db").is_none());
        assert!(libpq_keywords("./run=3.db").is_none());
        assert!(libpq_keywords("/data/host=1/x.db").is_none());
        assert_eq!(slashless_postgres("postgres:/var/db"), Some("postgres"));
        assert_eq!(slashless_postgres("PostgreSQL:db"), Some("PostgreSQL"));
        assert_eq!(slashless_postgres("postgres://h/db"), None);
        assert_eq!(slashless_postgres("/tmp/postgres:x"), None);
    }

    #[test]
    fn passwords_are_taken_out_whole() {
        for (url, rest, pw) in [
            (
                "postgres://u:pw@h:5432/db",
                "postgres://u@h:5432/db",
                Some("pw"),
            ),
            (
                "postgres://u:p%40ss@h/db",
                "postgres://u@h/db",
                Some("p@ss"),
            ),
            ("postgres://u:p@ss@h/db", "postgres://u@h/db", Some("p@ss")),
            (
                "postgres://u@h/db?password=x%20y&sslmode=require",
                "postgres://u@h/db?sslmode=require",
                Some("x y"),
            ),
            ("postgres://u@h/db", "postgres://u@h/db", None),
            (
                "postgres://h/db?connect_timeout=3",
                "postgres://h/db?connect_timeout=3",
                None,
            ),
        ] {
            let (u, p) = split_password(url);
            assert_eq!((u.as_str(), p.as_deref()), (rest, pw), "{url}");
        }
    }

    #[test]
    #[cfg(feature = "postgres")]
    fn ssl_parameters_are_read_here_and_the_rest_passed_on() {
        let u =
            parse("postgres://u:pw@h/db?sslmode=verify-full&sslrootcert=/ca.pem&connect_timeout=3")
                .unwrap();
        assert_eq!(u.ssl, SslMode::VerifyFull);
        assert_eq!(u.root_cert, Some(PathBuf::from("/ca.pem")));
        assert_eq!(u.conn, "postgres://u:pw@h/db?connect_timeout=3");
        assert_eq!(parse("postgres://h/db").unwrap().ssl, SslMode::Disable);
        let e = parse("postgres://u:pw@h/db?sslmode=prefer")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslmode=prefer is not offered"), "{e}");
        assert!(!e.contains("pw"), "{e}");
        assert!(is_postgres("PostgreSQL://h/db") && !is_postgres("mysql://h/db"));
    }
}
