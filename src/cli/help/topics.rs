//! The texts of `rtlab help TOPIC`. What the code knows (the options and their
//! units, the probes and their keys, the load kinds) is read from it, so that a
//! topic follows the flags it describes.

use crate::cli::Cli;
use crate::error::{
    EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_SYSTEM, EXIT_UNDECIDED, EXIT_USAGE,
};
use crate::format::text::table::wrap_words;
use crate::step::{self, Probe};
use clap::CommandFactory;
use serde_json::Value;
use std::collections::BTreeMap;

/// Lines of a topic are at most this wide.
const WIDTH: usize = 96;

/// The text of topic `name`, if it is one.
pub fn topic(name: &str) -> Option<String> {
    Some(match name {
        "units" => units(),
        "exit-codes" => exit_codes(),
        "loads" => loads(),
        "scenarios" => scenarios(),
        "store" => STORE.to_string(),
        _ => return None,
    })
}

/// `text` wrapped, each line after `indent`.
fn wrapped(indent: &str, text: &str) -> String {
    wrap_words(text, WIDTH - indent.len())
        .iter()
        .map(|l| format!("{indent}{l}\n"))
        .collect()
}

/// The whole command tree, built: deferred subcommands filled in, global
/// options given to every subcommand.
pub(super) fn tree() -> clap::Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

/// The subcommands of `cmd` a user types: not the hidden ones, nor the `help`
/// that clap adds below the top.
pub(super) fn visible(cmd: &clap::Command, top: bool) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(move |s| !s.is_hide_set() && (top || s.get_name() != "help"))
}

/// Every option of every visible subcommand, with its path (`net ping`).
pub(super) fn options() -> Vec<(String, clap::Arg)> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        // In the order of the help (an option a probe rewords moves to the
        // end of the list, not of the help).
        let mut args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
        args.sort_by_key(|a| a.get_display_order());
        for a in args {
            out.push((path.to_string(), a.clone()));
        }
        for sub in visible(cmd, path.is_empty()) {
            let p = format!("{path} {}", sub.get_name()).trim().to_string();
            walk(sub, &p, out);
        }
    }
    let mut out = Vec::new();
    walk(&tree(), "", &mut out);
    out
}

/// The whole help text of an argument, on one line.
pub(super) fn help_of(a: &clap::Arg) -> String {
    let h = a.get_long_help().or(a.get_help());
    let text = h.map(|h| h.to_string()).unwrap_or_default();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The unit a bare number is in for a duration option, as its help says.
pub(super) fn bare_unit(help: &str) -> Option<&'static str> {
    ["µs", "ms", "seconds"]
        .into_iter()
        .find(|u| help.contains(&format!("a bare number is {u}")))
}

