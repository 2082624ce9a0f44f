//! Steps: one module per measurement. Each owns its typed `Params` (the flags of
//! its subcommand and the keys of a scenario step, defined once, with their
//! defaults), the checks that turn them into what the engine runs, the run
//! itself, which returns a [`Run`](crate::record::Run), and its [`Kind`]: how
//! rtlab treats runs of it. The [`registry!`] below lists every probe once.
//!
//! A scenario step is the same `Params`, read from TOML; a campaign runs it in a
//! child process by handing the serialised `Params` to `rtlab __step`. A run
//! records the `Params` it was made with (tagged with the probe's name).

/// The [`Step`] of a probe's `Params`, in the probe's module, which holds
/// its `KIND`, `Params::plan(&self, &Machine)` and `measure(&Params, &mut
/// dyn Observer)`: its kind, the check of its plan and its measuring, with
/// the other methods given (`options`, `planned_ns`, and those the probe has
/// of its own); and its defaults, its flags when none is given.
macro_rules! step {
    ($($methods:tt)*) => {
        impl Default for Params {
            fn default() -> Self {
                crate::step::defaults()
            }
        }

        impl crate::step::Step for Params {
            fn kind(&self) -> &'static crate::step::Kind {
                &KIND
            }

            fn check_plan(&self, m: &crate::step::Machine) -> anyhow::Result<()> {
                self.plan(m).map(drop)
            }

            fn measure(
                &self,
                obs: &mut dyn crate::step::Observer,
            ) -> anyhow::Result<crate::record::Run> {
                measure(self, obs)
            }

            $($methods)*
        }
    };
}

pub mod bench;
pub mod de;
pub mod deadline;
pub mod ipc;
pub mod kind;
pub mod latency;
pub mod load;
pub mod loads;
pub mod net;
pub mod noise;
pub mod perf;
pub mod periodic;
pub mod rt;
pub mod value;

pub use kind::{reports, Kind, View};

use crate::record::{self, Better, Run, RunParams};
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;
use rtlab_engine::rt::sched::{self, Policy};
use rtlab_engine::sysinfo::Fingerprint;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The registry: one line a probe, `Variant(module)`, where `module` holds
/// the probe's `Params` (which implement [`Step`]) and its `KIND`. It makes
/// the tagged [`Params`] of any step and the list of [`KINDS`].
macro_rules! registry {
    ($($variant:ident($($module:ident)::+)),* $(,)?) => {
        /// The parameters of any step, tagged with its probe's name (`"probe":
        /// "latency"`): what a scenario step gives, what `rtlab __step` runs
        /// and what a run records. A few per run: the size of the largest
        /// variant does not matter.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum Params {
            $($variant($($module)::+::Params),)*
        }

        impl Params {
            /// The step these parameters are.
            pub fn step(&self) -> &dyn Step {
                match self {
                    $(Params::$variant(p) => p,)*
                }
            }

            /// The step these parameters are, to change.
            pub fn step_mut(&mut self) -> &mut dyn Step {
                match self {
                    $(Params::$variant(p) => p,)*
                }
            }

            /// The parameters of the probe `name` from `values` (`None`:
            /// no probe is so named).
            fn typed(name: &str, values: Map<String, Value>) -> Option<serde_json::Result<Params>> {
                $(if name == $($module)::+::KIND.name {
                    let params = serde_json::from_value(Value::Object(values));
                    return Some(params.map(Params::$variant));
                })*
                None
            }
        }

        $(impl From<$($module)::+::Params> for Params {
            fn from(p: $($module)::+::Params) -> Params {
                Params::$variant(p)
            }
        })*

        impl Serialize for Params {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Params::$variant(p) => Tagged { probe: self.name(), params: p }.serialize(s),)*
                }
            }
        }

        /// The names of every probe.
        const NAMES: &[&str] = &[$($($module)::+::KIND.name,)*];

        /// Every kind of run rtlab makes: a probe's, then `perf`.
        pub const KINDS: &[&Kind] = &[$(&$($module)::+::KIND,)* &perf::KIND];
    };
}

