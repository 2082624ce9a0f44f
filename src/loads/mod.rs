//! Loads run while something measures: the spec grammar of `--load SPEC`
//! ([`spec`]) and its named mixes ([`mix`]), the guard that refuses what the
//! machine cannot carry ([`guard`]), where the workers run ([`placement`]), the
//! worker processes ([`set`]) and the record of what they did ([`record`]), and
//! loads beside a probe ([`running`]).

pub mod guard;
pub mod mix;
pub mod placement;
pub mod record;
pub mod running;
pub mod set;
pub mod spec;