fn units() -> String {
    let mut by_unit: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (path, a) in options() {
        let names = a.get_value_names().unwrap_or_default();
        if !names
            .iter()
            .any(|n| n.contains("DUR") || n.contains("BUDGET"))
        {
            continue;
        }
        if let Some(u) = bare_unit(&help_of(&a)) {
            let flag = a.get_long().unwrap_or(a.get_id().as_str());
            by_unit
                .entry(u)
                .or_default()
                .push(format!("{path} --{flag}"));
        }
    }
    let mut s = String::from(
        "Units

Durations: a number and a unit: ns, us (or µs), ms, s, m (or min), h; fractions work (1.5ms,
0.5s). A bare number takes the unit of the option it is given to, as the anchor tools do
(cyclictest's -i is µs, its -D seconds):
",
    );
    for (unit, flags) in &by_unit {
        s.push_str(&format!("  {unit}:\n"));
        s.push_str(&wrapped("      ", &flags.join(", ")));
    }
    s.push_str(
        "  A scenario file takes the same strings under the same keys; the budgets of its
  [requirements] table are ms when bare, those of --require µs. Load keys: timer period=DUR
  is µs.

Sizes: bytes, or a number with K, M, G or T (powers of 1024; KiB and KB read the same):
  4096, 64K, 256M, 3G.
Percentages: cpu duty cycle, 60% or 60 (--cpu-load, the cpu load's load=PCT%).
Priorities: 1-99 for SCHED_FIFO and SCHED_RR (higher runs first); 0 for other, batch and
  idle. rtlab latency runs at 90 unless told; rtlab net and the load workers run SCHED_OTHER
  unless told. Nice values: -20 (first) to 19.
CPU lists: as taskset -c: 3, 1-3, 0,2,4-5.
Times in tables: --unit ns, us or ms (default us). JSON and CSV give times in ns.
",
    );
    s
}

fn exit_codes() -> String {
    format!(
        "Exit codes

  {EXIT_OK:<4} ok: measured, and every requirement and threshold held
  {EXIT_FAILED:<4} measured fine, but a requirement or threshold failed: --max-latency,
       --require, a scenario's [requirements], audit --strict, kconfig check --strict,
       prio apply --check. On a VM this is the common verdict of rtlab run, not a fault.
  {EXIT_USAGE:<4} usage or input error: a bad flag, value, scenario key or file; the
       message names it and says how to fix it; nothing was measured or stored
  {EXIT_SYSTEM:<4} the system refused: permissions (SCHED_FIFO, mlock, /dev/cpu_dma_latency
       need root or CAP_SYS_NICE / CAP_IPC_LOCK), a missing kernel feature, a read-only
       or full directory, a results database another process holds too long
  {EXIT_UNDECIDED:<4} measured fine and nothing failed, but a verdict is undecided: the repeats
       disagree, or a deadline held by less than the noise threshold (5%); more
       runs may decide it (rtlab run --repeat N, --until-decided; docs/decisions.md)
  {EXIT_INTERRUPTED:<4} interrupted (Ctrl-C, SIGTERM): what was gathered is still printed and
       saved, marked interrupted; rtlab run --resume continues a campaign

rtlab cyclictest, stress, stress-ng and sysbench exit as the tools do.
"
    )
}

/// Where the text of a load kind begins in `rtlab load --list`.
const HANG: usize = 11;

fn loads() -> String {
    format!(
        "Loads

A load runs beside a measurement (--load SPEC on latency and net ping, repeatable; a
scenario's load key), alone (rtlab load SPEC), or part by part (rtlab run --attribute MIX).
Workers are separate processes, SCHED_OTHER unless --load-policy says otherwise. Quote a
spec with spaces: --load \"exec:make -j4\".

{}
Placement of the workers (every command that takes --load):
  --load-cpus LIST     CPUs they may run on (default: every CPU rtlab may use)
  --load-nice N        their nice value, -20 to 19
  --load-policy P      other, batch, idle, fifo:PRIO or rr:PRIO (default: other)

Guards: a vm or memcopy load above 90% of MemAvailable, or an io load without the free
space, is refused before anything starts (force lifts it). Sizes as in rtlab help units.

Examples:
  rtlab latency -D 30s --load cpu:2 --load vm:1:512M
  rtlab load \"msg threads\" -D 10s
  rtlab run --attribute dohell
",
        crate::loads::spec::listing()
            .lines()
            .map(|l| match l.char_indices().nth(HANG) {
                Some((at, _)) if l.chars().count() > WIDTH => {
                    let rest = wrapped(&" ".repeat(HANG), &l[at..]);
                    format!("{}{}", &l[..at], &rest[HANG..])
                }
                _ => format!("{l}\n"),
            })
            .collect::<String>()
    )
}

fn scenarios() -> String {
    let mut s = String::from(
        "Scenarios

A scenario file is TOML; rtlab run FILE checks all of it on this machine before anything
runs, and every error names the file, the line and the key. rtlab presets show NAME prints
a built-in one to start from.

  name = \"my board\"            required
  label = \"rt 6.6\"             label of the runs (default: kernel and preemption model)
  description = \"...\"
  [defaults]                   keys given to every step whose probe takes them
  [[step]]                     one or more
  probe = \"latency\"            required: one of the probes below
  name = \"idle\"                the step's name in tables
  repeat = 3                   run the step this many times (1-1000)
  matrix.priority = [0, 90]    one step per value (several axes: every combination)
  attribute = true             with a mix as load: also run each part alone, then rank
  KEY = VALUE                  the probe's keys below
  [requirements]               NAME = \"BUDGET\": a run passes when its maximum latency
                               is within it (a bare number is ms)

The keys of a probe are its command's flags, with _ for - (interval, load_cpus), taking the
same values; lists may be TOML arrays (cpus = [0, 2], load = [\"cpu\", \"vm\"]).
",
    );
    for p in step::probes() {
        s.push_str(&probe_keys(p));
    }
    s.push_str(
        "
Example:
  name = \"board check\"
  [defaults]
  duration = \"30s\"
  [[step]]
  probe = \"latency\"
  matrix.load = [\"cpu\", \"dohell\"]
  [requirements]
  control = \"500us\"
",
    );
    s
}

/// The keys of probe `p` with their defaults and what they are, from the
/// flags of its subcommand.
fn probe_keys(p: &Probe) -> String {
    let cmd = tree();
    let path: Vec<&str> = p.name.split('.').collect();
    let found = path
        .iter()
        .try_fold(&cmd, |c, w| c.find_subcommand(w))
        .map(|c| command_with_most(c, &p.keys()));
    let mut s = format!("\nprobe = \"{}\"", p.name);
    if let Some(c) = found {
        let mut names = path.clone();
        if c.get_name() != path[path.len() - 1] {
            names.push(c.get_name());
        }
        s.push_str(&format!("   (the flags of rtlab {})", names.join(" ")));
    }
    s.push('\n');
    let defaults = p.default_values();
    for key in p.keys() {
        let value = match &defaults[&key] {
            Value::Null => String::new(),
            Value::Array(a) if a.is_empty() => String::new(),
            v => format!(" = {v}"),
        };
        let arg = found.and_then(|c| c.get_arguments().find(|a| a.get_id() == key.as_str()));
        let about = match arg {
            Some(a) => help_of(a),
            None => "a scenario key only, with no flag of its name".to_string(),
        };
        let required = if p.required.contains(&key.as_str()) {
            " (required)"
        } else {
            ""
        };
        s.push_str(&format!("  {key}{value}{required}\n"));
        s.push_str(&wrapped("      ", &about));
    }
    s
}

/// `cmd`, or the subcommand of it whose flags cover most of `keys` (`net` →
/// `net ping`).
fn command_with_most<'a>(cmd: &'a clap::Command, keys: &[String]) -> &'a clap::Command {
    let covered = |c: &clap::Command| {
        keys.iter()
            .filter(|k| c.get_arguments().any(|a| a.get_id() == k.as_str()))
            .count()
    };
    std::iter::once(cmd)
        .chain(cmd.get_subcommands())
        .max_by_key(|c| covered(c))
        .unwrap_or(cmd)
}

const STORE: &str = "The results store

Every measuring command saves its run (unless --no-save; rtlab cyclictest, stress,
stress-ng and sysbench: --no-store or RTLAB_NO_STORE=1) in one SQLite file:
  --db PATH, else $RTLAB_DB, else $XDG_DATA_HOME/rtlab/rtlab.db, else
  ~/.local/share/rtlab/rtlab.db.
Several rtlab processes may write it at once; commands that only read open it read-only
and never create it. results push --to STORE and pull --from STORE copy runs between
stores, export --bundle FILE and import --bundle FILE through a file; a run is copied once
(it keeps its UUID). A postgres://USER@HOST/DATABASE URL names a PostgreSQL store (its
password in PGPASSWORD or ~/.pgpass rather than in the URL; libpq's host=... form is
refused). results check says which runs a damaged store can still give (writes to it are
refused from then on); results backup FILE copies it while monitors write.

A run is named by its id (12), its label (the newest complete run with that label: stock)
or label@N (the Nth newest with that label, whatever its status; stock@1 is the newest).
The label defaults to \"<kernel release> <preemption model>\"; --label sets it, results label
changes it. A campaign (rtlab run, several imported files) groups runs: results campaigns.

Beside the store: rtlab run writes reports/campaign-ID.html next to it; rtlab prio set and
apply keep what they changed in $XDG_STATE_HOME/rtlab/prio-restore.json
(~/.local/state/rtlab/) until rtlab prio restore.

Examples:
  rtlab results list --last 10
  rtlab compare stock rt --require control=1ms
  rtlab results export 12 --format csv -o run12.csv
";