registry! {
    Latency(latency),
    Noise(noise),
    Net(net),
    Periodic(periodic),
    Ipc(ipc),
    Load(load),
    BenchCpu(bench::cpu),
    BenchMemory(bench::memory),
    BenchFileio(bench::fileio),
    BenchThreads(bench::threads),
    BenchMutex(bench::mutex),
}

/// A step's parameters as they are serialised: the probe's name first.
#[derive(Serialize)]
struct Tagged<'a, P> {
    probe: &'static str,
    #[serde(flatten)]
    params: &'a P,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut values = Map::<String, Value>::deserialize(d)?;
        let name = match values.remove("probe") {
            Some(Value::String(name)) => name,
            _ => return Err(D::Error::missing_field("probe")),
        };
        match Params::typed(&name, values) {
            Some(params) => params.map_err(D::Error::custom),
            None => Err(D::Error::unknown_variant(&name, NAMES)),
        }
    }
}

/// The kind of runs called `name`: a probe's, `perf`, or (for a kind this
/// rtlab does not make, such as an import's) one treated as latency runs are.
pub fn kind(name: &str) -> &'static Kind {
    const OTHER: Kind = Kind::other("other");
    KINDS
        .iter()
        .copied()
        .find(|k| k.name == name)
        .unwrap_or(&OTHER)
}

/// Which way the metric `name` improves, when a kind lists it.
pub fn metric_direction(name: &str) -> Option<Better> {
    KINDS.iter().find_map(|k| k.direction(name))
}

/// How a scenario reads a probe's steps.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    /// Name in the scenario file and in the `probe` tag (`latency`, `bench.cpu`).
    pub name: &'static str,
    /// The key that sets how long a step runs.
    pub duration_key: &'static str,
    /// Keys every step of this probe must give.
    pub required: &'static [&'static str],
    /// Its parameters with their defaults, as a scenario spells them.
    defaults: fn() -> Value,
    /// Scenario shorthands, rewritten into the parameters' own terms before
    /// the values are read (latency: `priority = 0` means SCHED_OTHER).
    shorthand: fn(&mut Map<String, Value>),
}

impl Probe {
    /// The probe `name` whose parameters are `P` (their defaults are what a
    /// scenario step starts from) and whose duration is set by `duration_key`;
    /// no key is required and there is no shorthand.
    pub const fn of<P: clap::Args + clap::FromArgMatches + serde::Serialize>(
        name: &'static str,
        duration_key: &'static str,
    ) -> Probe {
        Probe {
            name,
            duration_key,
            required: &[],
            defaults: defaults_json::<P>,
            shorthand: |_| {},
        }
    }

    /// The same probe, whose steps must give each of `keys`.
    pub const fn requiring(self, keys: &'static [&'static str]) -> Probe {
        Probe {
            required: keys,
            ..self
        }
    }

    /// The same probe, with a scenario shorthand rewritten before the values
    /// are read.
    pub const fn with_shorthand(self, shorthand: fn(&mut Map<String, Value>)) -> Probe {
        Probe { shorthand, ..self }
    }
}

/// The defaults of `P`, as a scenario spells them.
fn defaults_json<P: clap::Args + clap::FromArgMatches + serde::Serialize>() -> Value {
    serde_json::to_value(defaults::<P>()).unwrap_or_default()
}

/// Every probe a scenario step can name.
pub fn probes() -> impl Iterator<Item = &'static Probe> {
    KINDS.iter().filter_map(|k| k.probe.as_ref())
}

/// The probe called `name`.
pub fn probe(name: &str) -> Option<&'static Probe> {
    probes().find(|p| p.name == name)
}

/// The names of all probes, for error messages.
pub fn names() -> String {
    NAMES.join(", ")
}

