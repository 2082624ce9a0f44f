//! cyclictest's `--spike` list: every wake-up later than the trigger is
//! counted, the first `--spike-nodes` of them listed in the order they happened
//! (`T:%2d Spike:%8ld: TS: %12ld`, the latency in µs or ns with `-N`, the time
//! of the wake-up in µs of the clock), then `spikes = N`.

use rtlab_engine::probe::samples::Sample;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spike {
    thread: usize,
    value: u64,
    at_us: u64,
}

/// The spikes of every thread.
#[derive(Debug)]
pub struct Spikes {
    trigger: u64,
    nodes: usize,
    nsecs: bool,
    /// Per thread, its first `nodes` spikes: the first `nodes` of all are among them.
    kept: Vec<Vec<Spike>>,
    count: u64,
}

impl Spikes {
    /// Spikes above `trigger` (µs, or ns with `nsecs`), `nodes` of them listed.
    pub fn new(trigger: u64, nodes: usize, nsecs: bool) -> Self {
        Spikes {
            trigger,
            nodes,
            nsecs,
            kept: Vec::new(),
            count: 0,
        }
    }

    /// Takes thread `thread`'s wake-ups.
    pub fn add(&mut self, thread: usize, samples: &[Sample]) {
        if self.kept.len() <= thread {
            self.kept.resize(thread + 1, Vec::new());
        }
        for s in samples {
            let value = if self.nsecs {
                s.latency_ns
            } else {
                s.latency_ns / 1000
            };
            if value > self.trigger {
                self.count += 1;
                if self.kept[thread].len() < self.nodes {
                    self.kept[thread].push(Spike {
                        thread,
                        value,
                        at_us: s.at_ns / 1000,
                    });
                }
            }
        }
    }

    /// The list as cyclictest prints it at the end; nothing without a spike.
    pub fn render(&self) -> String {
        if self.count == 0 || self.nodes == 0 {
            return String::new();
        }
        let mut all: Vec<Spike> = self.kept.iter().flatten().copied().collect();
        all.sort_by_key(|s| (s.at_us, s.thread));
        let mut out = String::from("\n");
        for s in all.iter().take(self.nodes) {
            out.push_str(&format!(
                "T:{:2} Spike:{:8}: TS: {:12}\n",
                s.thread, s.value, s.at_us
            ));
        }
        out.push_str(&format!("spikes = {}\n\n", self.count));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(latency_us: u64, at_us: u64) -> Sample {
        Sample {
            cycle: 0,
            latency_ns: latency_us * 1000 + 999,
            at_ns: at_us * 1000 + 5,
        }
    }

    #[test]
    fn the_first_spikes_in_time_order_and_the_count_of_all() {
        let mut sp = Spikes::new(15, 3, false);
        sp.add(
            0,
            &[
                s(27, 3619346582),
                s(10, 3619346600),
                s(27, 3619347581),
                s(18, 3619348572),
            ],
        );
        sp.add(
            1,
            &[s(19, 3619347074), s(15, 3619347075), s(21, 3619348576)],
        );
        assert_eq!(
            sp.render(),
            "\nT: 0 Spike:      27: TS:   3619346582\nT: 1 Spike:      19: TS:   3619347074\nT: 0 Spike:      27: TS:   3619347581\nspikes = 5\n\n"
        );
        assert_eq!(Spikes::new(100, 3, false).render(), "");
        let mut ns = Spikes::new(20_000, 1, true);
        ns.add(0, &[s(27, 1)]);
        assert_eq!(
            ns.render(),
            "\nT: 0 Spike:   27999: TS:            1\nspikes = 1\n\n"
        );
    }
}
