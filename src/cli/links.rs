//! `rtlab install-links`: symlinks that make rtlab run as stress, stress-ng, ….

use crate::compat::links;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// The arguments of `rtlab install-links` (its help is the variant's in `Command`).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab install-links --list
  rtlab install-links ~/bin
  rtlab install-links /usr/local/bin --force")]
pub struct InstallLinksArgs {
    /// Where the links go (e.g. ~/bin, /usr/local/bin); it must exist [default:
    /// none; required unless --list].
    #[arg(value_name = "DIR", required_unless_present = "list")]
    dir: Option<PathBuf>,
    /// Replace a file, or a link to something else, of a personality's name.
    #[arg(long)]
    force: bool,
    /// Show the personalities and, with DIR, what each name there is now.
    #[arg(long, conflicts_with = "force")]
    list: bool,
}

/// Runs `rtlab install-links`.
pub fn run(a: InstallLinksArgs) -> Result<i32> {
    let text = if a.list {
        links::list(a.dir.as_deref())?
    } else {
        links::install(
            a.dir.as_deref().unwrap_or(std::path::Path::new(".")),
            a.force,
        )?
    };
    print!("{text}");
    Ok(0)
}
