//! Kernel configurations (`.config`, `/proc/config.gz`): parsing, diffs grouped by
//! subsystem, and what in a configuration helps or hurts latency.

pub mod check;
pub mod diff;
mod groups;

pub use groups::group_of;

use crate::error::UsageError;
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The value of one symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "value")]
pub enum Value {
    /// `=y`: built in.
    Yes,
    /// `=m`: a module.
    Module,
    /// `# CONFIG_X is not set`.
    NotSet,
    /// A quoted string (quotes removed, escapes kept as written).
    Str(String),
    /// A number, decimal or hex, as written.
    Num(String),
}

impl Value {
    fn parse(raw: &str) -> Value {
        match raw {
            "y" => Value::Yes,
            "m" => Value::Module,
            "n" => Value::NotSet,
            _ => match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                Some(s) => Value::Str(s.to_string()),
                None => Value::Num(raw.to_string()),
            },
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Yes => f.write_str("y"),
            Value::Module => f.write_str("m"),
            Value::NotSet => f.write_str("is not set"),
            Value::Str(s) => write!(f, "\"{s}\""),
            Value::Num(n) => f.write_str(n),
        }
    }
}

/// A parsed kernel configuration: symbol (without `CONFIG_`) → value.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The symbols, sorted by name.
    pub symbols: BTreeMap<String, Value>,
    /// The kernel version from the header comment (`# Linux/x86 6.12.1 Kernel
    /// Configuration`), when present.
    pub version: Option<String>,
    /// Symbols given more than once (the last value counts, as in Kconfig).
    pub duplicates: Vec<String>,
}

impl Config {
    /// Parses the text of a configuration. Comments other than `# CONFIG_X is not
    /// set`, blank lines and CRLF line ends are accepted; any other line is refused
    /// with its number, so that a wrong file is never read as an empty
    /// configuration.
    pub fn parse(text: &str) -> Result<Config, String> {
        let mut c = Config::default();
        for line in lines(text) {
            let (name, value) = match line? {
                Line::Symbol(name, raw) => (name, raw.map_or(Value::NotSet, Value::parse)),
                Line::Comment(comment) => {
                    if c.version.is_none() {
                        c.version = header_version(comment);
                    }
                    continue;
                }
            };
            if c.symbols.insert(name.to_string(), value).is_some() {
                c.duplicates.push(name.to_string());
            }
        }
        if c.symbols.is_empty() {
            return Err("it contains no CONFIG_ symbol".into());
        }
        Ok(c)
    }

    /// The running kernel's configuration and where it came from
    /// (/proc/config.gz, then /boot/config-$(uname -r)); none readable is a usage
    /// error saying what to give instead.
    pub fn running() -> Result<(String, Config)> {
        let (src, text) = crate::system::kernel_config::running().ok_or_else(|| {
            UsageError(
                "the running kernel's configuration was not found (no /proc/config.gz, \
                 /boot/config-$(uname -r)); give a .config file, or load the configs \
                 module (modprobe configs)"
                    .into(),
            )
        })?;
        let c = Config::parse(&text)
            .map_err(|why| UsageError(format!("{src} is not a kernel configuration: {why}")))?;
        Ok((src, c))
    }

    /// Reads a configuration file, plain or gzip-compressed; a file that is not a
    /// configuration is a usage error naming the file and the bad line.
    pub fn read(path: &Path) -> Result<Config> {
        let text = crate::system::kernel_config::read(path)
            .map_err(|e| UsageError(format!("{e:#} (give a kernel .config or /proc/config.gz)")))?;
        Config::parse(&text).map_err(|why| {
            UsageError(format!(
                "{} is not a kernel configuration: {why} (give a kernel .config or /proc/config.gz)",
                path.display()
            ))
            .into()
        })
    }

    /// The value of a symbol (without `CONFIG_`); absent symbols are not set.
    pub fn get(&self, name: &str) -> &Value {
        self.symbols.get(name).unwrap_or(&Value::NotSet)
    }

    /// Whether a symbol is `=y` or `=m`.
    pub fn enabled(&self, name: &str) -> bool {
        matches!(self.get(name), Value::Yes | Value::Module)
    }

