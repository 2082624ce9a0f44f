//! Text for terminals: aligned tables, the series table of every probe, the
//! latency report, the live view, comparisons, verdicts, campaign summaries,
//! one run in depth and the results store's listings.

pub mod bench;
pub mod campaign;
pub mod compare;
pub mod decision;
pub mod ipc;
pub mod latency;
pub mod live;
pub mod loads;
pub mod net;
pub mod noise;
pub mod perf;
pub mod periodic;
pub mod results;
pub mod run;
pub mod series;
pub mod table;
pub mod timerlat;
pub mod verdict;
pub mod why;
pub mod windows;
