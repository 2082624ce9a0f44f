//! The README's commands run as written: the quick start's and the "first 10
//! minutes" walk-through's, taken from README.md itself, so that the page a new
//! user starts from cannot drift from what rtlab does.
//!
//! In those two sections a command is a line `$ COMMAND` in a fenced block, or any
//! line of a ```` ```sh ```` block. Its trailing comment says what it needs and how
//! it exits: `as root` (SCHED_FIFO), `about a minute` (too long for the quick
//! tests), `exit 1`, `exit 0 or 1` or `exit 0, 1 or 4` (the verdict: 1 when a
//! requirement failed, 4 when one is undecided);
//! without those, exit 0. `rtlab ARGS` and `cargo run --release -- ARGS` run the
//! binary under test with ARGS, in a temporary directory with `RTLAB_DB` there;
//! `./test.sh` is the suite itself and is checked, not run; `echo $?` only shows
//! the exit code the comment already states.

use crate::common::{rtlab, shown};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One command of the README, with what its comment says.
#[derive(Debug)]
struct Command {
    section: &'static str,
    line: usize,
    /// The words of the command, without `$ ` and the comment.
    words: Vec<String>,
    root: bool,
    long: bool,
    codes: Vec<i32>,
}

impl Command {
    /// The arguments of rtlab, when the command runs rtlab.
    fn rtlab_args(&self) -> Option<&[String]> {
        match self.words.first().map(String::as_str) {
            Some("rtlab") => Some(&self.words[1..]),
            Some("cargo") => {
                assert_eq!(
                    self.words[..4],
                    ["cargo", "run", "--release", "--"],
                    "README.md:{}: a cargo command other than `cargo run --release -- ARGS`",
                    self.line
                );
                Some(&self.words[4..])
            }
            _ => None,
        }
    }

    /// Whether it reads runs that earlier commands stored.
    fn reads_the_store(&self) -> bool {
        matches!(
            self.rtlab_args()
                .and_then(|a| a.first())
                .map(String::as_str),
            Some("compare" | "report" | "results")
        )
    }
}

const SECTIONS: [&str; 2] = ["## Quick start", "## The first 10 minutes"];

fn readme_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")
}

/// The commands of the quick start and the walk-through, in the README's order.
fn commands() -> Vec<Command> {
    let text = std::fs::read_to_string(readme_path()).unwrap();
    let mut out = Vec::new();
    let mut section: Option<&'static str> = None;
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if fence.is_none() && line.starts_with("## ") {
            section = SECTIONS.iter().copied().find(|s| line == *s);
            continue;
        }
        if let Some(info) = line.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(info.trim().to_string()),
            };
            continue;
        }
        let (Some(section), Some(info)) = (section, &fence) else {
            continue;
        };
        let command = match line.strip_prefix("$ ") {
            Some(c) => c,
            None if info == "sh" && !line.trim().is_empty() && !line.starts_with('#') => line,
            None => continue,
        };
        let (command, comment) = match command.find(" #") {
            Some(at) => (&command[..at], &command[at + 2..]),
            None => (command, ""),
        };
        assert!(
            !command.contains(['"', '\'', '|', '>', '<', '&', ';']),
            "README.md:{}: `{command}`: quotes, pipes, redirections and lists are not run as written here; keep the README's commands plain",
            i + 1
        );
        let codes = if comment.contains("exit 0, 1 or 4") {
            vec![0, 1, 4]
        } else if comment.contains("exit 0 or 1") {
            vec![0, 1]
        } else if comment.contains("exit 1") {
            vec![1]
        } else {
            vec![0]
        };
        out.push(Command {
            section,
            line: i + 1,
            words: command.split_whitespace().map(String::from).collect(),
            root: comment.contains("as root"),
            long: comment.contains("minute"),
            codes,
        });
    }
    out
}

