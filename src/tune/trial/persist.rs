//! `rtlab tune --apply`: the changes that helped, made to last, each the way
//! it belongs: sysctls in a sysctl.d file, other sysfs and procfs values in a
//! tmpfiles.d file (systemd writes them at boot), thread priorities and CPUs
//! in an `rtlab prio` profile with a systemd unit that applies it at boot, and
//! what only the kernel command line (or the application) can do, said. Every
//! file is written through [`crate::files::NewFile`] and recorded, so that
//! `rtlab tune --restore` removes it.

use super::change::Want;
use super::fix::{sysctl_key, Plan};
use super::journal::Written;
use crate::files::NewFile;
use crate::tune::prio::profile::Profile;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The sysctl file, below `/etc`.
pub const SYSCTL: &str = "sysctl.d/90-rtlab-tune.conf";
/// The tmpfiles file, below `/etc`.
pub const TMPFILES: &str = "tmpfiles.d/rtlab-tune.conf";
/// The `rtlab prio` profile, below `/etc`.
pub const PROFILE: &str = "rtlab/tune-prio.toml";
/// The unit that applies the profile at boot, below `/etc`.
pub const UNIT: &str = "systemd/system/rtlab-tune-prio.service";
/// Its link in `multi-user.target.wants` (what `systemctl enable` makes).
pub const UNIT_WANTED: &str = "systemd/system/multi-user.target.wants/rtlab-tune-prio.service";

/// How the changes that helped are made to last.
#[derive(Debug, Default)]
pub struct Lasting {
    /// The files to write: path and content.
    pub files: Vec<(PathBuf, String)>,
    /// What is left to the kernel command line or to the application, a line
    /// per candidate.
    pub boot: Vec<String>,
}

/// The files `--apply` writes for `plans` (candidate name, plan), below the
/// directory `etc` (the unit runs `rtlab`), and what is left to the kernel
/// command line or to the application.
pub fn files(etc: &Path, plans: &[(&str, &Plan)], rtlab: &Path) -> Result<Lasting> {
    let head = "# Written by rtlab tune --apply: the changes that helped on this machine.\n\
                # 'rtlab tune --restore' removes this file.\n";
    let mut sysctl = String::new();
    let mut tmpfiles = String::new();
    let mut profile = Profile::default();
    let mut boot = Vec::new();
    for (name, plan) in plans {
        let lasting = plan.wants.iter().all(|w| {
            matches!(
                w,
                Want::Value { .. } | Want::Thread { .. } | Want::Dir { .. }
            )
        });
        if !lasting {
            if let Some(b) = &plan.boot {
                boot.push(format!("{name}: {b}"));
            }
            continue;
        }
        for w in &plan.wants {
            match w {
                Want::Value { path, value, .. } => match sysctl_key(path) {
                    Some(key) => sysctl.push_str(&format!("{key} = {value}\n")),
                    None => tmpfiles.push_str(&format!("w {path} - - - - {value}\n")),
                },
                Want::Dir { path } => tmpfiles.push_str(&format!("d {path} 0755 root root -\n")),
                _ => {}
            }
        }
        profile.rule.extend(plan.rules.iter().cloned());
    }
    let mut out = Vec::new();
    if !sysctl.is_empty() {
        out.push((etc.join(SYSCTL), format!("{head}{sysctl}")));
    }
    if !tmpfiles.is_empty() {
        out.push((
            etc.join(TMPFILES),
            format!("{head}# Values of /sys and /proc written at boot (IRQ numbers can change between boots).\n{tmpfiles}"),
        ));
    }
    if !profile.rule.is_empty() {
        let toml = profile.to_toml()?;
        let prof = etc.join(PROFILE);
        out.push((prof.clone(), format!("{head}{toml}")));
        out.push((
            etc.join(UNIT),
            format!(
                "{head}[Unit]\nDescription=Thread priorities and CPUs found by rtlab tune\nAfter=multi-user.target\n\n\
                 [Service]\nType=oneshot\nExecStart={} prio apply {} --force\n\n[Install]\nWantedBy=multi-user.target\n",
                rtlab.display(),
                prof.display()
            ),
        ));
    }
    Ok(Lasting { files: out, boot })
}

