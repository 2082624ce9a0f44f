//! Property tests of the scenario parser: whatever a scenario file holds,
//! [`parse`] never panics, a refusal names the file and a line of it, and an
//! accepted scenario has a name and at least one step.

use super::parse;
use proptest::prelude::*;

/// One `key = value` line of a step: mostly what the latency probe takes,
/// sometimes a hostile value or an unknown key.
fn line() -> impl Strategy<Value = String> {
    let good = prop::sample::select(vec![
        "interval = \"200us\"",
        "duration = \"1s\"",
        "cpus = \"0\"",
        "priority = 90",
        "threads = 2",
        "policy = \"other\"",
        "matrix.priority = [0, 90]",
        "matrix.load = [\"none\", \"cpu:2\"]",
        "load = \"cpu:2\"",
        "repeat = 2",
        "histogram_max = \"1ms\"",
        "loops = 100",
    ]);
    let hostile = prop::sample::select(vec![
        "cpus = \"0,,1\"",
        "interval = \"0us\"",
        "interval = 5",
        "priority = -5",
        "threads = 99999999999999999999",
        "load = \"vm:1:99999T\"",
        "repeat = 0",
        "unknown = 1",
        "matrix.interval = []",
        "histogram_max = \"99999999999s\"",
        "load = { a = 1 }",
        "interval = \"\"",
    ]);
    prop_oneof![4 => good, 1 => hostile].prop_map(str::to_string)
}

fn scenario() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            4 => Just(Some("\"s\"")),
            1 => prop::option::of(prop::sample::select(vec!["\"\"", "3"])),
        ],
        prop::collection::vec(
            prop::sample::select(vec!["duration = \"2s\"", "interval = \"1ms\"", "x = 1"]),
            0..3,
        ),
        prop::collection::vec(
            (
                prop_oneof![
                    4 => Just("\"latency\""),
                    1 => prop::sample::select(vec!["\"bench.cpu\"", "\"nope\"", "3"]),
                ],
                prop::collection::vec(line(), 0..4),
            ),
            0..3,
        ),
        prop::option::of(prop::sample::select(vec![
            "a = \"5ms\"",
            "a = \"x\"",
            "a = 5",
        ])),
    )
        .prop_map(|(name, defaults, steps, req)| {
            let mut t = String::new();
            if let Some(n) = name {
                t.push_str(&format!("name = {n}\n"));
            }
            if !defaults.is_empty() {
                t.push_str("[defaults]\n");
                for l in defaults {
                    t.push_str(l);
                    t.push('\n');
                }
            }
            for (probe, step) in steps {
                t.push_str(&format!("[[step]]\nprobe = {probe}\n"));
                for l in step {
                    t.push_str(&l);
                    t.push('\n');
                }
            }
            if let Some(r) = req {
                t.push_str(&format!("[requirements]\n{r}\n"));
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_scenario_text_is_refused_with_its_line_or_gives_steps(text in scenario()) {
        match parse("s.toml", &text) {
            Ok(s) => {
                prop_assert!(!s.steps.is_empty());
                prop_assert!(s.steps.iter().all(|st| st.repeat >= 1));
            }
            Err(e) => {
                prop_assert_eq!(e.file.as_str(), "s.toml");
                prop_assert!(e.line >= 1 && e.line <= text.lines().count() + 1, "{e}");
            }
        }
    }

    #[test]
    fn any_bytes_never_panic(text in "\\PC{0,200}") {
        let _ = parse("s.toml", &text);
    }
}
