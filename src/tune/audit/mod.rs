//! `rtlab audit`: is this system ready for real-time work? One row per check with
//! the current value, the recommended one, why it matters and the exact fix.
//!
//! Everything is read below a [`SysRoot`], so a fake tree can stand in for `/`; a
//! missing file makes a check "n.a." with the reason, never an error.

mod checks;

pub(crate) use checks::{cmdline_param, format_mask, parse_mask, selected, suggested_isolation};

use crate::format::text::table::paragraph;
use crate::record::AuditSummary;
use crate::system::{self, kernel_config};
use crate::tune::kconfig::{self, Selected};
use crate::tune::text_table;
use rtlab_engine::sysinfo::{self, Fingerprint, SysRoot, Uname};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As recommended.
    Ok,
    /// Costs latency or predictability; worth changing.
    Warn,
    /// Prevents trustworthy real-time behaviour.
    Fail,
    /// Not applicable or not readable here (the reason is in `current`).
    #[serde(rename = "n.a.")]
    Na,
}

impl Status {
    /// The name shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Na => "n.a.",
        }
    }
}

/// One row of the audit.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Stable key (`preempt`, `thp`, `rlimit_rtprio`).
    pub id: &'static str,
    /// What is checked, readable.
    pub title: &'static str,
    /// The outcome.
    pub status: Status,
    /// The current value (or why it could not be read).
    pub current: String,
    /// The recommended value.
    pub recommended: String,
    /// Why it matters for latency.
    pub why: String,
    /// The exact fix: a command, sysctl, kernel parameter or config option.
    pub fix: String,
}

/// What the checks read: the tree, the fingerprint and the kernel configuration.
pub struct Input {
    /// Files below this root.
    pub root: SysRoot,
    /// The system fingerprint, read from the same root.
    pub fp: Fingerprint,
    /// The symbols of the kernel configuration the checks read
    /// ([`checks::config_symbols`]) and where it came from, when found.
    pub config: Option<(String, Selected)>,
}

impl Input {
    /// Reads the fingerprint and the kernel configuration below `root`. Below
    /// another root than `/` the kernel's names come from `/proc/sys/kernel`, so
    /// a fake tree can name its own kernel; below `/` they are uname(2)'s, so
    /// that the fingerprint is the one a run records ([`system::fingerprint`]).
    pub fn read(root: SysRoot) -> Input {
        let uname = if root.root() == std::path::Path::new("/") {
            sysinfo::uname()
        } else {
            let kernel = |f: &str| {
                root.read(&format!("/proc/sys/kernel/{f}"))
                    .unwrap_or_default()
            };
            Uname {
                hostname: kernel("hostname"),
                release: kernel("osrelease"),
                version: kernel("version"),
                machine: String::new(),
            }
        };
        // The lines of the configuration that the checks and the fingerprint
        // read, kept for the boot in /run by the runs on this machine.
        let cache = (root.root() == std::path::Path::new("/"))
            .then_some(std::path::Path::new(kernel_config::CACHE_DIR));
        let config = Self::config(&root, &uname.release, cache);
        let fp = sysinfo::collect_from(
            &root,
            uname,
            config
                .as_ref()
                .map(|(src, text, _)| (src.as_str(), text.as_str())),
        );
        Input {
            root,
            fp,
            config: config.map(|(src, _, c)| (src, c)),
        }
    }

