//! The gates of a noise run (`--max-noise`, `--max-gap`), judged on its stored
//! per-CPU figures, so that a stored or imported run is judged as it was when
//! it was measured.

use crate::record::Run;
use crate::step::value::{Dur, Word};

/// One gate of a noise run and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// `max-noise` or `max-gap`.
    pub name: &'static str,
    /// Whether every CPU kept within it.
    pub passed: bool,
    /// The limit and the worst value, as text (`100 ppm`, `12.0us`).
    pub limit: String,
    /// The worst CPU's value, as text.
    pub worst: String,
    /// The worst CPU's series name.
    pub cpu: String,
}

/// The gates a stored noise run was asked for, judged on its stored per-CPU
/// figures (noise ppm from its metrics, the largest gap from its series).
pub fn gates(run: &Run) -> Vec<Gate> {
    let Some(crate::step::Params::Noise(p)) = run.params.step() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let worst = |f: &dyn Fn(&crate::record::Series) -> f64| {
        run.series
            .iter()
            .map(|s| (f(s), s.name.clone()))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, "-".into()))
    };
    if let Some(limit) = p.max_noise.as_ref().and_then(Word::get) {
        let (ppm, cpu) = worst(&|s| metric(run, &s.name, "noise_ppm").unwrap_or(0.0));
        out.push(Gate {
            name: "max-noise",
            passed: ppm <= limit,
            limit: format!("{limit} ppm"),
            worst: format!("{ppm:.1} ppm"),
            cpu,
        });
    }
    if let Some(limit) = p.max_gap.as_ref().and_then(Dur::get) {
        let (gap, cpu) = worst(&|s| s.summary.max_ns as f64);
        out.push(Gate {
            name: "max-gap",
            passed: gap as u64 <= limit,
            limit: crate::units::Human(limit).to_string(),
            worst: crate::units::Human(gap as u64).to_string(),
            cpu,
        });
    }
    out
}

/// A per-CPU metric of a noise run: `cpu1.noise_ppm`; a run of one CPU (and
/// the series `all`) has only the run's own.
pub fn metric(run: &Run, series: &str, name: &str) -> Option<f64> {
    let own = run.metrics.get(&format!("{series}.{name}"));
    let single = series == "all" || run.series.len() == 1;
    own.or_else(|| run.metrics.get(name).filter(|_| single))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunParams;
    use crate::step::noise::Params;

    /// The gates of a scripted run: 52 ppm against 100, a 50 µs gap
    /// against 1 ns.
    #[test]
    fn gates_judge_the_stored_figures() {
        let mut run = crate::analysis::fixture::run_from_samples("n", &[2_000, 50_000]);
        run.kind = "noise".into();
        let p = Params {
            max_gap: Some("1ns".into()),
            max_noise: Some("100".into()),
            ..Params::default()
        };
        run.params = RunParams::Step(Box::new(crate::step::Params::Noise(p)));
        run.metrics.insert("noise_ppm".into(), 52.0);
        let g = gates(&run);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].name, g[0].passed), ("max-noise", true));
        assert_eq!(g[0].worst, "52.0 ppm");
        assert_eq!((g[1].name, g[1].passed), ("max-gap", false));
        assert_eq!((g[1].worst.as_str(), g[1].cpu.as_str()), ("50us", "cpu0"));
        run.metrics.insert("noise_ppm".into(), 100.5);
        assert!(!gates(&run)[0].passed);
    }
}
