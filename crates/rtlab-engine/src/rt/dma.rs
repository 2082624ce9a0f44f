//! The `/dev/cpu_dma_latency` guard: while the file is held open with a value
//! written to it, the CPU idle governor keeps every CPU out of C-states whose exit
//! latency is above that value (Documentation/power/pm_qos_interface.rst).

use std::fs::{File, OpenOptions};
use std::io::Write;

/// Path of the PM QoS device.
pub const DMA_LATENCY_PATH: &str = "/dev/cpu_dma_latency";

/// Holds the PM QoS request for as long as it lives; dropping it closes the file,
/// which releases the request.
#[derive(Debug)]
pub struct DmaLatencyGuard {
    _file: File,
    value_us: i32,
}

impl DmaLatencyGuard {
    /// Opens the device and requests a maximum wake-up latency of `value_us` µs
    /// (0 keeps CPUs in C0). Fails when the device is missing or not writable.
    pub fn request(value_us: i32) -> std::io::Result<DmaLatencyGuard> {
        let mut file = OpenOptions::new().write(true).open(DMA_LATENCY_PATH)?;
        // The interface takes a binary 32-bit value (or a hex string).
        file.write_all(&value_us.to_ne_bytes())?;
        Ok(DmaLatencyGuard {
            _file: file,
            value_us,
        })
    }

    /// The value requested, in µs.
    pub fn value_us(&self) -> i32 {
        self.value_us
    }
}
