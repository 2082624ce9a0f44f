//! Personalities: rtlab taking the command lines of the tools it replaces and
//! printing their output layouts, through `rtlab TOOL ARGS` or a link named
//! after the tool.

pub mod sysbench;
