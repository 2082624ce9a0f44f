//! `/dev/cpu_dma_latency` held at 0 µs while measuring: the kernel keeps every
//! CPU out of idle states it takes time to leave, as an RT application does
//! by holding the file open.

use super::{Ctx, Fix, Plan};
use crate::tune::trial::change::Want;

/// The candidate.
pub const FIX: Fix = Fix {
    name: "cpu_dma_latency",
    title: "/dev/cpu_dma_latency held at 0 µs",
    plan,
};

const PATH: &str = "/dev/cpu_dma_latency";

fn plan(c: &Ctx) -> Result<Plan, String> {
    let path = c.root.path(PATH);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{PATH} is not there (no PM QoS in this kernel, or a container without the device)"
            ))
        }
        Err(e) => return Err(format!("reading {PATH}: {e}")),
    };
    let now =
        (bytes.len() >= 4).then(|| i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]));
    if now == Some(0) {
        return Err("already held at 0 µs by another process".into());
    }
    let shown = match now {
        Some(v) if v >= 2_000_000_000 => "no limit".to_string(),
        Some(v) => format!("{v} µs"),
        None => "?".into(),
    };
    Ok(Plan {
        wants: vec![Want::DmaLatency { us: 0 }],
        change: format!("cpu_dma_latency {shown} → 0 µs"),
        by_hand: "hold /dev/cpu_dma_latency open with 0 written in the RT application".into(),
        boot: Some(
            "keep /dev/cpu_dma_latency open at 0 in the RT application (the limit ends when it closes), or boot with processor.max_cstate=1 intel_idle.max_cstate=0"
                .into(),
        ),
        ..Plan::default()
    })
}
