//! Which preemption model the running kernel uses.

use super::{config_value, SysRoot};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kernel's preemption model, from most to least preemptible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PreemptModel {
    /// `PREEMPT_RT`: fully preemptible, threaded interrupts, sleeping spinlocks.
    Rt,
    /// `PREEMPT` (low-latency desktop): preemptible kernel.
    Full,
    /// `PREEMPT_LAZY`: preemptible, but fair-class tasks are preempted at the tick.
    Lazy,
    /// `PREEMPT_VOLUNTARY`: preemption only at explicit points.
    Voluntary,
    /// `PREEMPT_NONE`: server, no forced preemption.
    None,
    /// Could not be determined.
    #[default]
    Unknown,
}

impl PreemptModel {
    /// The kernel's own name for the model.
    pub fn name(self) -> &'static str {
        match self {
            PreemptModel::Rt => "PREEMPT_RT",
            PreemptModel::Full => "PREEMPT",
            PreemptModel::Lazy => "PREEMPT_LAZY",
            PreemptModel::Voluntary => "PREEMPT_VOLUNTARY",
            PreemptModel::None => "PREEMPT_NONE",
            PreemptModel::Unknown => "unknown",
        }
    }

    fn from_mode(mode: &str) -> PreemptModel {
        match mode {
            "full" => PreemptModel::Full,
            "lazy" => PreemptModel::Lazy,
            "voluntary" => PreemptModel::Voluntary,
            "none" => PreemptModel::None,
            _ => PreemptModel::Unknown,
        }
    }
}

impl fmt::Display for PreemptModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The mode in parentheses of `/sys/kernel/debug/sched/preempt`
/// (`none voluntary (full) lazy`).
fn dynamic_mode(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')').map(str::to_string))
}

/// `preempt=` on the kernel command line.
fn cmdline_mode(cmdline: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("preempt=").map(str::to_string))
}

/// Detects (model, dynamic mode, source).
pub(super) fn detect(
    root: &SysRoot,
    uname_v: &str,
    config: Option<&str>,
) -> (PreemptModel, Option<String>, String) {
    let set = |k| config.and_then(|c| config_value(c, k)) == Some("y");
    if root.read("/sys/kernel/realtime").as_deref() == Some("1") {
        return (PreemptModel::Rt, None, "/sys/kernel/realtime".into());
    }
    let words: Vec<&str> = uname_v.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") || (words.contains(&"PREEMPT") && words.contains(&"RT")) {
        return (PreemptModel::Rt, None, "uname -v".into());
    }
    if set("CONFIG_PREEMPT_RT") {
        return (PreemptModel::Rt, None, "kernel config".into());
    }
    let dynamic = words.contains(&"PREEMPT_DYNAMIC") || set("CONFIG_PREEMPT_DYNAMIC");
    if dynamic {
        if let Some(mode) = root
            .read("/sys/kernel/debug/sched/preempt")
            .and_then(|t| dynamic_mode(&t))
        {
            return (
                PreemptModel::from_mode(&mode),
                Some(mode),
                "/sys/kernel/debug/sched/preempt".into(),
            );
        }
        if let Some(mode) = root.read("/proc/cmdline").and_then(|c| cmdline_mode(&c)) {
            return (
                PreemptModel::from_mode(&mode),
                Some(mode),
                "preempt= on the kernel command line".into(),
            );
        }
        // The boot default is the model chosen at build time.
        for (key, model, mode) in [
            ("CONFIG_PREEMPT", PreemptModel::Full, "full"),
            ("CONFIG_PREEMPT_LAZY", PreemptModel::Lazy, "lazy"),
            (
                "CONFIG_PREEMPT_VOLUNTARY",
                PreemptModel::Voluntary,
                "voluntary",
            ),
            ("CONFIG_PREEMPT_NONE", PreemptModel::None, "none"),
        ] {
            if set(key) {
                return (
                    model,
                    Some(mode.into()),
                    "kernel config (build default of PREEMPT_DYNAMIC)".into(),
                );
            }
        }
        return (
            PreemptModel::Unknown,
            None,
            "PREEMPT_DYNAMIC, mode unreadable (mount debugfs)".into(),
        );
    }
    if words.contains(&"PREEMPT") {
        return (PreemptModel::Full, None, "uname -v".into());
    }
    for (key, model) in [
        ("CONFIG_PREEMPT", PreemptModel::Full),
        ("CONFIG_PREEMPT_LAZY", PreemptModel::Lazy),
        ("CONFIG_PREEMPT_VOLUNTARY", PreemptModel::Voluntary),
        ("CONFIG_PREEMPT_NONE", PreemptModel::None),
    ] {
        if set(key) {
            return (model, None, "kernel config".into());
        }
    }
    if config.is_some() {
        // A config with none of the options set predates the choice: no preemption.
        return (PreemptModel::None, None, "kernel config".into());
    }
    (PreemptModel::Unknown, None, "no kernel config found".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_root() -> SysRoot {
        SysRoot::new("/nonexistent-rtlab-root")
    }

    #[test]
    fn reads_the_mode_in_parentheses() {
        assert_eq!(
            dynamic_mode("none voluntary (full) lazy"),
            Some("full".into())
        );
        assert_eq!(dynamic_mode("none voluntary full"), None);
    }

    #[test]
    fn uname_strings_of_real_kernels() {
        let r = empty_root();
        assert_eq!(
            detect(&r, "#1 SMP PREEMPT_RT Thu", None).0,
            PreemptModel::Rt
        );
        assert_eq!(
            detect(&r, "#1 SMP PREEMPT RT Tue Jun 9", None).0,
            PreemptModel::Rt
        );
        assert_eq!(detect(&r, "#1 SMP PREEMPT Tue", None).0, PreemptModel::Full);
        assert_eq!(
            detect(&r, "#1 SMP Debian 6.1.0", None).0,
            PreemptModel::Unknown
        );
        assert_eq!(
            detect(&r, "#1 SMP Debian", Some("CONFIG_PREEMPT_VOLUNTARY=y\n")).0,
            PreemptModel::Voluntary
        );
    }

    #[test]
    fn dynamic_kernels_fall_back_to_the_build_default() {
        let r = empty_root();
        let (m, mode, _) = detect(
            &r,
            "#1 SMP PREEMPT_DYNAMIC",
            Some("CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_VOLUNTARY=y\n"),
        );
        assert_eq!(
            (m, mode.as_deref()),
            (PreemptModel::Voluntary, Some("voluntary"))
        );
        let (m, _, src) = detect(&r, "#1 SMP PREEMPT_DYNAMIC", None);
        assert_eq!(m, PreemptModel::Unknown);
        assert!(src.contains("debugfs"));
    }
}
