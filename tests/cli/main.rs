//! rtlab's integration tests: one binary (one link, shared helpers), a module per
//! area. Each test drives the real `rtlab` binary as a user would, in its own
//! temporary directory.
//!
//! Tests that need root (SCHED_FIFO, network namespaces, tmpfs mounts, changing
//! other processes' priorities) are `#[ignore = "needs root: …"]`: they show as
//! ignored off root, and CI (root) runs them with `--include-ignored`. So is the
//! test that needs Chromium (`browser`).

mod common;
mod compare_common;
mod cyclictest_layout;
mod net_common;
#[cfg(feature = "postgres")]
mod pg_cluster;
mod serve_common;
mod store_common;
mod sysbench_layout;

mod audit_cli;
mod bench_cli;
mod bench_cyclictest_report;
mod bench_interval;
mod bench_rows;
mod browser;
mod campaign_cli;
mod ci_cli;
mod closed_pipe;
mod compare_cli;
mod compare_fleet;
mod compare_probes;
mod compare_steps;
mod compare_unknown;
mod compat_links;
mod compat_stress;
mod cyclictest_cli;
mod cyclictest_system;
mod cyclictest_vs;
mod fleet_cli;
mod golden;
mod hostile_names;
mod hot_code_order;
mod import_cyclictest;
mod import_formats;
mod import_sysbench;
mod import_tools;
mod input_limits;
mod ipc_cli;
mod kconfig_cli;
mod latency_cli;
mod load_cli;
mod map;
mod monitor_cli;
mod net_errors;
mod net_loopback;
mod net_malformed;
mod net_netns;
mod net_stall;
mod noise_cli;
mod noise_trace;
mod perf_cli;
mod perf_steps;
mod periodic_cli;
#[cfg(feature = "postgres")]
mod pg_cli;
mod planted_links;
mod prio_cli;
mod probe_memory;
mod probe_syscalls;
mod progress_cli;
mod readme;
mod report_cli;
mod run_cli;
mod serve;
mod serve_browser;
mod serve_metrics;
#[cfg(feature = "postgres")]
mod serve_pg;
mod serve_slow;
mod store_access;
mod store_cli;
mod store_damage;
mod sysbench_cli;
mod sysbench_vs;
mod tune_cli;
mod why_cli;
mod why_stored;
mod why_timerlat;
mod why_trace;
mod widths;
