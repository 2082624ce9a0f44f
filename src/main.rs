//! rtlab: measure, compare and tune Linux real-time behaviour.

mod analysis;
mod cli;
mod compat;
mod error;
mod format;
mod import;
mod limits;
mod loads;
mod record;
mod scenario;
mod step;
mod store;
mod system;
mod tune;
mod units;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("rtlab: error: {err:#}");
            error::exit_code(&err)
        }
    };
    std::process::exit(code);
}
