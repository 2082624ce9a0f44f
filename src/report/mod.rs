//! Turning runs into text: tables, cyclictest-compatible histograms, the live view,
//! comparisons, verdicts, SVG plots and HTML reports.
//! Measuring code never prints; it hands results here.

pub mod compare;
pub mod diff;
#[cfg(test)]
pub mod fixture;
pub mod histfile;
pub mod html;
pub mod latency;
pub mod live;
pub mod series;
pub mod svg;
pub mod table;
pub mod verdict;
