//! rtlab: measure, compare and tune Linux real-time behaviour.

mod analysis;
mod cli;
mod compat;
mod error;
mod files;
mod format;
mod import;
mod limits;
mod loads;
mod monitor;
mod progress;
mod record;
mod scenario;
mod step;
mod store;
mod system;
mod trace;
mod tune;
mod units;

use clap::Parser;

fn main() {
    // What loading took (the loader's and every library's start-up code, the
    // pages around the relocations) is not needed again: a command holds only
    // what it runs from here on.
    rtlab_engine::rt::mem::release_unused();
    // Invoked through a symlink named after a tool, rtlab is that tool.
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let result = match compat::Personality::from_argv0(&argv0) {
        Some(p) => compat::invoked_as(p),
        None => cli::run(cli::Cli::parse()),
    };
    let code = match result {
        Ok(code) => code,
        Err(err) => {
            // A message may quote a stored name: shown escaped, line by line.
            let text = format!("{err:#}");
            let lines: Vec<_> = text.lines().map(format::text::table::printable).collect();
            eprintln!("rtlab: error: {}", lines.join("\n"));
            error::exit_code(&err)
        }
    };
    std::process::exit(code);
}
