//! The verdicts of one [`Outcome`] as JUnit XML (`--junit FILE`), the report
//! GitLab, Jenkins and GitHub Actions show as test results: one `<testsuite>`
//! per comparison (a campaign step, or a kind of run), one `<testcase>` per
//! verdict (a requirement judged on one arm). PASS is a passed test case,
//! FAIL and NO DATA a `<failure>` (both fail the gate), UNDECIDED a
//! `<skipped>` whose message says why: neither shown to hold nor shown to
//! fail. The file follows the JUnit schema CI systems read (Jenkins'
//! `junit-10.xsd`); XML escaping is quick-xml's, and stored strings (labels)
//! reach it through [`printable`], so no control character can make the
//! file unreadable.

use crate::analysis::outcome::Outcome;
use crate::analysis::verdict::{Verdict, FAIL, NO_DATA, PASS, UNDECIDED};
use crate::format::text::table::printable;
use crate::format::text::verdict::signed;
use crate::units::{exact, Human};
use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;
use std::io;

/// Seconds of `ns`, as JUnit's `time` attributes want them (`1.500000`): a
/// test case's time is the time its verdict observed (a suite has none: its
/// cases may observe one run against several requirements).
fn seconds(ns: u64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
}

/// A test case's name: the requirement as `--require` writes it and the arm
/// judged (`gyro=1ms on rt-board (run 9)`).
pub fn case_name(v: &Verdict) -> String {
    let run = match v.run_id {
        Some(id) => format!(" (run {id})"),
        None => String::new(),
    };
    format!(
        "{}={} on {}{run}",
        v.requirement,
        exact(v.budget_ns),
        printable(&v.label)
    )
}

/// What a verdict observed, in one line: the result, the worst maximum
/// against the budget and the repeats it rests on, and its note.
pub fn summary(v: &Verdict) -> String {
    let mut out = v.result.to_string();
    if let (Some(max), Some(margin)) = (v.max_ns, v.margin_ns) {
        out.push_str(&format!(
            ": max {} against a budget of {} (margin {})",
            Human(max),
            Human(v.budget_ns),
            signed(margin)
        ));
    }
    if v.repeats > 1 {
        out.push_str(&format!(
            ", within it in {} of {} repeats",
            v.repeats_passed, v.repeats
        ));
    }
    if let Some(note) = &v.note {
        out.push_str("; ");
        out.push_str(&printable(note));
    }
    out
}

/// Every figure of a verdict, a `key: value` line each (a test case's
/// `<system-out>`).
fn details(v: &Verdict) -> String {
    let opt = |o: Option<u64>| o.map_or("-".to_string(), |x| x.to_string());
    let mut lines = vec![
        format!("verdict: {}", v.result),
        format!("requirement: {}", v.requirement),
        format!("budget_ns: {}", v.budget_ns),
        format!("arm: {}", printable(&v.label)),
        format!("run: {}", v.run_id.map_or("-".into(), |id| id.to_string())),
        format!("max_ns: {}", opt(v.max_ns)),
        format!(
            "margin_ns: {}",
            v.margin_ns.map_or("-".into(), |m| m.to_string())
        ),
        format!("misses: {}", opt(v.misses)),
        format!("overruns: {}", opt(v.overruns)),
        format!("samples: {}", v.samples),
        format!(
            "repeats: {} of {} within the budget",
            v.repeats_passed, v.repeats
        ),
    ];
    if let Some(note) = &v.note {
        lines.push(format!("note: {}", printable(note)));
    }
    lines.join("\n") + "\n"
}

/// Counts of one set of verdicts: tests, failures (FAIL and NO DATA),
/// skipped (UNDECIDED).
fn counts<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> (usize, usize, usize) {
    verdicts.fold((0, 0, 0), |(t, f, s), v| {
        (
            t + 1,
            f + usize::from(v.result == FAIL || v.result == NO_DATA),
            s + usize::from(v.result == UNDECIDED),
        )
    })
}

/// The verdicts of `o` as a JUnit XML document named `name` (the command
/// that judged them).
pub fn render(o: &Outcome, name: &str) -> Result<String> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let all = o.verdicts();
    let (tests, failures, _) = counts(all.iter());
    let (tests, failures) = (tests.to_string(), failures.to_string());
    w.create_element("testsuites")
        .with_attribute(("name", printable(name).as_ref()))
        .with_attribute(("tests", tests.as_str()))
        .with_attribute(("failures", failures.as_str()))
        .with_attribute(("errors", "0"))
        .write_inner_content(|w| {
            for p in &o.parts {
                suite(w, o, &p.title, &p.verdicts)?;
            }
            Ok(())
        })?;
    let mut xml = String::from_utf8(w.into_inner())?;
    xml.push('\n');
    Ok(xml)
}

