//! Loads run while something measures: the spec grammar of `--load SPEC`
//! ([`spec`]) and its named mixes ([`mix`]), the guard that refuses what the
//! machine cannot carry ([`guard`]), the worker processes that run them ([`set`])
//! and the record of what they did ([`record`]).

pub mod guard;
pub mod mix;
pub mod record;
pub mod set;
pub mod spec;
