//! Probes: code that measures. Each probe pre-allocates everything, runs a bounded
//! loop on its own threads, and hands back per-thread results on join.

mod ended;
pub mod ipc;
pub mod latency;
pub mod net;
pub mod noise;
pub mod periodic;
pub mod samples;
