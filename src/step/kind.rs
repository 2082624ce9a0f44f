//! The registry: what rtlab knows of each kind of run, one entry a probe (and
//! one for `perf`, the runs of `rtlab perf -- CMD`), reached by the run's
//! kind. Everything that treats runs of one kind apart from another asks
//! here: how a scenario reads the probe's steps, what its histograms measure,
//! whether it has periods to overrun and deadlines to miss, which way its
//! metrics improve, which view shows its runs, what `rtlab why` can say of
//! it. Code outside `step` never compares a run's kind with a probe's name.

use super::Probe;
use crate::record::{Better, Run, RunParams, Series};
use crate::units::Human;
use serde_json::{Map, Value};

/// How runs of a kind are shown as text: the same view when a run is
/// measured and when it is reported from the store. `format` lays out each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Headline, series table, perf counters, warnings: any run.
    Plain,
    /// The cyclic timer probe's per-thread table, breaktrace and gate.
    Latency,
    /// Noise per CPU, the gaps' table and histogram, gates.
    Noise,
    /// Wake-up latency per pair and the round trips, or the PI check.
    Ipc,
    /// One frequency's periods, or a sweep's table.
    Periodic,
    /// Messages, legs and the server.
    Net,
    /// What a bench was asked, its metrics, per-event time.
    Bench,
    /// What the load workers achieved.
    Load,
}

/// One kind of run.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The run's kind, also the probe's name in a scenario and in the
    /// `probe` tag of its parameters (`latency`, `bench.cpu`).
    pub name: &'static str,
    /// The command that measures it, as its progress line says (`net ping`).
    pub command: &'static str,
    /// How a scenario reads its steps (`None`: not a scenario probe).
    pub probe: Option<Probe>,
    /// What its histograms measure, for plot axes and titles.
    pub quantity: &'static str,
    /// Its threads have periods, so overruns (periods that expired while a
    /// thread was late) mean something.
    pub periods: bool,
    /// Its values have a deadline to miss.
    pub deadlines: bool,
    /// Its metrics, and which way each improves: a name, or a pattern with
    /// `*` at either end, matched against the whole name and against the
    /// part after the last `.` (`cpu1.noise_ppm`).
    pub metrics: &'static [(&'static str, Better)],
    /// How its runs are shown as text.
    pub view: View,
    /// How to measure a run that `rtlab why` can explain (`None`: its runs
    /// are never analysed).
    pub why: Option<&'static str>,
    /// The HTML report shows the histogram of its total under this title.
    pub total_figure: Option<&'static str>,
    /// What a run was asked, in one line (empty: nothing to say).
    pub asked: fn(&RunParams) -> String,
    /// What a run holds, for the line of an import: its total given.
    pub holds: fn(&Run, &Series) -> String,
}

impl Kind {
    /// A kind of run that no probe makes: the runs of an import or of an
    /// rtlab this one does not know. Treated as latency runs are.
    pub const fn other(name: &'static str) -> Kind {
        Kind {
            name,
            command: name,
            probe: None,
            quantity: "latency",
            periods: true,
            deadlines: true,
            metrics: &[],
            view: View::Plain,
            why: None,
            total_figure: None,
            asked: |_| String::new(),
            holds: |_, total| format!("{} events", total.counters.samples),
        }
    }

    /// The kind of probe `name` whose parameters are `P` (see [`Probe::of`]).
    pub const fn probe<P: clap::Args + clap::FromArgMatches + serde::Serialize>(
        name: &'static str,
        duration_key: &'static str,
    ) -> Kind {
        Kind {
            probe: Some(Probe::of::<P>(name, duration_key)),
            ..Kind::other(name)
        }
    }

