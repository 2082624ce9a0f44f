//! `rtlab monitor --install-unit`: the systemd service that runs the monitor
//! with the same options, its RT limits, restart policy and the housekeeping
//! CPUs for everything but the measuring threads.

/// What the unit is made of.
pub struct UnitSpec<'a> {
    /// The rtlab binary, absolute.
    pub exe: &'a str,
    /// The monitor's options, `--install-unit` and `--unit-dir` left out.
    pub args: &'a [String],
    /// The database, absolute.
    pub db: &'a str,
    /// CPUs not measured: where the main thread, loads and alerts run.
    pub housekeeping: &'a [usize],
}

/// A word of ExecStart= quoted as systemd reads it, `%` and `$` escaped.
fn quote(word: &str) -> String {
    let escaped = word.replace('%', "%%").replace('$', "$$");
    if !escaped.is_empty()
        && escaped
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+".contains(c))
    {
        escaped
    } else {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    }
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
    format!(
        "[Unit]
Description=rtlab monitor: timer latency around the clock
Documentation=man:rtlab(1)
After=multi-user.target

[Service]
Type=simple
ExecStart={exec}
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
            housekeeping: &[],
        });
        assert!(!all.contains("CPUAffinity="));
        assert!(all.contains("none is left for housekeeping"));
    }

    #[test]
    fn words_with_spaces_quotes_and_percent_signs_are_quoted() {
        assert_eq!(quote("plain-1.5"), "plain-1.5");
        assert_eq!(quote("a b"), "\"a b\"");
        assert_eq!(quote("50%"), "\"50%%\"");
        assert_eq!(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
    }
}
