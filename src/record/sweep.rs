//! The record of a periodic sweep: per method and load, every frequency tried
//! and the highest one held.

use serde::{Deserialize, Serialize};

/// One frequency tried.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The frequency asked (Hz).
    pub requested_hz: f64,
    /// Toggles per second achieved.
    pub achieved_hz: f64,
    /// The period furthest from nominal, as a fraction of nominal.
    pub worst_deviation: f64,
    /// Nominal periods that passed without a toggle.
    pub missed: u64,
    /// Whether the achieved frequency and every period stayed within tolerance.
    pub held: bool,
}

/// The points of one method under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// Timing method (`sleep`, `busy`, `timerfd`, `hybrid`).
    pub method: String,
    /// `idle`, or the load specs.
    pub load: String,
    /// The highest frequency held (None: not even the lowest).
    pub best_hz: Option<f64>,
    /// The search ended early (time limit or stop) before it converged.
    pub truncated: bool,
    /// It ended early because the sweep's `--duration` ran out (not a stop).
    #[serde(default)]
    pub out_of_time: bool,
    /// Measurements of each frequency, of which a majority decided (1 in
    /// sweeps of an older rtlab).
    #[serde(default = "one")]
    pub repeats: u32,
    /// Every measurement, in the order made (a frequency measured again is
    /// a point again).
    pub points: Vec<Point>,
}

impl Curve {
    /// How its search ended early, if it did: ` (cut short by --duration)`
    /// or ` (stopped)`.
    pub fn cut(&self) -> &'static str {
        match (self.out_of_time, self.truncated) {
            (true, _) => " (cut short by --duration)",
            (false, true) => " (stopped)",
            _ => "",
        }
    }
}

fn one() -> u32 {
    1
}

/// How the measurements of one frequency went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tally {
    /// The frequency (Hz).
    pub hz: f64,
    /// Measurements that held.
    pub held: u32,
    /// Measurements made.
    pub of: u32,
}

impl Tally {
    /// Whether its measurements disagree.
    pub fn split(&self) -> bool {
        self.held > 0 && self.held < self.of
    }
}

impl Curve {
    /// Each frequency measured, in the order first tried, with how its
    /// measurements went.
    pub fn tallies(&self) -> Vec<Tally> {
        let mut out: Vec<Tally> = Vec::new();
        for p in &self.points {
            let t = match out.iter_mut().find(|t| t.hz == p.requested_hz) {
                Some(t) => t,
                None => {
                    out.push(Tally {
                        hz: p.requested_hz,
                        held: 0,
                        of: 0,
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            t.of += 1;
            t.held += u32::from(p.held);
        }
        out
    }
}

/// A whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// Lowest frequency searched (Hz).
    pub lo_hz: f64,
    /// Highest frequency searched (Hz).
    pub hi_hz: f64,
    /// Tolerance (fraction of nominal).
    pub tolerance: f64,
    /// One curve per method and load.
    pub curves: Vec<Curve>,
}
