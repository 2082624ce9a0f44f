//! Loads run while something measures: the spec grammar of `--load SPEC`
//! ([`spec`]) and its named mixes ([`mix`]), the guard that refuses what the
//! machine cannot carry ([`guard`]), and the worker processes that run them
//! ([`set`]).

pub mod guard;
pub mod mix;
pub mod set;
pub mod spec;
