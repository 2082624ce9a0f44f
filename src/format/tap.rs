//! The verdicts of one [`Outcome`] as TAP version 13 (`--tap`), which kernel
//! CI systems (KernelCI, LAVA) and TAP harnesses read: the plan `1..N`, one
//! test line per verdict, named as the JUnit test case is
//! ([`junit::case_name`]), and a YAML block with its figures. PASS is `ok`,
//! FAIL and NO DATA `not ok`, UNDECIDED `ok … # SKIP` with the reason, as
//! JUnit's `<skipped>`: neither shown to hold nor shown to fail (the exit
//! code, 4, still says so).

use super::junit;
use crate::analysis::outcome::Outcome;
use crate::analysis::verdict::{Verdict, PASS, UNDECIDED};
use std::fmt::Write as _;

/// A TAP description: `#` starts a directive and `\` escapes, so both are
/// escaped (TAP 13's rule).
fn description(text: &str) -> String {
    text.replace('\\', "\\\\").replace('#', "\\#")
}

/// A YAML scalar: a double-quoted string (JSON's quoting is YAML's).
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// The verdicts of `o` as a TAP version 13 document.
pub fn render(o: &Outcome) -> String {
    let verdicts = o.verdicts();
    let mut out = format!("TAP version 13\n1..{}\n", verdicts.len());
    for (i, v) in verdicts.iter().enumerate() {
        let status = match v.result {
            PASS | UNDECIDED => "ok",
            _ => "not ok",
        };
        let _ = write!(
            out,
            "{status} {} - {}",
            i + 1,
            description(&junit::case_name(v))
        );
        if v.result == UNDECIDED {
            let why = v.note.as_deref().unwrap_or("undecided");
            let _ = write!(out, " # SKIP UNDECIDED: {}", description(why));
        }
        out.push('\n');
        out.push_str(&block(v));
    }
    out
}

/// A verdict's YAML block, indented by two spaces.
fn block(v: &Verdict) -> String {
    let mut out = String::from("  ---\n");
    let mut line = |k: &str, val: String| {
        let _ = writeln!(out, "  {k}: {val}");
    };
    let num = |o: Option<u64>| o.map_or("~".to_string(), |x| x.to_string());
    line("verdict", quoted(v.result));
    line("message", quoted(&junit::summary(v)));
    line("requirement", quoted(&v.requirement));
    line("budget_ns", v.budget_ns.to_string());
    line("arm", quoted(&v.label));
    line("run", v.run_id.map_or("~".into(), |id| id.to_string()));
    line("max_ns", num(v.max_ns));
    line(
        "margin_ns",
        v.margin_ns.map_or("~".into(), |m| m.to_string()),
    );
    line("samples", v.samples.to_string());
    line("repeats", v.repeats.to_string());
    line("repeats_passed", v.repeats_passed.to_string());
    out.push_str("  ...\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_in_names_are_escaped() {
        assert_eq!(description(r"k #9 \ x"), r"k \#9 \\ x");
        assert_eq!(quoted("a\"b\u{1b}"), "\"a\\\"b\\u001b\"");
    }
}
