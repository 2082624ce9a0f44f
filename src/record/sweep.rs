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
    /// Every point, in the order tried.
    pub points: Vec<Point>,
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