impl PartialEq for Probe {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Probe {
    /// The keys it accepts, in the order its flags are listed.
    pub fn keys(&self) -> Vec<String> {
        match (self.defaults)() {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// Its parameters with their defaults, as a scenario spells them.
    pub fn default_values(&self) -> Value {
        (self.defaults)()
    }

    /// Whether it takes `key`.
    pub fn takes(&self, key: &str) -> bool {
        self.keys().iter().any(|k| k == key)
    }

    /// `value` read as its `key` parameter: the value in the form the step
    /// records it (a CPU array becomes its list string), or what is wrong with it.
    pub fn value(&self, key: &str, value: Value) -> Result<Value, String> {
        let mut m = Map::new();
        m.insert(key.to_string(), value);
        // Read as written: shorthands apply to a whole step, not to one value.
        let params = self.typed(m)?;
        let mut all = serde_json::to_value(params).map_err(|e| e.to_string())?;
        Ok(all[key].take())
    }

    /// The typed parameters of one step from its values.
    pub fn params(&self, mut values: Map<String, Value>) -> Result<Params, String> {
        (self.shorthand)(&mut values);
        self.typed(values)
    }

    fn typed(&self, values: Map<String, Value>) -> Result<Params, String> {
        match Params::typed(self.name, values) {
            Some(params) => params.map_err(|e| de::plain(&e)),
            None => Err(format!("unknown probe '{}'", self.name)),
        }
    }
}

/// A step: what the shared step code (scenario checks, campaigns, the
/// command line) asks of any probe's parameters. A probe gives its kind, its
/// own checks, its shared options, its planned time and its measuring; the
/// checks of the shared options, the real-time need and the order in which
/// a run checks and measures are the same for every probe, here.
pub trait Step {
    /// Its kind.
    fn kind(&self) -> &'static Kind;
    /// The checks of its own values on machine `m` (its plan): a
    /// [`BadValue`](crate::error::BadValue) names the flag of the value.
    fn check_plan(&self, m: &Machine) -> Result<()>;
    /// The options it shares with other probes.
    fn options(&self) -> rt::Options<'_>;
    /// How long it is planned to run (ns), when it says.
    fn planned_ns(&self) -> Option<u64>;
    /// Measures, watched by `obs`.
    fn measure(&self, obs: &mut dyn Observer) -> Result<Run>;

    /// Every check it would make before measuring, on machine `m`.
    fn check(&self, m: &Machine) -> Result<()> {
        self.check_plan(m)?;
        self.options().check()
    }

    /// The real-time scheduling it needs, and the key that asks for it.
    fn rt_need(&self) -> Option<(Policy, i32, &'static str)> {
        self.options().sched.and_then(rt::SchedArgs::rt_need)
    }

    /// Its `trace` switch, when it can trace the kernel and explain what it
    /// saw (`rtlab run --trace` turns it on).
    fn trace(&mut self) -> Option<&mut bool> {
        None
    }

    /// Measures, after refusing what no probe can do here (`--perf` on a
    /// machine that opens no counter).
    fn run(&self, obs: &mut dyn Observer) -> Result<Run> {
        self.options().check_perf()?;
        self.measure(obs)
    }
}

impl Params {
    /// Its probe's name.
    pub fn name(&self) -> &'static str {
        self.step().kind().name
    }
}

/// What watches a step while it measures (the live view on a terminal). Every
/// method is called from the thread that started the step, never from a
/// measuring thread; `()` watches nothing.
pub trait Observer {
    /// The measuring threads are about to start: their names.
    fn start(&mut self, _names: &[String]) {}
    /// The latency threads' values so far, about every 250 ms, and once more
    /// when they have ended.
    fn latency(&mut self, _snaps: &[rtlab_engine::probe::latency::LiveSnapshot]) {}
    /// Whether it wants every wake-up of the latency threads ([`Observer::samples`]).
    fn wants_samples(&self) -> bool {
        false
    }
    /// How often it wants them (at most: a quarter of the ring's time).
    fn sample_poll(&self) -> std::time::Duration {
        std::time::Duration::from_millis(20)
    }
    /// Whether the threads keep their histograms while it takes every
    /// wake-up (false: it keeps its own; the run's histograms stay empty).
    fn thread_histograms(&self) -> bool {
        true
    }
    /// Wake-ups of latency thread `thread` since the last call, oldest first.
    fn samples(&mut self, _thread: usize, _samples: &[rtlab_engine::probe::samples::Sample]) {}
    /// /dev/cpu_dma_latency was asked for: held at this many µs, or refused (why).
    fn dma_latency(&mut self, _held: Result<i32, String>) {}
    /// The ops/s of each load (by kind, in spec order) since the last call,
    /// `elapsed` into the step, about every 500 ms.
    fn loads(&mut self, _elapsed: std::time::Duration, _rates: &[(&str, f64)]) {}
    /// Measuring has ended.
    fn end(&mut self) {}
    /// A bench's rates over the --report-interval that just ended, as a line.
    fn interval(&mut self, _line: &str) {}
    /// A bench's totals at the end of a --report-interval (`prev`: at the end
    /// of the one before, zero at the start), for a bench whose own rates
    /// are `rates`. By default, rtlab's line of rates through
    /// [`Observer::interval`].
    fn bench_interval(
        &mut self,
        rates: bench::Rates,
        prev: &rtlab_engine::bench::Snapshot,
        now: &rtlab_engine::bench::Snapshot,
    ) {
        self.interval(&bench::interval_line(rates, prev, now));
    }
    /// The percentile of each interval's event times that
    /// [`Observer::bench_interval`] reads in `Snapshot::pct_ns` (0: none).
    fn interval_percentile(&self) -> f64 {
        0.0
    }
    /// Whether a bench with sysbench's accounting counts each event in
    /// sysbench's latency histogram, as sysbench does by default.
    fn latency_histogram(&self) -> bool {
        true
    }
    /// What the step does before it measures (fileio preparing its files).
    fn note(&mut self, _text: &str) {}
}

impl Observer for () {}

/// A run of the step `params` on the system `fp`, with the default label.
/// The step fills in what it measured.
pub fn new_run(fp: Fingerprint, started_at: String, params: impl Into<Params>) -> Run {
    let params = params.into();
    let label = record::default_label(&fp);
    Run::new(
        params.name(),
        label,
        fp,
        started_at,
        RunParams::Step(Box::new(params)),
    )
}

/// The defaults of a step's parameters: its flags, none given.
pub fn defaults<A: clap::Args + clap::FromArgMatches>() -> A {
    let cmd = A::augment_args(
        clap::Command::new("defaults")
            .no_binary_name(true)
            .disable_help_flag(true),
    );
    let m = cmd
        .try_get_matches_from(std::iter::empty::<String>())
        .expect("every parameter has a default");
    A::from_arg_matches(&m).expect("defaults are valid values")
}

/// What the checks need to know about this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPUs this process may run on: online and in its affinity mask.
    pub cpus: Vec<usize>,
    /// MemAvailable in bytes (0: unknown, nothing is refused for memory).
    pub mem_available: u64,
}

impl Machine {
    /// This machine, as seen by this process.
    pub fn this() -> Machine {
        let online = rtlab_engine::sysinfo::read_text("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|s| CpuList::parse(&s).ok())
            .unwrap_or_default();
        let allowed = sched::thread_affinity(0).unwrap_or_default();
        let both: Vec<usize> = allowed
            .iter()
            .copied()
            .filter(|c| online.contains(*c))
            .collect();
        let cpus = if !both.is_empty() {
            both
        } else if !online.is_empty() {
            online.cpus().to_vec()
        } else {
            allowed
        };
        let meminfo = rtlab_engine::sysinfo::read_text("/proc/meminfo").unwrap_or_default();
        Machine {
            cpus,
            mem_available: rtlab_engine::sysinfo::meminfo_kib(&meminfo, "MemAvailable")
                .saturating_mul(1024),
        }
    }

    /// The CPUs of `list`, refused naming `flag` when it does not read, is
    /// empty or names a CPU this process cannot use.
    pub fn usable(&self, flag: &str, list: &value::Cpus) -> Result<Vec<usize>> {
        let cpus = list.list(flag)?;
        self.check_cpus(flag, &cpus)?;
        Ok(cpus.cpus().to_vec())
    }

    /// Refuses CPUs of `list` that this process cannot use, naming `flag`.
    pub fn check_cpus(&self, flag: &str, list: &CpuList) -> Result<()> {
        if self.cpus.is_empty() {
            return Ok(());
        }
        match list.cpus().iter().find(|c| !self.cpus.contains(c)) {
            Some(bad) => Err(crate::error::bad_flag(
                flag,
                format!(
                    "CPU {bad} is not online or not allowed for this process (usable: {})",
                    CpuList::from_cpus(self.cpus.clone())
                ),
            )),
            None => Ok(()),
        }
    }
}
