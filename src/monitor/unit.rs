//! `rtlab monitor --install-unit`: the systemd service that runs the monitor
//! with the same options, its RT limits, restart policy and the housekeeping
//! CPUs for everything but the measuring threads; and the file beside it that
//! holds the store's password (never the unit, which everyone may read, nor
//! the command line, which `/proc/PID/cmdline` shows to everyone).

use std::fmt::Write as _;

/// What the unit is made of.
pub struct UnitSpec<'a> {
    /// The rtlab binary, absolute.
    pub exe: &'a str,
    /// The monitor's options, `--install-unit` and `--unit-dir` left out.
    pub args: &'a [String],
    /// The database, absolute, or its URL without a password.
    pub db: &'a str,
    /// The file the unit reads PGPASSWORD from (absolute), when the store
    /// needs a password.
    pub env_file: Option<&'a str>,
    /// CPUs not measured: where the main thread, loads and alerts run.
    pub housekeeping: &'a [usize],
}

/// A word of ExecStart= as systemd reads it back (systemd.service, "Command
/// lines"): `%` and `$` doubled (specifiers and variables are expanded even
/// in quotes), and a word with anything but plain characters in double
/// quotes, where `\\` and `"` are escaped and control characters (a newline
/// would end the line, and the setting) are written as C escapes.
fn quote(word: &str) -> String {
    let escaped = word.replace('%', "%%").replace('$', "$$");
    if !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+".contains(c))
    {
        return escaped;
    }
    let mut out = String::from("\"");
    for c in escaped.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The line of a setting that takes a path (`EnvironmentFile=`), `%` doubled;
/// `None` for a path systemd could not read back (control characters, or
/// not absolute).
fn path_setting(key: &str, path: &str) -> Option<String> {
    (path.starts_with('/') && !path.chars().any(char::is_control))
        .then(|| format!("{key}={}\n", path.replace('%', "%%")))
}

/// Whether `path` can be named in a unit (see [`path_setting`]).
pub fn nameable(path: &str) -> bool {
    path_setting("X", path).is_some()
}

/// The environment file holding the store's password: one `PGPASSWORD=`
/// assignment in double quotes, `\\`, `"`, `` ` `` and `$` escaped
/// (systemd.exec, EnvironmentFile=). `None` for a password with control
/// characters, which it could not hold on one line.
pub fn env_file_text(password: &str) -> Option<String> {
    if password.chars().any(char::is_control) {
        return None;
    }
    let mut v = String::new();
    for c in password.chars() {
        if "\\\"`$".contains(c) {
            v.push('\\');
        }
        v.push(c);
    }
    Some(format!(
        "# The password of the store of rtlab-monitor.service (mode 0600: its owner only).\nPGPASSWORD=\"{v}\"\n"
    ))
}

/// The unit file's text.
pub fn text(s: &UnitSpec<'_>) -> String {
    let mut exec = vec![quote(s.exe), "--db".into(), quote(s.db), "monitor".into()];
    exec.extend(s.args.iter().map(|a| quote(a)));
    let affinity = if s.housekeeping.is_empty() {
        "# every CPU is measured: none is left for housekeeping\n".to_string()
    } else {
        let cpus: Vec<String> = s.housekeeping.iter().map(usize::to_string).collect();
        format!("CPUAffinity={}\n", cpus.join(" "))
    };
    let env = s
        .env_file
        .and_then(|f| path_setting("EnvironmentFile", f))
        .unwrap_or_default();
    format!(
        "[Unit]
Description=rtlab monitor: timer latency around the clock
Documentation=man:rtlab(1)
After=multi-user.target

[Service]
Type=simple
{env}ExecStart={exec}
Restart=on-failure
RestartSec=5s
KillSignal=SIGTERM
TimeoutStopSec=30s
LimitRTPRIO=99
LimitMEMLOCK=infinity
Nice=-5
{affinity}
[Install]
WantedBy=multi-user.target
",
        exec = exec.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_the_same_options_on_the_housekeeping_cpus() {
        let args: Vec<String> = [
            "-a",
            "1",
            "--window",
            "5m",
            "--alert-cmd",
            "mail -s 'rt $HOST' root",
        ]
        .map(String::from)
        .to_vec();
        let t = text(&UnitSpec {
            exe: "/usr/bin/rtlab",
            args: &args,
            db: "/var/lib/rtlab/rtlab.db",
            env_file: None,
            housekeeping: &[0, 2],
        });
        assert!(t.contains(
            "ExecStart=/usr/bin/rtlab --db /var/lib/rtlab/rtlab.db monitor -a 1 --window 5m --alert-cmd \"mail -s 'rt $$HOST' root\"\n"
        ), "{t}");
        for line in [
            "LimitRTPRIO=99\n",
            "LimitMEMLOCK=infinity\n",
            "Restart=on-failure\n",
            "CPUAffinity=0 2\n",
            "Nice=-5\n",
            "WantedBy=multi-user.target\n",
        ] {
            assert!(t.contains(line), "{line}");
        }
        let all = text(&UnitSpec {
            exe: "/x",
            args: &[],
            db: "/d",
            env_file: Some("/etc/rtlab/50%.env"),
            housekeeping: &[],
        });
        assert!(!all.contains("CPUAffinity="));
        assert!(all.contains("\nEnvironmentFile=/etc/rtlab/50%%.env\nExecStart="));
        assert!(all.contains("none is left for housekeeping"));
    }

    #[test]
    fn words_with_spaces_quotes_and_percent_signs_are_quoted() {
        assert_eq!(quote("plain-1.5"), "plain-1.5");
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("50%"), "\"50%%\"");
        assert_eq!(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(quote("a\nb\rc\u{1b}[2J"), "\"a\\x0ab\\x0dc\\x1b[2J\"");
        assert_eq!(quote("a\u{85}b"), "\"a\\u0085b\"");
        assert_eq!(quote("x;y"), "\"x;y\"");
        assert!(nameable("/etc/systemd/system/x.env"));
        assert!(!nameable("/etc/a\nb") && !nameable("relative"));
    }

    #[test]
    fn the_password_file_quotes_what_systemd_would_read_otherwise() {
        assert_eq!(
            env_file_text("p\"w$x`y\\z").unwrap().lines().last(),
            Some("PGPASSWORD=\"p\\\"w\\$x\\`y\\\\z\"")
        );
        assert!(env_file_text("a\nb").is_none());
    }
}
