//! `rtlab presets`: the built-in scenarios.

use super::common::print;
use crate::error::bad_flag;
use crate::scenario::{parse, presets};
use anyhow::Result;
use clap::{Args, Subcommand};

/// List or print the built-in scenarios (copy one to edit it).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab presets list
  rtlab presets show quick > my-board.toml")]
pub struct PresetsArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// One line per preset: name, steps, what it reproduces.
    #[command(after_long_help = "Examples:
  rtlab presets list
  rtlab presets list --db /tmp/x.db")]
    List,
    /// Print a preset's TOML.
    #[command(after_long_help = "Examples:
  rtlab presets show lab
  rtlab presets show quick > my-board.toml")]
    Show {
        /// The preset.
        name: String,
    },
}

/// Runs `rtlab presets`.
pub fn run(a: PresetsArgs) -> Result<i32> {
    match a.what {
        What::List => {
            let mut out = String::new();
            for p in presets::PRESETS {
                let s = parse(p.name, p.text)?;
                out.push_str(&format!(
                    "{:<10} {:>2} step(s)  {}\n",
                    p.name,
                    s.steps.len(),
                    s.description.unwrap_or_default()
                ));
            }
            print(&out);
        }
        What::Show { name } => {
            let p = presets::get(&name).ok_or_else(|| {
                bad_flag(
                    "presets show",
                    format!("no preset '{name}' (presets: {})", presets::names()),
                )
            })?;
            print(p.text);
        }
    }
    Ok(0)
}
