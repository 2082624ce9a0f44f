//! The search for the highest frequency a method holds: steps up a log scale
//! (`steps_per_decade` points per decade from `lo`) until a point fails or
//! `hi` is reached, then bisects (geometric mean) between the last point held
//! and the first that failed, `refine` times. It assumes that a method which
//! fails at a frequency fails above it too; every point tried is kept, so a
//! plot shows where that did not hold.
//!
//! Each frequency is measured until a majority of `repeats` measurements
//! agrees (2 of 3 by default): one stray spike no longer ends the search at a
//! frequency far below the limit, and where the measurements disagree the
//! record shows it (every measurement is a point of its own).

use crate::record::sweep::Point;

/// What to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    /// Lowest frequency (Hz).
    pub lo_hz: f64,
    /// Highest frequency (Hz).
    pub hi_hz: f64,
    /// Points per decade while stepping up.
    pub steps_per_decade: u32,
    /// Bisections after the first failure.
    pub refine: u32,
    /// Measurements of a frequency: it holds when more than half of them
    /// held (fewer are made once a majority is reached).
    pub repeats: u32,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The highest frequency held (None: not even `lo`).
    pub best_hz: Option<f64>,
    /// Every point, in the order tried.
    pub points: Vec<Point>,
    /// `probe` said stop before the search converged.
    pub truncated: bool,
}

/// Measures `hz` with `probe` until a majority of `s.repeats` measurements
/// agrees, keeping each in `points`: whether it held (None: `probe` said
/// stop first).
fn judge(
    s: &Search,
    hz: f64,
    probe: &mut impl FnMut(f64) -> Option<Point>,
    points: &mut Vec<Point>,
) -> Option<bool> {
    let n = s.repeats.max(1);
    let need = n / 2 + 1;
    let (mut held, mut failed) = (0, 0);
    // Held by `need` measurements, or failed by more than `n - need`.
    while held < need && failed <= n - need {
        let p = probe(hz)?;
        points.push(p);
        if p.held {
            held += 1;
        } else {
            failed += 1;
        }
    }
    Some(held >= need)
}