/// Runs each of `cmds` in order, in one temporary directory with its own store,
/// and checks its exit code; `./test.sh` and `echo` are checked elsewhere.
fn run_all<'a>(cmds: impl IntoIterator<Item = &'a Command>) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for c in cmds {
        let Some(args) = c.rtlab_args() else { continue };
        let mut cmd = rtlab();
        cmd.args(args)
            .current_dir(dir.path())
            .env("RTLAB_DB", dir.path().join("rtlab.db"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .timeout(Duration::from_secs(300));
        let out = cmd.output().unwrap();
        assert!(
            out.status
                .code()
                .is_some_and(|code| c.codes.contains(&code)),
            "README.md:{} ({}): `{}` should exit {:?}\n{}",
            c.line,
            c.section,
            c.words.join(" "),
            c.codes,
            shown(&out)
        );
        ran += 1;
    }
    ran
}

#[test]
fn readme_quick_start_and_walkthrough_are_there_and_testable() {
    let cmds = commands();
    let quick: Vec<String> = cmds
        .iter()
        .filter(|c| c.section == SECTIONS[0])
        .map(|c| c.words.join(" "))
        .collect();
    // The two commands of the quick start, as a new user types them.
    assert_eq!(quick[..2], ["cargo run --release -- run", "./test.sh"]);
    let run = cmds.iter().find(|c| c.words.join(" ") == quick[0]).unwrap();
    assert!(run.root && run.long && run.codes == [0, 1, 4], "{run:?}");
    // ./test.sh is the suite: it must exist, be executable and run the workspace.
    let test_sh = Path::new(env!("CARGO_MANIFEST_DIR")).join("test.sh");
    let script = std::fs::read_to_string(&test_sh).unwrap();
    assert!(script.contains("cargo test --workspace"), "{script}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&test_sh).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "test.sh is not executable");

    // The walk-through: audit → latency → load → compare → report, in that order.
    let walk: Vec<&Command> = cmds.iter().filter(|c| c.section == SECTIONS[1]).collect();
    let subcommands: Vec<&str> = walk
        .iter()
        .filter_map(|c| c.rtlab_args()?.first().map(String::as_str))
        .collect();
    assert_eq!(
        subcommands,
        ["audit", "latency", "latency", "compare", "report"]
    );
    assert!(walk[2].words.iter().any(|w| w == "--load"), "{:?}", walk[2]);
    for c in &cmds {
        let known = c.rtlab_args().is_some() || matches!(c.words[0].as_str(), "./test.sh" | "echo");
        assert!(
            known,
            "README.md:{}: `{}` is not a command this test can run",
            c.line,
            c.words.join(" ")
        );
    }
}

/// What needs neither root nor the runs the root commands store: these run
/// everywhere, also where the others are ignored.
#[test]
fn readme_commands_without_root_run_as_written() {
    let cmds = commands();
    let ran = run_all(
        cmds.iter()
            .filter(|c| !c.root && !c.long && !c.reads_the_store()),
    );
    assert!(ran >= 1, "no README command runs without root: {cmds:#?}");
}

#[test]
#[ignore = "needs root: the walk-through measures with SCHED_FIFO (rtlab latency) and compares and reports those runs"]
fn readme_commands_run_as_written() {
    let cmds = commands();
    let ran = run_all(cmds.iter().filter(|c| !c.long));
    assert!(ran >= 6, "{cmds:#?}");
}

#[test]
#[ignore = "needs root and about a minute: the quick start's `cargo run --release -- run` (the whole quick check)"]
fn readme_long_commands_run_as_written() {
    let cmds = commands();
    let ran = run_all(cmds.iter().filter(|c| c.long));
    assert!(ran >= 1, "{cmds:#?}");
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn readme_is_short_and_its_contents_link_every_section_and_command() {
    let text = std::fs::read_to_string(readme_path()).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 600,
        "README.md has {lines} lines; long parts belong in docs/"
    );
    let contents = text
        .split("## Contents\n")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("a ## Contents section");
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let heading = line.strip_prefix("## ").or(line.strip_prefix("### "));
        if let Some(h) = heading.filter(|h| !fenced && *h != "Contents") {
            let link = format!("(#{})", anchor(h));
            assert!(
                contents.contains(&link),
                "Contents has no link {link} to '{h}'"
            );
        }
    }
    for link in ["docs/install.md", "rtlab help"] {
        assert!(text.contains(link), "README.md does not mention {link}");
    }
}
