//! `rtlab help [COMMAND...|TOPIC]`: the long help of a subcommand, as clap's own
//! `help` gives it, or a topic that no single subcommand owns (units, exit codes,
//! the load grammar, scenario files, the results store).

#[cfg(test)]
mod tests;
mod topics;

use super::common;
use crate::error::bad_flag;
use anyhow::Result;
use clap::Args;

/// The topics and what each is about, in the order `rtlab help` lists them.
pub const TOPICS: &[(&str, &str)] = &[
    (
        "units",
        "durations, sizes, percentages, priorities, CPU lists; what a bare number means",
    ),
    ("exit-codes", "what each exit code of rtlab means"),
    (
        "loads",
        "the --load grammar: kinds, keys, mixes, placement of the workers",
    ),
    (
        "scenarios",
        "scenario files: their tables and the keys of every probe, with defaults",
    ),
    (
        "store",
        "where results live, how runs are named, the environment variables",
    ),
];

/// The end of `rtlab --help`: the topics and a few first commands.
pub const ROOT_AFTER_HELP: &str = "Help topics (rtlab help TOPIC):
  units       durations, sizes, percentages, priorities, CPU lists; what a bare number means
  exit-codes  what each exit code of rtlab means
  loads       the --load grammar: kinds, keys, mixes, placement of the workers
  scenarios   scenario files: their tables and the keys of every probe, with defaults
  store       where results live, how runs are named, the environment variables

Examples:
  rtlab run
  rtlab latency -D 10s
  rtlab help units";

/// Print the help of a subcommand, or a topic: units, exit-codes, loads,
/// scenarios, store.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab help latency
  rtlab help net ping
  rtlab help scenarios")]
pub struct HelpArgs {
    /// A subcommand (`latency`, `net ping`) or a topic (units, exit-codes,
    /// loads, scenarios, store) [default: rtlab's own help and the topics].
    #[arg(value_name = "COMMAND|TOPIC")]
    words: Vec<String>,
}

/// Runs `rtlab help`.
pub fn run(a: HelpArgs) -> Result<i32> {
    common::print(&text(&a.words)?);
    Ok(0)
}

/// What `rtlab help WORDS...` prints.
fn text(words: &[String]) -> Result<String> {
    if let [word] = words {
        if let Some(t) = topics::topic(word) {
            return Ok(t);
        }
    }
    let mut cmd = topics::tree();
    let mut at = &mut cmd;
    for w in words {
        at = match at.find_subcommand_mut(w).filter(|s| !s.is_hide_set()) {
            Some(sub) => sub,
            None => return Err(unknown(words)),
        };
    }
    Ok(at.render_long_help().to_string())
}

/// The error of a word that is neither a subcommand nor a topic.
fn unknown(words: &[String]) -> anyhow::Error {
    let names: Vec<&str> = TOPICS.iter().map(|(n, _)| *n).collect();
    bad_flag(
        "COMMAND|TOPIC",
        format!(
            "'{}' is neither a subcommand nor a topic; topics: {}; subcommands: rtlab --help",
            words.join(" "),
            names.join(", ")
        ),
    )
}