    /// Whose scenario steps must give each of `keys` (see [`Probe::requiring`]).
    pub const fn requiring(self, keys: &'static [&'static str]) -> Kind {
        Kind {
            probe: match self.probe {
                Some(p) => Some(p.requiring(keys)),
                None => None,
            },
            ..self
        }
    }

    /// With a scenario shorthand (see [`Probe::with_shorthand`]).
    pub const fn with_shorthand(self, shorthand: fn(&mut Map<String, Value>)) -> Kind {
        Kind {
            probe: match self.probe {
                Some(p) => Some(p.with_shorthand(shorthand)),
                None => None,
            },
            ..self
        }
    }

    /// Named so by its progress line.
    pub const fn command(self, command: &'static str) -> Kind {
        Kind { command, ..self }
    }

    /// Whose histograms measure `quantity`.
    pub const fn quantity(self, quantity: &'static str) -> Kind {
        Kind { quantity, ..self }
    }

    /// Whose threads have periods (overruns) and values deadlines (misses).
    pub const fn periods(self, periods: bool, deadlines: bool) -> Kind {
        Kind {
            periods,
            deadlines,
            ..self
        }
    }

    /// With these metrics.
    pub const fn metrics(self, metrics: &'static [(&'static str, Better)]) -> Kind {
        Kind { metrics, ..self }
    }

    /// Shown with `view`.
    pub const fn view(self, view: View) -> Kind {
        Kind { view, ..self }
    }

    /// Whose runs `rtlab why` can explain when measured as `how` says.
    pub const fn why(self, how: &'static str) -> Kind {
        Kind {
            why: Some(how),
            ..self
        }
    }

    /// Whose total's histogram the HTML report shows, titled `title`.
    pub const fn total_figure(self, title: &'static str) -> Kind {
        Kind {
            total_figure: Some(title),
            ..self
        }
    }

    /// What its runs were asked, in one line.
    pub const fn asked(self, asked: fn(&RunParams) -> String) -> Kind {
        Kind { asked, ..self }
    }

    /// What its runs hold, for the line of an import.
    pub const fn holds(self, holds: fn(&Run, &Series) -> String) -> Kind {
        Kind { holds, ..self }
    }

    /// Whether a run of this kind can have the figure `field` (`overruns`,
    /// `deadline_misses`; any other figure it can).
    pub fn measures(&self, field: &str) -> bool {
        match field {
            "overruns" => self.periods,
            "deadline_misses" => self.deadlines,
            _ => true,
        }
    }

    /// Which way its metric `name` improves, when it lists it.
    pub fn direction(&self, name: &str) -> Option<Better> {
        let own = name.rsplit('.').next().unwrap_or(name);
        self.metrics
            .iter()
            .find(|(pattern, _)| matches(pattern, name) || matches(pattern, own))
            .map(|&(_, better)| better)
    }
}

/// Whether `name` matches `pattern`: equal, or `*` at either end standing
/// for any text.
fn matches(pattern: &str, name: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(inner), _) if inner.ends_with('*') => name.contains(&inner[..inner.len() - 1]),
        (Some(suffix), _) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        (None, None) => name == pattern,
    }
}

/// Whether `run` has the figure `field` (a summary field such as `p99_ns`,
/// or the counter `overruns` or `deadline_misses`): its kind measures it (a
/// benchmark or a load has no period to overrun and no deadline to miss) and
/// its source reported it (see [`Run::unreported`]).
pub fn reports(run: &Run, field: &str) -> bool {
    super::kind(&run.kind).measures(field) && !run.unreported().contains(&field)
}

/// What `rtlab why` says of a run whose kind is never analysed: the kinds
/// that are, and how to measure them.
pub fn analysed() -> String {
    let kinds: Vec<&Kind> = super::KINDS
        .iter()
        .filter(|k| k.why.is_some())
        .copied()
        .collect();
    let names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    let how: Vec<String> = kinds
        .iter()
        .map(|k| format!("'rtlab {} --trace'", k.command))
        .collect();
    format!(
        "{} runs are analysed: {}",
        names.join(" and "),
        how.join(", ")
    )
}

/// The line of an imported latency run: threads, samples, maximum.
pub fn threads_samples_max(run: &Run, total: &Series) -> String {
    format!(
        "{} thread(s), {} samples, max {}",
        run.series.len(),
        total.counters.samples,
        Human(total.summary.max_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_their_ends_and_their_middles() {
        assert!(matches("cv", "cv") && !matches("cv", "cvx"));
        assert!(matches("noise_*", "noise_ppm") && !matches("noise_*", "x_noise"));
        assert!(matches("*_per_s", "reads_per_s") && !matches("*_per_s", "per_sx"));
        assert!(matches("*cpu_ns_per*", "client_cpu_ns_per_message"));
        let k = Kind::other("x").metrics(&[("noise_*", Better::Lower)]);
        assert_eq!(k.direction("cpu1.noise_ppm"), Some(Better::Lower));
        assert_eq!(k.direction("loop_ns"), None);
    }
}