    /// The kernel configuration below `root`: where it is, the lines the
    /// checks ([`checks::config_symbols`]) and the fingerprint
    /// ([`sysinfo::CONFIG_LINES`]) read, and the checks' symbols; through
    /// `cache` ([`kernel_config::first_reduced`]).
    fn config(
        root: &SysRoot,
        release: &str,
        cache: Option<&std::path::Path>,
    ) -> Option<(String, String, Selected)> {
        let wanted: Vec<&str> = checks::config_symbols().collect();
        let kept = format!(
            "lines {} symbols {}",
            sysinfo::CONFIG_LINES.join(" "),
            wanted.join(" ")
        );
        let keep = |line: &str| {
            sysinfo::CONFIG_LINES
                .iter()
                .any(|p| line.trim_start().starts_with(p))
                || kconfig::symbol_of(line).is_some_and(|name| wanted.contains(&name))
        };
        let accept = |text: &str| Selected::parse(text, checks::config_symbols()).ok();
        kernel_config::first_reduced(root, release, cache, (&kept, keep), accept)
            .map(|(path, text, config)| (path.display().to_string(), text, config))
    }
}

/// Runs every check.
pub fn audit(input: &Input) -> Vec<Check> {
    checks::ALL.iter().map(|check| check(input)).collect()
}

/// Summarises audit rows.
pub fn summarize(checks: &[Check]) -> AuditSummary {
    let mut s = AuditSummary::default();
    for c in checks {
        match c.status {
            Status::Ok => s.ok += 1,
            Status::Warn => {
                s.warn += 1;
                s.warned.push(c.id.to_string());
            }
            Status::Fail => {
                s.fail += 1;
                s.failed.push(c.id.to_string());
            }
            Status::Na => s.na += 1,
        }
    }
    s
}

/// The audit as text: a line about the system, a table of the checks, why and
/// how to fix each that warns or fails (every check with `verbose`), and the
/// counts.
pub fn render(input: &Input, checks: &[Check], s: &AuditSummary, verbose: bool) -> String {
    let fp = &input.fp;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} on {} ({} CPUs{})",
        if fp.kernel_release.is_empty() {
            "unknown kernel"
        } else {
            &fp.kernel_release
        },
        fp.preempt.name(),
        if fp.hostname.is_empty() {
            "?"
        } else {
            &fp.hostname
        },
        fp.cpu_count,
        match &input.config {
            Some((src, _)) => format!(", config {src}"),
            None => ", no kernel config found".into(),
        }
    );
    out.push('\n');
    let mut t = text_table(&["status", "check", "current", "recommended"]);
    for c in checks {
        t.row(vec![
            c.status.name().into(),
            c.title.into(),
            c.current.clone(),
            c.recommended.clone(),
        ]);
    }
    out.push_str(&t.render());
    let detailed: Vec<&Check> = checks
        .iter()
        .filter(|c| verbose || matches!(c.status, Status::Warn | Status::Fail))
        .collect();
    if !detailed.is_empty() {
        out.push('\n');
    }
    for c in detailed {
        let _ = writeln!(out, "{} {} [{}]", c.status.name(), c.title, c.id);
        out.push_str(&paragraph("    why: ", &c.why));
        if !c.fix.is_empty() {
            out.push_str(&paragraph("    fix: ", &c.fix));
        }
    }
    let _ = writeln!(
        out,
        "\n{} ok, {} warn, {} fail, {} n.a.",
        s.ok, s.warn, s.fail, s.na
    );
    out
}