/// One comparison's verdicts as a `<testsuite>`, the requirements and the
/// noise threshold as its properties.
fn suite(w: &mut Writer<Vec<u8>>, o: &Outcome, title: &str, vs: &[Verdict]) -> io::Result<()> {
    let (tests, failures, skipped) = counts(vs.iter());
    let title = printable(title);
    w.create_element("testsuite")
        .with_attribute(("name", title.as_ref()))
        .with_attribute(("tests", tests.to_string().as_str()))
        .with_attribute(("failures", failures.to_string().as_str()))
        .with_attribute(("errors", "0"))
        .with_attribute(("skipped", skipped.to_string().as_str()))
        .write_inner_content(|w| {
            w.create_element("properties").write_inner_content(|w| {
                let noise = format!("{}%", o.noise * 100.0);
                property(w, "noise", &noise)?;
                for r in &o.requirements {
                    property(w, &format!("requirement.{}", r.name), &exact(r.budget_ns))?;
                }
                Ok(())
            })?;
            for v in vs {
                case(w, &title, v)?;
            }
            Ok(())
        })?;
    Ok(())
}

/// A `<property name= value=/>`.
fn property(w: &mut Writer<Vec<u8>>, name: &str, value: &str) -> io::Result<()> {
    w.create_element("property")
        .with_attribute(("name", printable(name).as_ref()))
        .with_attribute(("value", value))
        .write_empty()?;
    Ok(())
}

/// One verdict as a `<testcase>`: a `<failure>` for FAIL and NO DATA, a
/// `<skipped>` for UNDECIDED, and every figure in `<system-out>`.
fn case(w: &mut Writer<Vec<u8>>, class: &str, v: &Verdict) -> io::Result<()> {
    w.create_element("testcase")
        .with_attribute(("name", case_name(v).as_str()))
        .with_attribute(("classname", class))
        .with_attribute(("time", seconds(v.duration_ns).as_str()))
        .write_inner_content(|w| {
            let message = summary(v);
            let outcome = match v.result {
                PASS => None,
                UNDECIDED => Some("skipped"),
                _ => Some("failure"),
            };
            if let Some(tag) = outcome {
                w.create_element(tag)
                    .with_attribute(("type", v.result))
                    .with_attribute(("message", message.as_str()))
                    .write_empty()?;
            }
            w.create_element("system-out")
                .write_text_content(BytesText::new(&details(v)))?;
            Ok(())
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::arms::Arm;
    use crate::analysis::fixture::windowed_run;
    use crate::analysis::interval::DEFAULT_NOISE;
    use crate::analysis::outcome::{analyse, Pairing};
    use crate::analysis::verdict::parse_requirement;

    #[test]
    fn each_verdict_is_one_case_and_stored_names_stay_well_formed() {
        let samples: Vec<u64> = (0..2_000).map(|i| 20_000 + (i * 37) % 4_000).collect();
        let mut hostile = windowed_run("a<b>&\"c\"\u{1b}[2J", &samples);
        hostile.id = Some(7);
        let pairings = vec![Pairing {
            title: "latency".into(),
            arms: vec![Arm::of_run(hostile)],
            baseline: 0,
            by: None,
        }];
        let reqs = parse_requirement("tight=20us").unwrap();
        let reqs = [reqs, parse_requirement("loose=1ms").unwrap()].concat();
        let o = analyse(pairings, &reqs, DEFAULT_NOISE);
        let xml = render(&o, "rtlab compare 7").unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 2, "{xml}");
        let name = cases[0].attribute("name").unwrap();
        assert_eq!(name, "tight=20us on a<b>&\"c\"\\x1b[2J (run 7)");
        assert!(cases[0].children().any(|c| c.has_tag_name("failure")));
        assert!(!cases[1].children().any(|c| c.has_tag_name("failure")));
        let root = doc.root_element();
        assert_eq!(root.attribute("tests"), Some("2"));
        assert_eq!(root.attribute("failures"), Some("1"));
    }
}
