//! What changed between two kernel configurations: headline settings first, then
//! every symbol grouped by subsystem, with counts.

use super::{group_of, Config, Value};
use crate::format::text::table::Table;
use crate::tune::text_table;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How one symbol changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Was set (y, m or a value), is now unset or absent.
    Removed,
    /// Was unset or absent, is now set.
    Added,
    /// Was built in, is now a module.
    YesToModule,
    /// Was a module, is now built in.
    ModuleToYes,
    /// A value (number, string) changed, or a tristate moved to/from a value.
    Changed,
}

impl Change {
    fn sign(self) -> &'static str {
        match self {
            Change::Removed => "-",
            Change::Added => "+",
            Change::YesToModule | Change::ModuleToYes | Change::Changed => "~",
        }
    }
}

/// One changed symbol.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolChange {
    /// Symbol name without `CONFIG_`.
    pub name: String,
    /// What happened.
    pub change: Change,
    /// Old value (`None`: absent from the old configuration).
    pub old: Option<Value>,
    /// New value (`None`: absent from the new configuration).
    pub new: Option<Value>,
}

/// Counts of changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Options removed.
    pub removed: usize,
    /// Options added.
    pub added: usize,
    /// Values changed.
    pub changed: usize,
    /// Moved from `=y` to `=m`.
    pub y_to_m: usize,
    /// Moved from `=m` to `=y`.
    pub m_to_y: usize,
}

impl Counts {
    fn add(&mut self, c: Change) {
        match c {
            Change::Removed => self.removed += 1,
            Change::Added => self.added += 1,
            Change::Changed => self.changed += 1,
            Change::YesToModule => self.y_to_m += 1,
            Change::ModuleToYes => self.m_to_y += 1,
        }
    }

    fn total(&self) -> usize {
        self.removed + self.added + self.changed + self.y_to_m + self.m_to_y
    }
}

/// A setting that decides latency behaviour, shown before everything else.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    /// What it is (`preemption model`).
    pub setting: String,
    /// Value in the old configuration.
    pub old: String,
    /// Value in the new configuration.
    pub new: String,
}

/// The changes of one subsystem.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// Readable subsystem name.
    pub name: String,
    /// Counts in this subsystem.
    pub counts: Counts,
    /// The changed symbols, by name.
    pub symbols: Vec<SymbolChange>,
}

/// Image sizes, when given.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ImageSizes {
    /// Old image size in bytes.
    pub old_bytes: u64,
    /// New image size in bytes.
    pub new_bytes: u64,
}

/// A whole diff.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// Old configuration (path).
    pub old: String,
    /// New configuration (path).
    pub new: String,
    /// Kernel versions from the headers.
    pub old_version: Option<String>,
    /// Kernel version of the new configuration.
    pub new_version: Option<String>,
    /// Headline settings that changed.
    pub headline: Vec<Headline>,
    /// All counts.
    pub counts: Counts,
    /// Options enabled (y or m) in each configuration.
    pub enabled: (usize, usize),
    /// Changes per subsystem, largest first.
    pub groups: Vec<Group>,
    /// Image sizes, with `--image`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSizes>,
}

fn classify(old: &Value, new: &Value) -> Option<Change> {
    use Value::*;
    match (old, new) {
        (a, b) if a == b => None,
        (NotSet, _) => Some(Change::Added),
        (_, NotSet) => Some(Change::Removed),
        (Yes, Module) => Some(Change::YesToModule),
        (Module, Yes) => Some(Change::ModuleToYes),
        _ => Some(Change::Changed),
    }
}

/// Names of debug options that cost latency (see [`super::check`]).
fn debug_enabled(c: &Config) -> String {
    let on: Vec<&str> = super::check::LATENCY_DEBUG
        .iter()
        .filter(|(sym, _)| c.enabled(sym))
        .map(|(sym, _)| *sym)
        .collect();
    if on.is_empty() {
        "none".into()
    } else {
        on.join(" ")
    }
}

/// `y`, `m` or `n`.
fn tristate(v: &Value) -> String {
    match v {
        Value::NotSet => "n".into(),
        v => v.to_string(),
    }
}