    /// The preemption model chosen in Kconfig's "Preemption Model" menu, as its
    /// symbol (`PREEMPT_RT`, `PREEMPT_LAZY`, `PREEMPT`, `PREEMPT_VOLUNTARY`,
    /// `PREEMPT_NONE`), most preemptible first.
    pub fn preempt_choice(&self) -> Option<&'static str> {
        [
            "PREEMPT_RT",
            "PREEMPT_LAZY",
            "PREEMPT",
            "PREEMPT_VOLUNTARY",
            "PREEMPT_NONE",
        ]
        .into_iter()
        .find(|sym| self.enabled(sym))
    }

    /// The preemption model, readable; for PREEMPT_DYNAMIC kernels with the boot
    /// default (which follows the Kconfig choice).
    pub fn preempt_model(&self) -> &'static str {
        let choice = self.preempt_choice();
        if !self.enabled("PREEMPT_DYNAMIC") || choice == Some("PREEMPT_RT") {
            return choice.unwrap_or("unknown");
        }
        match choice {
            Some("PREEMPT") => "PREEMPT_DYNAMIC (default full)",
            Some("PREEMPT_VOLUNTARY") => "PREEMPT_DYNAMIC (default voluntary)",
            Some("PREEMPT_NONE") => "PREEMPT_DYNAMIC (default none)",
            Some("PREEMPT_LAZY") => "PREEMPT_DYNAMIC (default lazy)",
            _ => "PREEMPT_DYNAMIC",
        }
    }

    /// `CONFIG_HZ`, as written.
    pub fn hz(&self) -> Option<String> {
        match self.get("HZ") {
            Value::Num(n) => Some(n.clone()),
            _ => None,
        }
    }

    /// The default CPU frequency governor.
    pub fn default_governor(&self) -> Option<String> {
        self.symbols
            .iter()
            .find(|(k, v)| k.starts_with("CPU_FREQ_DEFAULT_GOV_") && **v == Value::Yes)
            .map(|(k, _)| k["CPU_FREQ_DEFAULT_GOV_".len()..].to_ascii_lowercase())
    }

    /// The timer tick mode: `HZ_PERIODIC`, `NO_HZ_IDLE` or `NO_HZ_FULL`.
    pub fn tick_mode(&self) -> Option<&'static str> {
        ["NO_HZ_FULL", "NO_HZ_IDLE", "HZ_PERIODIC"]
            .into_iter()
            .find(|s| self.enabled(s))
    }
}

/// The values of a few symbols of a configuration, read in one pass over its text
/// without the map of every symbol that [`Config::parse`] builds: what the audit
/// needs, read at the start of every run for its summary. The text is accepted or
/// refused exactly as by [`Config::parse`], and the values are the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    /// The symbols asked for, sorted by [`by_length`].
    wanted: Vec<&'static str>,
    /// The value of each wanted symbol, in the order of `wanted`.
    values: Vec<Value>,
}

impl Selected {
    /// Reads the symbols `wanted` (without `CONFIG_`) from the text of a
    /// configuration; absent ones are not set.
    pub fn parse(
        text: &str,
        wanted: impl IntoIterator<Item = &'static str>,
    ) -> Result<Selected, String> {
        let mut wanted: Vec<&'static str> = wanted.into_iter().collect();
        wanted.sort_unstable_by_key(|w| by_length(w));
        wanted.dedup();
        let mut values = vec![Value::NotSet; wanted.len()];
        let mut any = false;
        for line in lines(text) {
            let Line::Symbol(name, raw) = line? else {
                continue;
            };
            any = true;
            if let Ok(at) = wanted.binary_search_by_key(&by_length(name), |w| by_length(w)) {
                values[at] = raw.map_or(Value::NotSet, Value::parse);
            }
        }
        if !any {
            return Err("it contains no CONFIG_ symbol".into());
        }
        Ok(Selected { wanted, values })
    }

    /// The value of a wanted symbol (without `CONFIG_`).
    ///
    /// # Panics
    /// If `name` was not asked for: its value was not read.
    pub fn get(&self, name: &str) -> &Value {
        let at = self
            .wanted
            .binary_search_by_key(&by_length(name), |w| by_length(w));
        &self.values[at.unwrap_or_else(|_| panic!("CONFIG_{name} was not read"))]
    }

