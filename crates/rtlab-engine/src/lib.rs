//! The measuring core of rtlab.
//!
//! Everything that runs on the target while measuring lives here: real-time
//! primitives ([`rt`]), probes ([`probe`]), load generators ([`load`]), statistics
//! ([`stats`]) and the system fingerprint ([`sysinfo`]). The crate depends only on `libc`, `hdrhistogram` and
//! `serde` so that it stays small and embeddable; storage, reporting and the command
//! line live in the `rtlab` binary.
//!
//! Time is integer nanoseconds everywhere in this crate.

pub mod bench;
pub mod decimal;
pub mod load;
pub mod perf;
pub mod probe;
pub mod proto;
pub mod rt;
pub mod stats;
pub mod sysinfo;
