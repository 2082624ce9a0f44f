//! Turning runs into text: tables, cyclictest-compatible histograms, the live view.
//! Measuring code never prints; it hands results here.

pub mod histfile;
pub mod latency;
pub mod live;
pub mod table;