/// The audit summary of the running system: a few hundred small file reads,
/// cheap enough for every measuring command to record in its run. Its
/// fingerprint is the process's ([`system::remember`]): the run it is read for
/// does not read the same files, and the kernel configuration, again.
pub fn summary() -> AuditSummary {
    let input = Input::read(SysRoot::default());
    system::remember(&input.fp);
    summarize(&audit(&input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::kconfig::Config;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_checks_read_their_symbols_as_the_full_parse_does() {
        for f in ["config-6.1.0-56-amd64.gz", "config-6.1.0-56-rt-amd64.gz"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/kconfig")
                .join(f);
            let text = kernel_config::read(&path).unwrap();
            let full = Config::parse(&text).unwrap();
            let some = Selected::parse(&text, checks::config_symbols()).unwrap();
            for name in checks::config_symbols() {
                assert_eq!(some.get(name), full.get(name), "{f}: CONFIG_{name}");
            }
        }
    }

    /// The lines a run reads of the kernel configuration are kept for the boot
    /// and read as the whole file reads; a new boot, a changed file or a
    /// directory others may write makes the run read the file again.
    #[test]
    fn the_configuration_lines_are_kept_for_the_boot_and_read_as_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path());
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("proc/sys/kernel/random/boot_id", "b1\n");
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kconfig/config-6.1.0-56-amd64.gz");
        let whole = kernel_config::read(&fixture).unwrap();
        let config = "boot/config-6.1.0-56-amd64";
        write(config, &whole);
        let cache = dir.path().join("run/rtlab");
        std::fs::create_dir_all(dir.path().join("run")).unwrap();
        let read = || Input::config(&root, "6.1.0-56-amd64", Some(&cache)).unwrap();

        let uncached = Input::config(&root, "6.1.0-56-amd64", None).unwrap();
        let first = read();
        assert!(cache.join("kernel-config").is_file());
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let again = read();
        assert_eq!(first, uncached);
        assert_eq!(again, first);
        assert!(
            again.1.len() * 20 < whole.len(),
            "{} of {}",
            again.1.len(),
            whole.len()
        );
        // Read as the whole file reads: every symbol, and the fingerprint.
        let all = Selected::parse(&whole, checks::config_symbols()).unwrap();
        assert_eq!(again.2, all);
        let fp = |text: &str| sysinfo::collect_from(&root, Uname::default(), Some(("c", text)));
        assert_eq!(fp(&again.1), fp(&whole));
        assert_eq!(fp(&whole).hz, Some(250));

        // What is kept is what a run reads, while boot and file are the same.
        let kept = cache.join("kernel-config");
        let tamper = || {
            let text = std::fs::read_to_string(&kept).unwrap();
            assert!(text.contains("CONFIG_HZ=250\n"), "{text}");
            std::fs::write(&kept, text.replace("CONFIG_HZ=250\n", "CONFIG_HZ=999\n")).unwrap();
        };
        tamper();
        assert!(read().1.contains("CONFIG_HZ=999\n"));
        // Another boot: read again (and kept again).
        write("proc/sys/kernel/random/boot_id", "b2\n");
        assert!(read().1.contains("CONFIG_HZ=250\n"));
        // Another file.
        tamper();
        write(config, &format!("{whole}# changed\n"));
        assert!(read().1.contains("CONFIG_HZ=250\n"));
        // A reduction made for other lines (another build's checks) is not
        // read: the key names the lines kept.
        tamper();
        let text = std::fs::read_to_string(&kept).unwrap();
        std::fs::write(&kept, text.replacen("symbols ", "symbols OTHER ", 1)).unwrap();
        assert!(read().1.contains("CONFIG_HZ=250\n"));
        // A directory others may write is neither read nor written.
        tamper();
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(read().1.contains("CONFIG_HZ=250\n"));
        assert!(std::fs::read_to_string(&kept)
            .unwrap()
            .contains("CONFIG_HZ=999\n"));
    }

    #[test]
    fn an_empty_tree_renders_with_every_check_counted() {
        let dir = tempfile::tempdir().unwrap();
        let input = Input::read(SysRoot::new(dir.path()));
        let checks = audit(&input);
        let s = summarize(&checks);
        let text = render(&input, &checks, &s, true);
        assert!(text.starts_with("unknown kernel "), "{text}");
        assert!(
            text.contains(", no kernel config found)\n\nstatus "),
            "{text}"
        );
        assert_eq!(text.matches("    why: ").count(), checks.len());
        let counts = format!(
            "\n{} ok, {} warn, {} fail, {} n.a.\n",
            s.ok, s.warn, s.fail, s.na
        );
        assert!(text.ends_with(&counts), "{text}");
        assert_eq!(s.ok + s.warn + s.fail + s.na, checks.len());
    }
}
