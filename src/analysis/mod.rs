//! Analysis: what stored runs say, computed once for every output. Which series
//! stand for a run, how runs differ, how they compare figure by figure, whether
//! they meet their requirements, which risks a campaign shows and which part of
//! a load mix does the damage. Nothing here renders text; `format` does.

pub mod compare;
pub mod diff;
#[cfg(test)]
pub mod fixture;
pub mod series;
pub mod verdict;