/// Searches with `probe`, which measures one frequency once (None: stop now).
pub fn search(s: &Search, mut probe: impl FnMut(f64) -> Option<Point>) -> Found {
    let mut found = Found {
        best_hz: None,
        points: Vec::new(),
        truncated: false,
    };
    let step = 10f64.powf(1.0 / f64::from(s.steps_per_decade.max(1)));
    let mut f = s.lo_hz;
    let mut k = 0;
    let mut bad = None;
    loop {
        let Some(held) = judge(s, f, &mut probe, &mut found.points) else {
            found.truncated = true;
            return found;
        };
        if !held {
            bad = Some(f);
            break;
        }
        found.best_hz = Some(f);
        if f >= s.hi_hz {
            break;
        }
        // lo × step^k, rounded to whole Hz so that the frequencies tried read
        // well (and decades land on round numbers).
        k += 1;
        f = (s.lo_hz * step.powi(k)).round().min(s.hi_hz);
    }
    let (Some(mut good), Some(mut bad)) = (found.best_hz, bad) else {
        return found;
    };
    for _ in 0..s.refine {
        let mid = (good * bad).sqrt().round();
        if mid <= good || mid >= bad {
            break;
        }
        let Some(held) = judge(s, mid, &mut probe, &mut found.points) else {
            found.truncated = true;
            break;
        };
        if held {
            good = mid;
            found.best_hz = Some(mid);
        } else {
            bad = mid;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method that holds every frequency up to `limit` Hz and achieves at
    /// most `limit × 1.2` toggles per second.
    fn model(limit: f64) -> impl FnMut(f64) -> Option<Point> {
        move |f| {
            let achieved = f.min(limit * 1.2);
            Some(Point {
                requested_hz: f,
                achieved_hz: achieved,
                worst_deviation: if f <= limit { 0.01 } else { 0.5 },
                missed: 0,
                held: f <= limit,
            })
        }
    }

    fn spec() -> Search {
        Search {
            lo_hz: 1_000.0,
            hi_hz: 10_000_000.0,
            steps_per_decade: 4,
            refine: 6,
            repeats: 1,
        }
    }

    #[test]
    fn it_steps_up_then_bisects_to_the_limit() {
        let f = search(&spec(), model(50_000.0));
        let best = f.best_hz.unwrap();
        assert!(best <= 50_000.0, "{best}");
        // 4 per decade is a factor 1.78; six bisections narrow it below 1%.
        assert!(best > 49_000.0, "{best}");
        assert!(!f.truncated);
        // Stepping: 1k, 1.78k, 3.16k, 5.62k, 10k, 17.8k, 31.6k, 56.2k (fails).
        let steps: Vec<f64> = f.points.iter().take(8).map(|p| p.requested_hz).collect();
        assert_eq!(steps[0], 1_000.0);
        assert_eq!(steps[4], 10_000.0);
        assert_eq!(steps[7], 56_234.0);
        assert!(!f.points[7].held);
        assert_eq!(f.points.len(), 8 + 6);
        // Every point held is at or below the best, every failure above.
        for p in &f.points {
            assert_eq!(p.held, p.requested_hz <= best, "{p:?}");
        }
    }

    #[test]
    fn a_method_that_holds_everything_ends_at_the_top() {
        let f = search(&spec(), model(1e9));
        assert_eq!(f.best_hz, Some(10_000_000.0));
        assert_eq!(f.points.last().unwrap().requested_hz, 10_000_000.0);
        assert_eq!(f.points.len(), 17, "4 decades × 4 steps + the first point");
    }

    #[test]
    fn a_method_that_fails_the_lowest_frequency_holds_none() {
        let f = search(&spec(), model(10.0));
        assert_eq!(f.best_hz, None);
        assert_eq!(f.points.len(), 1);
    }

    #[test]
    fn a_stop_truncates_and_keeps_what_was_found() {
        let mut n = 0;
        let mut m = model(50_000.0);
        let f = search(&spec(), |hz| {
            n += 1;
            (n <= 3).then(|| m(hz)).flatten()
        });
        assert!(f.truncated);
        assert_eq!(f.points.len(), 3);
        assert_eq!(f.best_hz, Some(f.points[2].requested_hz));
    }

    #[test]
    fn a_stray_failure_below_the_limit_is_outvoted_and_kept() {
        // The limit is 50 kHz; the first measurement at 1.778 kHz fails (a
        // spike), as one run in a hundred might.
        let mut m = model(50_000.0);
        let mut spiked = false;
        let noisy = |hz: f64| {
            let mut p = m(hz)?;
            if hz == 1_778.0 && !spiked {
                spiked = true;
                p.held = false;
            }
            Some(p)
        };
        let three = Search {
            repeats: 3,
            ..spec()
        };
        let f = search(&three, noisy);
        let best = f.best_hz.unwrap();
        assert!(best > 49_000.0 && best <= 50_000.0, "{best}");
        // 1 kHz: 2 measurements agree; 1.778 kHz: fail, held, held.
        let at = |hz: f64| -> Vec<bool> {
            f.points
                .iter()
                .filter(|p| p.requested_hz == hz)
                .map(|p| p.held)
                .collect()
        };
        assert_eq!(at(1_000.0), [true, true]);
        assert_eq!(at(1_778.0), [false, true, true]);
        assert_eq!(at(56_234.0), [false, false], "the first failure, twice");
        // One measurement each, the same search stops at the spike.
        let mut m = model(50_000.0);
        let mut spiked = false;
        let once = search(&spec(), |hz| {
            let mut p = m(hz)?;
            if hz == 1_778.0 && !spiked {
                spiked = true;
                p.held = false;
            }
            Some(p)
        });
        assert!(once.best_hz.unwrap() < 1_778.0);
    }

    #[test]
    fn a_majority_is_more_than_half_of_the_repeats() {
        // held, failed, ...: with 2 repeats a frequency must hold twice; with
        // 4, three times (a tie fails).
        let alternating = |n: u32| {
            let mut i = 0;
            let s = Search {
                repeats: n,
                hi_hz: 1_000.0,
                ..spec()
            };
            let f = search(&s, |hz| {
                i += 1;
                Some(Point {
                    requested_hz: hz,
                    achieved_hz: hz,
                    worst_deviation: 0.0,
                    missed: 0,
                    held: i % 2 == 1,
                })
            });
            (f.best_hz.is_some(), f.points.len())
        };
        assert_eq!(alternating(1), (true, 1));
        assert_eq!(alternating(2), (false, 2));
        assert_eq!(alternating(3), (true, 3));
        assert_eq!(alternating(4), (false, 4));
    }
}
