//! `rtlab cyclictest ARGS`, and rtlab run as `cyclictest`: cyclictest's command
//! line, defaults and output over rtlab's latency probe.

pub mod verbose;
