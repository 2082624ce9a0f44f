//! Priority profiles: a small TOML file of rules, applied with `prio apply`,
//! captured with `prio save`, turned into systemd drop-ins with `prio unit`.
//!
//! ```toml
//! [[rule]]
//! pattern = "^myapp$"      # process name (regex), or the command line with full = true
//! threads = "^rx"          # optional: only these threads
//! policy = "fifo"
//! priority = 50
//! affinity = "2-3"         # optional
//! unit = "myapp.service"   # optional, for `prio unit`
//! ```

use super::select::{compile, Selector};
use super::target::{validate, Target};
use crate::error::UsageError;
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::Policy;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Regular expression on the process name (or command line with `full`).
    pub pattern: String,
    /// Match the whole command line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full: bool,
    /// Only threads whose name matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<String>,
    /// Also kernel threads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kernel_threads: bool,
    /// Scheduling policy.
    pub policy: Policy,
    /// Priority (1-99 for fifo/rr, 0 otherwise).
    #[serde(default)]
    pub priority: i32,
    /// CPUs, kernel notation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// The systemd unit the process runs in, for `prio unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// A profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The rules, applied in order (a later rule wins for a thread two rules match).
    #[serde(default)]
    pub rule: Vec<Rule>,
}

/// A rule checked and compiled.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Which threads.
    pub selector: Selector,
    /// What they should have.
    pub target: Target,
}

impl Rule {
    /// Checks and compiles the rule; errors name the rule number (from 1).
    pub fn compile(&self, n: usize) -> Result<Compiled, String> {
        let at = |what: &str| format!("rule {n} {what}");
        let pattern = compile(&at("pattern"), &self.pattern)?;
        let threads = match &self.threads {
            Some(t) => Some(compile(&at("threads"), t)?),
            None => None,
        };
        validate(self.policy, self.priority).map_err(|e| format!("{}: {e}", at("priority")))?;
        let affinity = match &self.affinity {
            Some(a) => {
                let l = CpuList::parse(a).map_err(|e| format!("{}: {e}", at("affinity")))?;
                if l.is_empty() {
                    return Err(format!("{}: empty CPU list", at("affinity")));
                }
                Some(l)
            }
            None => None,
        };
        Ok(Compiled {
            selector: Selector {
                pattern,
                text: self.pattern.clone(),
                full: self.full,
                threads,
                kernel_threads: self.kernel_threads,
            },
            target: Target {
                policy: Some((self.policy, self.priority)),
                affinity,
            },
        })
    }

    /// The unit this rule's drop-in goes to: `unit`, else one named after the
    /// pattern's letters (`^myapp$` → `myapp.service`).
    pub fn unit_name(&self) -> String {
        if let Some(u) = &self.unit {
            return if u.contains('.') {
                u.clone()
            } else {
                format!("{u}.service")
            };
        }
        let name: String = self
            .pattern
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '@'))
            .collect();
        format!("{}.service", if name.is_empty() { "app" } else { &name })
    }
}

impl Profile {
    /// Reads and checks a profile; any problem is a usage error naming the file.
    pub fn read(path: &Path) -> Result<(Profile, Vec<Compiled>)> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read profile {}: {e}", path.display())))?;
        let profile: Profile = toml_edit::de::from_str(&text).map_err(|e| {
            UsageError(format!(
                "{} is not a valid priority profile: {}",
                path.display(),
                e.to_string().trim()
            ))
        })?;
        if profile.rule.is_empty() {
            return Err(UsageError(format!(
                "{} has no [[rule]]: add at least one (pattern, policy, priority)",
                path.display()
            ))
            .into());
        }
        let compiled = profile
            .rule
            .iter()
            .enumerate()
            .map(|(i, r)| r.compile(i + 1))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
        Ok((profile, compiled))
    }

    /// The profile as TOML, with a header comment and each rule a `[[rule]]` block
    /// (the serializer alone writes them as one inline array).
    pub fn to_toml(&self) -> Result<String> {
        let mut doc = toml_edit::ser::to_document(self)?;
        if let Some(rules) = doc.get_mut("rule") {
            *rules = std::mem::take(rules)
                .into_array_of_tables()
                .map_or_else(|inline| inline, toml_edit::Item::ArrayOfTables);
        }
        Ok(format!(
            "# rtlab priority profile: rtlab prio apply FILE [--check], rtlab prio unit FILE\n{doc}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_round_trip_and_bad_rules_are_named() {
        let p = Profile {
            rule: vec![Rule {
                pattern: "^myapp$".into(),
                full: false,
                threads: Some("^rx".into()),
                kernel_threads: false,
                policy: Policy::Fifo,
                priority: 50,
                affinity: Some("2-3".into()),
                unit: None,
            }],
        };
        let text = p.to_toml().unwrap();
        assert_eq!(
            text,
            "# rtlab priority profile: rtlab prio apply FILE [--check], rtlab prio unit FILE\n\
             [[rule]]\npattern = \"^myapp$\"\nthreads = \"^rx\"\npolicy = \"fifo\"\npriority = 50\naffinity = \"2-3\"\n"
        );
        assert_eq!(toml_edit::de::from_str::<Profile>(&text).unwrap(), p);
        assert!(p.rule[0].compile(1).is_ok());
        assert_eq!(p.rule[0].unit_name(), "myapp.service");

        let mut bad = p.rule[0].clone();
        bad.priority = 0;
        assert!(bad.compile(3).unwrap_err().starts_with("rule 3 priority"));
        bad = p.rule[0].clone();
        bad.pattern = "(".into();
        assert!(bad.compile(2).unwrap_err().starts_with("rule 2 pattern"));
        bad = p.rule[0].clone();
        bad.affinity = Some("3-1".into());
        assert!(bad.compile(1).unwrap_err().contains("affinity"));
        assert!(toml_edit::de::from_str::<Profile>(
            "[[rule]]\npattern = \"a\"\npolicy = \"fifo\"\nprio = 3\n"
        )
        .is_err());
    }
}