    /// Whether a wanted symbol is `=y` or `=m`.
    pub fn enabled(&self, name: &str) -> bool {
        matches!(self.get(name), Value::Yes | Value::Module)
    }
}

/// The symbol (without `CONFIG_`) that one line of a configuration sets or
/// says is not set, if it is such a line.
pub fn symbol_of(line: &str) -> Option<&str> {
    match line_of(line.trim_ascii(), 0) {
        Ok(Line::Symbol(name, _)) => Some(name),
        _ => None,
    }
}

/// The order [`Selected`] keeps its symbols in: by length, then by name. Each of
/// a configuration's thousands of names is looked up, and most differ in length
/// from every wanted one: told apart without comparing their bytes.
fn by_length(name: &str) -> (usize, &str) {
    (name.len(), name)
}

/// One line of a configuration that is not blank.
enum Line<'a> {
    /// A symbol (without `CONFIG_`) and its value as written, `None` for `# CONFIG_X
    /// is not set`.
    Symbol(&'a str, Option<&'a str>),
    /// Any other comment, without its `#`.
    Comment(&'a str),
}

/// The lines of a configuration that are not blank, each a symbol or a comment;
/// any other line is an error naming it. CRLF line ends are accepted. Spaces
/// around a line, a comment and a value are ASCII whitespace. Every line of the
/// text is looked at on each read (a wrong file is refused, never read as an
/// empty configuration) and a run reads it as it starts, so the text is scanned
/// as bytes.
fn lines(text: &str) -> impl Iterator<Item = Result<Line<'_>, String>> {
    let mut rest = text;
    let mut number = 0;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
            let raw = &rest[..end];
            rest = rest.get(end + 1..).unwrap_or_default();
            number += 1;
            let line = raw.trim_ascii();
            if !line.is_empty() {
                return Some(line_of(line, number));
            }
        }
        None
    })
}

/// One line that is not blank, trimmed, numbered from 1.
fn line_of(line: &str, number: usize) -> Result<Line<'_>, String> {
    if let Some(comment) = line.strip_prefix('#') {
        let comment = comment.trim_ascii();
        return Ok(
            match comment
                .strip_prefix("CONFIG_")
                .and_then(|r| r.strip_suffix(" is not set"))
            {
                Some(name) if valid_name(name) => Line::Symbol(name, None),
                _ => Line::Comment(comment),
            },
        );
    }
    // `CONFIG_`, a name of letters, digits and `_`, then `=`.
    let symbol = line.strip_prefix("CONFIG_").and_then(|body| {
        let at = body
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
        (at > 0 && body.as_bytes()[at] == b'=')
            .then(|| Line::Symbol(&body[..at], Some(body[at + 1..].trim_ascii())))
    });
    symbol.ok_or_else(|| {
        let shown: String = line.chars().take(60).collect();
        format!("line {number}: '{shown}' is neither CONFIG_NAME=value nor a comment")
    })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `Linux/x86 6.12.1 Kernel Configuration` → `6.12.1`.