fn headline(old: &Config, new: &Config) -> Vec<Headline> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unset".into());
    let rows: [(&str, String, String); 6] = [
        (
            "preemption model",
            old.preempt_model().into(),
            new.preempt_model().into(),
        ),
        ("timer frequency (HZ)", opt(old.hz()), opt(new.hz())),
        (
            "tick mode",
            opt(old.tick_mode().map(Into::into)),
            opt(new.tick_mode().map(Into::into)),
        ),
        (
            "default CPU governor",
            opt(old.default_governor()),
            opt(new.default_governor()),
        ),
        (
            "RT group scheduling",
            tristate(old.get("RT_GROUP_SCHED")),
            tristate(new.get("RT_GROUP_SCHED")),
        ),
        (
            "latency-costly debug options",
            debug_enabled(old),
            debug_enabled(new),
        ),
    ];
    rows.into_iter()
        .map(|(s, o, n)| Headline {
            setting: s.into(),
            old: o,
            new: n,
        })
        .collect()
}

/// Compares two configurations.
pub fn diff(old_name: &str, old: &Config, new_name: &str, new: &Config) -> Diff {
    let mut groups: BTreeMap<&'static str, Group> = BTreeMap::new();
    let mut counts = Counts::default();
    let names: std::collections::BTreeSet<&String> =
        old.symbols.keys().chain(new.symbols.keys()).collect();
    for name in names {
        let (o, n) = (old.symbols.get(name), new.symbols.get(name));
        let Some(change) = classify(o.unwrap_or(&Value::NotSet), n.unwrap_or(&Value::NotSet))
        else {
            continue;
        };
        counts.add(change);
        let g = group_of(name);
        let group = groups.entry(g).or_insert_with(|| Group {
            name: g.to_string(),
            counts: Counts::default(),
            symbols: Vec::new(),
        });
        group.counts.add(change);
        group.symbols.push(SymbolChange {
            name: name.clone(),
            change,
            old: o.cloned(),
            new: n.cloned(),
        });
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    groups.sort_by(|a, b| {
        b.counts
            .total()
            .cmp(&a.counts.total())
            .then(a.name.cmp(&b.name))
    });
    let enabled = |c: &Config| {
        c.symbols
            .values()
            .filter(|v| matches!(v, Value::Yes | Value::Module))
            .count()
    };
    Diff {
        old: old_name.into(),
        new: new_name.into(),
        old_version: old.version.clone(),
        new_version: new.version.clone(),
        headline: headline(old, new),
        counts,
        enabled: (enabled(old), enabled(new)),
        groups,
        image: None,
    }
}

fn value_text(v: &Option<Value>) -> String {
    match v {
        None => "absent".into(),
        Some(v) => v.to_string(),
    }
}

fn counts_text(c: &Counts) -> String {
    let mut parts = Vec::new();
    for (n, what) in [
        (c.removed, "removed"),
        (c.added, "added"),
        (c.changed, "changed"),
        (c.y_to_m, "y→m"),
        (c.m_to_y, "m→y"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if parts.is_empty() {
        "no change".into()
    } else {
        parts.join(", ")
    }
}

/// A signed size change with its percentage.
fn size_change(s: &ImageSizes) -> String {
    let delta = s.new_bytes as i128 - s.old_bytes as i128;
    let pct = if s.old_bytes == 0 {
        String::new()
    } else {
        format!(" ({:+.1}%)", delta as f64 * 100.0 / s.old_bytes as f64)
    };
    format!("{:+} bytes{pct}", delta)
}

/// The human report. `summary_only` leaves out the symbol lists.
pub fn render(d: &Diff, summary_only: bool) -> String {
    let mut out = String::new();
    let ver = |v: &Option<String>| v.as_deref().map(|v| format!(" ({v})")).unwrap_or_default();
    let _ = writeln!(out, "old: {}{}", d.old, ver(&d.old_version));
    let _ = writeln!(out, "new: {}{}", d.new, ver(&d.new_version));
    out.push('\n');
    let mut t = text_table(&["headline", "old", "new", ""]);
    for h in &d.headline {
        let mark = if h.old != h.new { "changed" } else { "" };
        t.row(vec![
            h.setting.clone(),
            h.old.clone(),
            h.new.clone(),
            mark.into(),
        ]);
    }
    out.push_str(&t.render());
    if let Some(s) = &d.image {
        let _ = writeln!(
            out,
            "\nimage size: {} → {} bytes, {}",
            s.old_bytes,
            s.new_bytes,
            size_change(s)
        );
    }
    let _ = writeln!(
        out,
        "\noptions enabled (y or m): {} → {}; changes: {}",
        d.enabled.0,
        d.enabled.1,
        counts_text(&d.counts)
    );
    if d.groups.is_empty() {
        return out;
    }
    out.push('\n');
    let mut t = Table::new(&["subsystem", "removed", "added", "changed", "y→m", "m→y"]);
    for g in &d.groups {
        let c = &g.counts;
        t.row(vec![
            g.name.clone(),
            c.removed.to_string(),
            c.added.to_string(),
            c.changed.to_string(),
            c.y_to_m.to_string(),
            c.m_to_y.to_string(),
        ]);
    }
    out.push_str(&t.render());
    if summary_only {
        return out;
    }
    for g in &d.groups {
        let _ = writeln!(out, "\n{} ({})", g.name, counts_text(&g.counts));
        for s in &g.symbols {
            let line = match s.change {
                Change::Removed => format!("CONFIG_{} (was {})", s.name, value_text(&s.old)),
                Change::Added => format!("CONFIG_{}={}", s.name, value_text(&s.new)),
                _ => format!(
                    "CONFIG_{}: {} → {}",
                    s.name,
                    value_text(&s.old),
                    value_text(&s.new)
                ),
            };
            let _ = writeln!(out, "  {} {line}", s.change.sign());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(t: &str) -> Config {
        Config::parse(t).unwrap()
    }

    #[test]
    fn classifies_every_kind_of_change() {
        let old = cfg(
            "CONFIG_SND=m\nCONFIG_BT=y\nCONFIG_HZ=250\nCONFIG_USB=y\nCONFIG_NFC=m\n\
                       # CONFIG_KVM is not set\nCONFIG_SAME=y\nCONFIG_NAME=\"a\"\n",
        );
        let new = cfg(
            "# CONFIG_SND is not set\nCONFIG_BT=m\nCONFIG_HZ=300\nCONFIG_USB=y\n\
                       CONFIG_NFC=y\nCONFIG_KVM=m\nCONFIG_SAME=y\nCONFIG_NAME=\"b\"\n",
        );
        let d = diff("a", &old, "b", &new);
        assert_eq!(
            d.counts,
            Counts {
                removed: 1,
                added: 1,
                changed: 2,
                y_to_m: 1,
                m_to_y: 1
            }
        );
        let find = |n: &str| {
            d.groups
                .iter()
                .flat_map(|g| &g.symbols)
                .find(|s| s.name == n)
                .map(|s| s.change)
        };
        assert_eq!(find("SND"), Some(Change::Removed));
        assert_eq!(find("KVM"), Some(Change::Added));
        assert_eq!(find("BT"), Some(Change::YesToModule));
        assert_eq!(find("NFC"), Some(Change::ModuleToYes));
        assert_eq!(find("HZ"), Some(Change::Changed));
        assert_eq!(find("SAME"), None);
        let hz = d
            .headline
            .iter()
            .find(|h| h.setting.contains("HZ"))
            .unwrap();
        assert_eq!((hz.old.as_str(), hz.new.as_str()), ("250", "300"));
        let text = render(&d, false);
        assert!(text.contains("- CONFIG_SND (was m)"), "{text}");
        assert!(text.contains("+ CONFIG_KVM=m"), "{text}");
        assert!(text.contains("~ CONFIG_BT: y → m"), "{text}");
    }

    #[test]
    fn absent_and_not_set_are_the_same() {
        let d = diff(
            "a",
            &cfg("# CONFIG_A is not set\nCONFIG_B=y\n"),
            "b",
            &cfg("CONFIG_B=y\n"),
        );
        assert_eq!(d.counts.total(), 0);
    }

    #[test]
    fn image_size_change_is_signed() {
        let s = ImageSizes {
            old_bytes: 1000,
            new_bytes: 900,
        };
        assert_eq!(size_change(&s), "-100 bytes (-10.0%)");
    }
}
