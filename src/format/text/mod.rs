//! Text for terminals: aligned tables, the series table of every probe, the
//! latency report, the live view, comparisons, verdicts and campaign summaries.

pub mod campaign;
pub mod compare;
pub mod latency;
pub mod live;
pub mod series;
pub mod table;
pub mod verdict;
