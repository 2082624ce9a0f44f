use super::topics::{bare_unit, help_of, options, tree, visible};
use super::*;
use crate::cli::Cli;
use clap::{ArgAction, Parser};

/// Whether `a` takes no value (a switch, `--help`): it has nothing to default.
fn is_switch(a: &clap::Arg) -> bool {
    matches!(
        a.get_action(),
        ArgAction::SetTrue
            | ArgAction::SetFalse
            | ArgAction::Count
            | ArgAction::Help
            | ArgAction::HelpShort
            | ArgAction::HelpLong
            | ArgAction::Version
    )
}

fn name(path: &str, a: &clap::Arg) -> String {
    match a.get_long() {
        Some(l) => format!("rtlab {path} --{l}"),
        None => format!("rtlab {path} <{}>", a.get_id()),
    }
}

#[test]
fn every_option_shows_its_default_or_says_why_there_is_none() {
    let all = options();
    assert!(all.len() > 150, "{}", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|(_, a)| !is_switch(a) && !a.is_required_set())
        .filter(|(_, a)| a.get_default_values().is_empty() && !help_of(a).contains("[default:"))
        .map(|(path, a)| name(path, a))
        .collect();
    assert!(
        missing.is_empty(),
        "no default and no [default: ...] in the help of:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_duration_size_priority_and_percentage_says_its_unit() {
    let size = regex::Regex::new(r"\d[KMGT]\b").unwrap();
    let mut wrong = Vec::new();
    for (path, a) in options() {
        let help = help_of(&a);
        let names = a.get_value_names().unwrap_or_default().join(" ");
        let ok = if is_switch(&a) {
            true
        } else if names.contains("DUR") || names.contains("BUDGET") {
            bare_unit(&help).is_some()
        } else if names.contains("SIZE") {
            size.is_match(&help)
        } else if names == "PRIO" {
            help.contains("1-99")
        } else if names.contains("PCT") {
            help.contains('%')
        } else {
            true
        };
        if !ok {
            wrong.push(format!("{} ({names}): {help}", name(&path, &a)));
        }
    }
    assert!(wrong.is_empty(), "units not said:\n{}", wrong.join("\n"));
}

/// `line` split as a shell would, up to the first unquoted `|`, `>` or `;`.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '|' | '>' | ';') => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[test]
fn shell_words_quotes_and_stops_at_redirections() {
    assert_eq!(
        shell_words("rtlab a 'b c' \"d\" > out | x"),
        ["rtlab", "a", "b c", "d"]
    );
}

/// Every visible subcommand with its path of names (`["net", "ping"]`), the
/// top command first (empty path).
fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in visible(cmd, path.is_empty()) {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&tree(), Vec::new(), &mut out);
    out
}

#[test]
fn every_long_help_ends_with_examples_that_parse() {
    let all = commands();
    assert!(all.len() > 40, "{}", all.len());
    let mut wrong = Vec::new();
    for (path, cmd) in &all {
        let who = format!("rtlab {}", path.join(" "));
        let after = cmd.get_after_long_help().map(|h| h.to_string());
        let Some(examples) = after.as_deref().and_then(|h| h.split_once("Examples:\n")) else {
            wrong.push(format!("{who}: no Examples: in its long help"));
            continue;
        };
        let lines: Vec<&str> = examples.1.lines().collect();
        if lines.len() < 2 || lines.iter().any(|l| !l.starts_with("  rtlab ")) {
            wrong.push(format!(
                "{who}: fewer than two `  rtlab ...` lines: {lines:?}"
            ));
        }
        for line in lines {
            let argv = shell_words(line);
            if !argv[1..].starts_with(path) {
                wrong.push(format!("{who}: example of another command: {line}"));
            }
            if let Err(e) = Cli::try_parse_from(&argv) {
                wrong.push(format!("{who}: `{line}` does not parse: {e}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_topic_prints_and_names_its_subject() {
    for (topic, about) in TOPICS {
        let t = text(&[topic.to_string()]).unwrap();
        let title = t.lines().next().unwrap().to_lowercase();
        assert!(title.contains(&topic.replace('-', " ")), "{topic}: {title}");
        assert!(t.lines().count() > 10, "{topic} is too short:\n{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{topic}:\n{t}");
        assert!(ROOT_AFTER_HELP.contains(&format!("{topic:<11} {about}")));
    }
    let e = text(&["nosuch".to_string()]).unwrap_err();
    assert!(
        format!("{e:#}").contains("topics: units, exit-codes"),
        "{e:#}"
    );
    assert!(text(&["net".into(), "nosuch".into()]).is_err());
}

#[test]
fn help_of_a_subcommand_is_its_long_help() {
    let t = text(&["net".into(), "ping".into()]).unwrap();
    assert!(t.contains("Usage: rtlab net ping"), "{t}");
    assert!(t.contains("rtlab net ping 127.0.0.1"), "{t}");
    let root = text(&[]).unwrap();
    assert!(root.contains("Usage: rtlab"), "{root}");
    assert!(root.contains("Help topics"), "{root}");
}

#[test]
fn the_scenarios_topic_has_every_probe_and_key_with_its_default() {
    let t = text(&["scenarios".to_string()]).unwrap();
    for p in crate::step::probes() {
        assert!(t.contains(&format!("probe = \"{}\"", p.name)), "{}", p.name);
        for k in p.keys() {
            assert!(t.contains(&format!("\n  {k}")), "{}: {k}", p.name);
        }
    }
    assert!(t.contains("  interval = \"1ms\"\n"), "{t}");
    assert!(t.contains("(the flags of rtlab net ping)"), "{t}");
}

#[test]
fn the_units_topic_lists_options_by_the_unit_of_a_bare_number() {
    let t = text(&["units".to_string()]).unwrap();
    let section = |unit: &str| {
        let start = t.find(&format!("  {unit}:\n")).unwrap();
        t[start..]
            .split("\n  ")
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    assert!(section("µs").contains("latency --interval"), "{t}");
    assert!(section("seconds").contains("latency --duration"), "{t}");
    assert!(section("ms").contains("net ping --period"), "{t}");
}
