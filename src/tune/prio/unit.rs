//! systemd drop-ins for a profile (`prio unit`): CPUSchedulingPolicy/Priority,
//! LimitRTPRIO, LimitMEMLOCK and CPUAffinity for each rule's unit.

use super::profile::Profile;
use anyhow::{Context, Result};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The systemd drop-ins of a profile, one per unit: the unit's name and the
/// drop-in's text (a later rule for the same unit adds to it).
pub fn dropins(profile: &Profile) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in &profile.rule {
        let unit = r.unit_name();
        let mut text = String::new();
        if r.threads.is_some() {
            let _ = writeln!(
                text,
                "# pattern {:?} selects threads {:?}: systemd sets the whole service;\n# run `rtlab prio apply` (ExecStartPost=) for per-thread settings",
                r.pattern,
                r.threads.as_deref().unwrap_or("")
            );
        }
        let _ = writeln!(text, "[Service]");
        let _ = writeln!(text, "CPUSchedulingPolicy={}", r.policy);
        if r.policy.is_realtime() {
            let _ = writeln!(text, "CPUSchedulingPriority={}", r.priority);
            let _ = writeln!(text, "LimitRTPRIO={}", r.priority);
            let _ = writeln!(text, "LimitMEMLOCK=infinity");
        }
        if let Some(a) = &r.affinity {
            let _ = writeln!(text, "CPUAffinity={}", a.replace(',', " "));
        }
        match out.iter_mut().find(|(u, _)| *u == unit) {
            // A second rule for the same unit: systemd keeps the last value of
            // each setting, so the later rule wins, as in `prio apply`.
            Some((_, existing)) => existing.push_str(&text),
            None => out.push((unit, text)),
        }
    }
    out
}

/// The drop-in path of a unit below `dir`.
pub fn dropin_path(dir: &Path, unit: &str) -> PathBuf {
    dir.join(format!("{unit}.d")).join("50-rtlab-prio.conf")
}

/// Writes the drop-ins below `dir` and says which files it wrote, or without a
/// `dir`, gives them with a comment naming where each goes below
/// /etc/systemd/system; then what to run next.
pub fn write_or_show(profile: &Profile, dir: Option<&Path>) -> Result<String> {
    let mut out = String::new();
    for (unit, text) in dropins(profile) {
        match dir {
            Some(dir) => {
                let path = dropin_path(dir, &unit);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                crate::files::NewFile::at(&path)
                    .mode(0o644)
                    .write(text.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                out.push_str(&format!("wrote {}\n", path.display()));
            }
            None => {
                let path = dropin_path(Path::new("/etc/systemd/system"), &unit);
                out.push_str(&format!("# {}\n{text}\n", path.display()));
            }
        }
    }
    out.push_str("# then: systemctl daemon-reload, and restart the services\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_carry_the_systemd_settings() {
        let p: Profile = toml_edit::de::from_str(
            "[[rule]]\npattern = \"^a$\"\npolicy = \"rr\"\npriority = 20\naffinity = \"0,2-3\"\nunit = \"plc\"\n\
             [[rule]]\npattern = \"logger\"\npolicy = \"batch\"\n",
        )
        .unwrap();
        let u = dropins(&p);
        assert_eq!(u[0].0, "plc.service");
        assert!(u[0].1.contains("CPUSchedulingPolicy=rr\nCPUSchedulingPriority=20\nLimitRTPRIO=20\nLimitMEMLOCK=infinity\nCPUAffinity=0 2-3\n"));
        assert_eq!(u[1].0, "logger.service");
        assert_eq!(u[1].1, "[Service]\nCPUSchedulingPolicy=batch\n");
    }

    #[test]
    fn drop_ins_are_written_below_the_dir() {
        let p: Profile = toml_edit::de::from_str(
            "[[rule]]\npattern = \"^a$\"\npolicy = \"fifo\"\npriority = 5\n",
        )
        .unwrap();
        let shown = write_or_show(&p, None).unwrap();
        assert!(
            shown.starts_with("# /etc/systemd/system/a.service.d/50-rtlab-prio.conf\n[Service]\n")
        );
        let dir = tempfile::tempdir().unwrap();
        let said = write_or_show(&p, Some(dir.path())).unwrap();
        let path = dir.path().join("a.service.d/50-rtlab-prio.conf");
        assert!(said.starts_with(&format!("wrote {}\n", path.display())));
        assert!(std::fs::read_to_string(path)
            .unwrap()
            .contains("LimitRTPRIO=5\n"));
    }
}