fn header_version(comment: &str) -> Option<String> {
    let rest = comment.strip_suffix("Kernel Configuration")?.trim();
    let (_, version) = rest.split_once(' ')?;
    Some(version.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_all_value_kinds_and_edge_cases() {
        let text = "#\r\n# Linux/arm 4.19.127 Kernel Configuration\r\n#\r\n\
            CONFIG_SND=m\r\n# CONFIG_BT is not set\r\nCONFIG_LOCALVERSION=\"-v7 rt\"\r\n\
            CONFIG_PHYS_OFFSET=0x80000000\r\nCONFIG_HZ=300\r\nCONFIG_HZ=250\r\n\r\n\
            # some other comment\r\nCONFIG_EMPTY=\"\"\r\n";
        let c = Config::parse(text).unwrap();
        assert_eq!(c.version.as_deref(), Some("4.19.127"));
        assert_eq!(c.get("SND"), &Value::Module);
        assert_eq!(c.get("BT"), &Value::NotSet);
        assert!(c.symbols.contains_key("BT"));
        assert_eq!(c.get("LOCALVERSION"), &Value::Str("-v7 rt".into()));
        assert_eq!(c.get("PHYS_OFFSET"), &Value::Num("0x80000000".into()));
        assert_eq!(c.get("EMPTY"), &Value::Str(String::new()));
        assert_eq!(c.hz().as_deref(), Some("250"), "the last duplicate wins");
        assert_eq!(c.duplicates, vec!["HZ"]);
        assert_eq!(c.get("NEVER_MENTIONED"), &Value::NotSet);
    }

    #[test]
    fn refuses_what_is_not_a_configuration() {
        let e = Config::parse("hello world\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let e = Config::parse("CONFIG_A=y\n[Unit]\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("[Unit]"), "{e}");
        let e = Config::parse("# only comments\n\n").unwrap_err();
        assert!(e.contains("no CONFIG_"), "{e}");
        assert!(Config::parse("CONFIG_BAD NAME=y\n").is_err());
    }

    #[test]
    fn headline_values() {
        let c = Config::parse(
            "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT_RT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n\
             CONFIG_HZ=250\nCONFIG_CPU_FREQ_DEFAULT_GOV_SCHEDUTIL=y\nCONFIG_NO_HZ_IDLE=y\n",
        )
        .unwrap();
        assert_eq!(c.preempt_model(), "PREEMPT_DYNAMIC (default voluntary)");
        assert_eq!(c.default_governor().as_deref(), Some("schedutil"));
        assert_eq!(c.tick_mode(), Some("NO_HZ_IDLE"));
        let rt = Config::parse("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_LAZY=y\n").unwrap();
        assert_eq!(rt.preempt_model(), "PREEMPT_RT");
    }

    /// Every symbol of `config` that `Config::parse` finds, asked of `Selected`.
    fn selected_agrees(text: &str) {
        let full = Config::parse(text).unwrap();
        let names: Vec<&'static str> = full
            .symbols
            .keys()
            .map(|k| &*k.clone().leak())
            .chain(["NEVER_MENTIONED"])
            .collect();
        let some = Selected::parse(text, names.iter().copied()).unwrap();
        for name in names {
            assert_eq!(some.get(name), full.get(name), "CONFIG_{name}");
        }
    }

    #[test]
    fn selected_symbols_read_as_the_full_parse_reads_them() {
        for f in ["config-6.1.0-56-amd64.gz", "config-6.1.0-56-rt-amd64.gz"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/kconfig")
                .join(f);
            let text = crate::system::kernel_config::read(&path).unwrap();
            selected_agrees(&text);
        }
        selected_agrees(
            "# Linux/arm 4.19.127 Kernel Configuration\r\nCONFIG_SND=m\r\n# CONFIG_BT is not set\r\n\
             CONFIG_LOCALVERSION=\"-v7 rt\"\r\nCONFIG_HZ=300\r\nCONFIG_HZ=250\r\n\r\n# other\r\n",
        );
    }

    #[test]
    fn selected_refuses_what_the_full_parse_refuses() {
        for bad in [
            "hello world\n",
            "CONFIG_A=y\n[Unit]\n",
            "# only comments\n\n",
            "CONFIG_BAD NAME=y\n",
        ] {
            assert_eq!(
                Selected::parse(bad, ["A"]).unwrap_err(),
                Config::parse(bad).unwrap_err(),
                "{bad:?}"
            );
        }
        let only_unset = Selected::parse("# CONFIG_A is not set\n", ["A", "B"]).unwrap();
        assert!(!only_unset.enabled("A") && !only_unset.enabled("B"));
    }

    proptest! {
        #[test]
        fn written_symbols_parse_back(
            entries in proptest::collection::btree_map(
                "[A-Z][A-Z0-9_]{0,20}",
                prop_oneof![
                    Just(Value::Yes),
                    Just(Value::Module),
                    Just(Value::NotSet),
                    "[a-z0-9 ./-]{0,12}".prop_map(Value::Str),
                    (0u64..1 << 40).prop_map(|n| Value::Num(n.to_string())),
                    (0u64..1 << 40).prop_map(|n| Value::Num(format!("0x{n:x}"))),
                ],
                1..30,
            )
        ) {
            let text: String = entries
                .iter()
                .map(|(k, v)| match v {
                    Value::NotSet => format!("# CONFIG_{k} is not set\n"),
                    v => format!("CONFIG_{k}={v}\n"),
                })
                .collect();
            let c = Config::parse(&text).unwrap();
            prop_assert_eq!(c.symbols, entries);
        }
    }
}
