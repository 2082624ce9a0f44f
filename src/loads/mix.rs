//! Named mixes of loads: one spec that runs several loads at once, each part
//! also runnable alone.

/// A named mix of loads that can also be run part by part.
pub struct Mix {
    /// Name used as a spec.
    pub name: &'static str,
    /// What it reproduces.
    pub about: &'static str,
    /// Each part as a spec of its own.
    pub parts: &'static [&'static str],
}

/// The mixes.
pub const MIXES: &[Mix] = &[Mix {
    name: "dohell",
    about: "Xenomai's dohell: cat /proc/interrupts, ps w, hackbench, dd if=/dev/zero of=/dev/null, ls -lR /, disk writes",
    parts: &["procfs", "msg", "memcopy", "fswalk", "io"],
}];
