//! The option scanner both tools' parsers use: long options (`--cpu 2`,
//! `--cpu=2`), short ones (`-c 2`, `-c2`) and bundled short flags (`-qv`), each
//! looked up in the tool's table. A value is the next argument whatever it looks
//! like (`-c -1`), as getopt takes it.

/// One option of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    /// The long name, without `--`.
    pub long: &'static str,
    /// The short letter, if any.
    pub short: Option<char>,
    /// Whether it takes a value.
    pub value: bool,
}

/// An option with a value.
pub const fn val(long: &'static str, short: Option<char>) -> Opt {
    Opt {
        long,
        short,
        value: true,
    }
}

/// An option without a value.
pub const fn flag(long: &'static str, short: Option<char>) -> Opt {
    Opt {
        long,
        short,
        value: false,
    }
}

/// Why the arguments could not be scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// An option not in the table, as written (`--matrix`, `-X`).
    Unknown(String),
    /// An option that needs a value came last.
    MissingValue(String),
    /// `--flag=value` for an option without one.
    UnexpectedValue(String),
    /// An argument that is not an option.
    Stray(String),
}

/// The options of `args` in order, by long name (or the short letter as a
/// string for an option that has no long name), with their values.
pub fn scan(
    table: &[Opt],
    args: &[String],
) -> Result<Vec<(&'static str, Option<String>)>, ScanError> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let opt = table
                .iter()
                .find(|o| o.long == name && !name.is_empty())
                .ok_or_else(|| ScanError::Unknown(arg.clone()))?;
            let value = match (opt.value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| ScanError::MissingValue(format!("--{name}")))?,
                ),
                (false, Some(_)) => return Err(ScanError::UnexpectedValue(format!("--{name}"))),
                (false, None) => None,
            };
            out.push((opt.long, value));
        } else if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in shorts.char_indices() {
                let opt = table
                    .iter()
                    .find(|o| o.short == Some(c))
                    .ok_or_else(|| ScanError::Unknown(format!("-{c}")))?;
                if !opt.value {
                    out.push((opt.long, None));
                    continue;
                }
                let rest = &shorts[i + c.len_utf8()..];
                let value = if rest.is_empty() {
                    it.next()
                        .cloned()
                        .ok_or_else(|| ScanError::MissingValue(format!("-{c}")))?
                } else {
                    rest.to_string()
                };
                out.push((opt.long, Some(value)));
                break;
            }
        } else {
            return Err(ScanError::Stray(arg.clone()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Opt] = &[
        val("cpu", Some('c')),
        flag("quiet", Some('q')),
        flag("verbose", Some('v')),
        val("timeout", Some('t')),
        flag("vm-keep", None),
    ];

    fn s(args: &[&str]) -> Result<Vec<(&'static str, Option<String>)>, ScanError> {
        scan(T, &args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    fn v(x: &str) -> Option<String> {
        Some(x.into())
    }

    #[test]
    fn every_spelling_of_a_value() {
        for args in [&["--cpu", "2"][..], &["--cpu=2"], &["-c", "2"], &["-c2"]] {
            assert_eq!(s(args).unwrap(), vec![("cpu", v("2"))], "{args:?}");
        }
        assert_eq!(s(&["-c", "-1"]).unwrap(), vec![("cpu", v("-1"))]);
        assert_eq!(
            s(&["-qvc", "3", "--vm-keep"]).unwrap(),
            vec![
                ("quiet", None),
                ("verbose", None),
                ("cpu", v("3")),
                ("vm-keep", None)
            ]
        );
        assert_eq!(
            s(&["-qt10s"]).unwrap(),
            vec![("quiet", None), ("timeout", v("10s"))]
        );
    }

    #[test]
    fn refusals() {
        assert_eq!(
            s(&["--matrix", "2"]),
            Err(ScanError::Unknown("--matrix".into()))
        );
        assert_eq!(s(&["-X"]), Err(ScanError::Unknown("-X".into())));
        assert_eq!(s(&["-qX"]), Err(ScanError::Unknown("-X".into())));
        assert_eq!(s(&["--cpu"]), Err(ScanError::MissingValue("--cpu".into())));
        assert_eq!(s(&["-c"]), Err(ScanError::MissingValue("-c".into())));
        assert_eq!(
            s(&["--quiet=1"]),
            Err(ScanError::UnexpectedValue("--quiet".into()))
        );
        assert_eq!(s(&["2"]), Err(ScanError::Stray("2".into())));
        assert_eq!(s(&["-"]), Err(ScanError::Stray("-".into())));
        assert_eq!(s(&["--"]), Err(ScanError::Unknown("--".into())));
    }
}
