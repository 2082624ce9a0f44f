//! The timerlat tracer's split of a run's latency, in words.

use super::table::paragraph;
use crate::record::why::Why;
use crate::units::Human;

/// The timerlat tracer's IRQ versus thread latency, overall and per CPU, as
/// rtla shows them ("" without the tracer).
pub fn lines(why: &Why) -> String {
    let Some(t) = &why.timerlat else {
        return String::new();
    };
    let mut out = paragraph(
        "",
        &format!(
            "timerlat: worst IRQ latency {}, worst thread latency {} ({} samples)",
            Human(t.irq_max_ns),
            Human(t.thread_max_ns),
            t.samples
        ),
    );
    for c in &t.per_cpu {
        out.push_str(&format!(
            "  cpu {}: IRQ avg {} max {}, thread avg {} max {} ({} samples)\n",
            c.cpu,
            Human(c.irq_avg_ns),
            Human(c.irq_max_ns),
            Human(c.thread_avg_ns),
            Human(c.thread_max_ns),
            c.samples
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::why;
    use crate::record::why::{Timerlat, TimerlatCpu};

    #[test]
    fn timerlat_is_shown_with_or_without_spikes() {
        let mut w = why::tests::why();
        w.timerlat = Some(Timerlat {
            irq_max_ns: 7_000,
            thread_max_ns: 9_000,
            samples: 3,
            per_cpu: vec![TimerlatCpu {
                cpu: 1,
                samples: 3,
                irq_avg_ns: 2_000,
                irq_max_ns: 7_000,
                thread_avg_ns: 6_500,
                thread_max_ns: 9_000,
            }],
        });
        let lines = "timerlat: worst IRQ latency 7us, worst thread latency 9us (3 samples)\n\
                     \x20 cpu 1: IRQ avg 2us max 7us, thread avg 6.5us max 9us (3 samples)\n";
        assert!(why::render(&w).ends_with(lines), "{}", why::render(&w));
        assert!(why::end_of_run(&w, Some(3)).ends_with(lines));
        w.spikes_total = 0;
        assert!(why::render(&w).ends_with(lines));
        assert!(why::summary(&w, None).ends_with(lines));
    }
}