/// Writes `files`, and the link that enables the unit when one is among them;
/// what was written, for the journal.
pub fn write(etc: &Path, files: &[(PathBuf, String)]) -> Result<Vec<Written>> {
    let mut done = Vec::new();
    for (path, content) in files {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        NewFile::at(path)
            .durable()
            .write(content.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        done.push(Written {
            path: path.clone(),
            content: content.clone(),
        });
    }
    if files.iter().any(|(p, _)| *p == etc.join(UNIT)) {
        let link = etc.join(UNIT_WANTED);
        let target = "../rtlab-tune-prio.service";
        std::fs::create_dir_all(link.parent().unwrap_or(Path::new(".")))?;
        match std::fs::read_link(&link) {
            Ok(t) if t == Path::new(target) => {}
            _ => {
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(target, &link)
                    .with_context(|| format!("cannot link {}", link.display()))?;
            }
        }
        done.push(Written {
            path: link,
            content: format!("-> {target}"),
        });
    }
    Ok(done)
}

/// Removes a written file when it is still what was written (a link: still a
/// link); a file changed since is left, and said.
pub fn remove(w: &Written) -> Result<String, String> {
    let shown = w.path.display();
    let ours = match w.content.strip_prefix("-> ") {
        Some(target) => std::fs::read_link(&w.path).is_ok_and(|t| t == Path::new(target)),
        None => std::fs::read_to_string(&w.path).is_ok_and(|c| c == w.content),
    };
    let present = std::fs::symlink_metadata(&w.path).is_ok();
    if !present {
        return Ok(format!("{shown} (already gone)"));
    }
    if !ours {
        return Err(format!(
            "{shown} changed since rtlab wrote it: left in place"
        ));
    }
    std::fs::remove_file(&w.path)
        .map(|()| format!("removed {shown}"))
        .map_err(|e| format!("cannot remove {shown}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::prio::profile::Rule;
    use crate::tune::trial::change::Form;
    use rtlab_engine::rt::sched::Policy;

    fn value(path: &str, v: &str) -> Want {
        Want::Value {
            path: path.into(),
            value: v.into(),
            form: Form::Text,
            optional: false,
        }
    }

    #[test]
    fn each_change_goes_where_it_belongs_and_restore_removes_what_is_still_ours() {
        let dir = tempfile::tempdir().unwrap();
        let etc = dir.path().join("etc");
        let sysctl = Plan {
            wants: vec![value("/proc/sys/kernel/timer_migration", "0")],
            ..Plan::default()
        };
        let thp = Plan {
            wants: vec![value(
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "never",
            )],
            ..Plan::default()
        };
        let dma = Plan {
            wants: vec![Want::DmaLatency { us: 0 }],
            boot: Some("keep it open".into()),
            ..Plan::default()
        };
        let app = Plan {
            rules: vec![Rule {
                pattern: "^ctrl$".into(),
                full: false,
                threads: None,
                kernel_threads: false,
                policy: Policy::Fifo,
                priority: 80,
                affinity: None,
                unit: None,
            }],
            ..Plan::default()
        };
        let plans = [
            ("timer_migration", &sysctl),
            ("thp", &thp),
            ("cpu_dma_latency", &dma),
            ("app_priority", &app),
        ];
        let Lasting { files, boot } = files(&etc, &plans, Path::new("/usr/bin/rtlab")).unwrap();
        assert_eq!(boot, ["cpu_dma_latency: keep it open"]);
        let by = |p: &str| &files.iter().find(|(f, _)| *f == etc.join(p)).unwrap().1;
        assert!(by(SYSCTL).ends_with("\nkernel.timer_migration = 0\n"));
        assert!(
            by(TMPFILES).ends_with("w /sys/kernel/mm/transparent_hugepage/enabled - - - - never\n")
        );
        assert!(by(PROFILE).contains("pattern = \"^ctrl$\""));
        assert!(by(UNIT).contains(&format!(
            "ExecStart=/usr/bin/rtlab prio apply {} --force",
            etc.join(PROFILE).display()
        )));
        let written = write(&etc, &files).unwrap();
        assert_eq!(written.len(), 5, "four files and the unit's link");
        // The profile reads back as a profile.
        let text = std::fs::read_to_string(etc.join(PROFILE)).unwrap();
        assert!(toml_edit::de::from_str::<Profile>(&text).is_ok(), "{text}");
        std::fs::write(etc.join(SYSCTL), "edited\n").unwrap();
        let said: Vec<Result<String, String>> = written.iter().map(remove).collect();
        assert!(said[0]
            .as_ref()
            .unwrap_err()
            .contains("changed since rtlab wrote it"));
        assert!(
            said[1..]
                .iter()
                .all(|r| r.as_ref().is_ok_and(|s| s.starts_with("removed "))),
            "{said:?}"
        );
        assert!(etc.join(SYSCTL).exists() && !etc.join(UNIT).exists());
        assert!(std::fs::symlink_metadata(etc.join(UNIT_WANTED)).is_err());
    }
}
