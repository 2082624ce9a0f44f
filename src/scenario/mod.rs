//! Scenario files and presets: a campaign described in TOML, validated with errors
//! that point at the file, line and key, and expanded into a plan of steps.
//!
//! ```toml
//! name = "messaging server"
//! label = "rhel7-rt"
//! [defaults]
//! duration = "60s"
//! [[step]]
//! probe = "latency"
//! interval = "200us"
//! matrix.load = ["none", "dohell", "vm:40:256M", "cpu:100"]
//! matrix.priority = [0, 90]
//! [requirements]
//! alarm = "5ms"
//! ```

pub mod campaign;
pub mod check;
pub mod parse;
#[cfg(test)]
mod parse_props;
pub mod plan;
pub mod presets;
pub mod runner;

pub use parse::parse;
pub use plan::{expand, PlannedStep, DEFAULT_MAX_STEPS};

use std::collections::BTreeMap;

/// A parameter value, validated against its probe's schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    /// A string (duration, size, CPU list, word, load spec).
    Str(String),
    /// A whole number.
    Int(i64),
    /// true/false.
    Bool(bool),
    /// Several strings (load specs).
    List(Vec<String>),
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Str(s) => f.write_str(s),
            Val::Int(i) => write!(f, "{i}"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::List(l) => f.write_str(&l.join("+")),
        }
    }
}

impl Val {
    /// A parameter's value as its step records it: a string, a whole number,
    /// true/false or an array of strings; `None` for anything else.
    pub fn from_json(v: &serde_json::Value) -> Option<Val> {
        use serde_json::Value as J;
        match v {
            J::String(s) => Some(Val::Str(s.clone())),
            J::Number(n) => n.as_i64().map(Val::Int),
            J::Bool(b) => Some(Val::Bool(*b)),
            J::Array(a) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Val::List),
            _ => None,
        }
    }

    /// As JSON, for the step's parameters.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Val::Str(s) => s.clone().into(),
            Val::Int(i) => (*i).into(),
            Val::Bool(b) => (*b).into(),
            Val::List(l) => l.clone().into(),
        }
    }
}

/// Where a step's parameter was given, for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The parameter.
    pub key: String,
    /// How the file spells it: `defaults.interval`, `step[2].matrix.cpus`.
    pub path: String,
    /// 1-based line.
    pub line: usize,
}

/// One `[[step]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDef {
    /// 1-based line of its `[[step]]`.
    pub line: usize,
    /// Where each of its parameters was given.
    pub sources: Vec<Source>,
    /// Given name, if any.
    pub name: Option<String>,
    /// The probe it runs.
    pub probe: &'static crate::step::Probe,
    /// Fixed parameters (defaults merged in), in file order.
    pub params: Vec<(String, Val)>,
    /// Matrix axes, in file order: key → values.
    pub matrix: Vec<(String, Vec<Val>)>,
    /// How many times each combination runs.
    pub repeat: u32,
    /// Run the step's load mix part by part as well (load attribution).
    pub attribute: bool,
}

/// A whole scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// Label given to its runs (default: the kernel's).
    pub label: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Steps in order.
    pub steps: Vec<StepDef>,
    /// Requirement name → budget (ns).
    pub requirements: BTreeMap<String, u64>,
    /// The file it came from (or `preset NAME`), for errors.
    pub file: String,
    /// The TOML it came from.
    pub text: String,
}
