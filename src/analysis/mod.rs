//! Analysis: what stored runs say, computed once for every output. Which series
//! stand for a run and which figures its source reported, whether it finished,
//! how runs differ, how they compare figure by figure, whether they meet their
//! requirements, which risks a campaign shows, which part of a load mix does the
//! damage and which metric is a benchmark's headline. Nothing here lays out a
//! table or a document; `format` does.

pub mod arms;
pub mod attribution;
pub mod compare;
pub mod decision;
pub mod diff;
#[cfg(test)]
pub mod fixture;
pub mod group;
pub mod interval;
pub mod metrics;
pub mod outcome;
pub mod repeats;
pub mod risks;
pub mod series;
pub mod status;
pub mod verdict;

/// A figure at least this many times its baseline's is a harm worth naming: a
/// loaded step's p99.9 against the idle step's, a mix part's tail against no load.
pub const HARMFUL_RATIO: f64 = 2.0;
