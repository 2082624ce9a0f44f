//! `rtlab completions SHELL` and `rtlab man`: shell completions and manual pages,
//! generated from the command-line definitions so that they never drift.

use super::common;
use super::Cli;
use anyhow::{Context as _, Result};
use clap::{Args, CommandFactory};
use std::path::PathBuf;

/// Print the completion script of a shell.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab completions bash > /etc/bash_completion.d/rtlab
  rtlab completions zsh > \"${fpath[1]}/_rtlab\"
  rtlab completions fish > ~/.config/fish/completions/rtlab.fish")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Print the manual page rtlab(1), or write one page per subcommand.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab man | man -l -
  rtlab man --dir /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Write rtlab.1 and a page per subcommand (rtlab-latency.1, ...) into this
    /// directory instead of printing rtlab(1) [default: print rtlab(1)].
    #[arg(long, value_name = "DIR", value_parser = common::output_dir)]
    dir: Option<PathBuf>,
}

/// The completion script of `shell`: every subcommand a user types, none of
/// the hidden ones rtlab starts itself.
fn script(shell: clap_complete::Shell) -> String {
    let full = super::deferred::defined();
    let mut cmd = clap::Command::new("rtlab")
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true)
        .args(full.get_arguments().cloned())
        .subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rtlab", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `rtlab completions`.
pub fn completions(a: CompletionsArgs) -> Result<i32> {
    common::print(&script(a.shell));
    Ok(0)
}

/// Writes the page of `cmd` and of each of its visible subcommands into `dir`
/// (as `clap_mangen::generate_to` names them), each through
/// [`crate::files::NewFile`].
fn write_pages(cmd: clap::Command, dir: &std::path::Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    crate::files::NewFile::at(&dir.join(man.get_filename())).write_with(|w| man.render(w))
}

/// Runs `rtlab man`.
pub fn man(a: ManArgs) -> Result<i32> {
    let cmd = Cli::command();
    match a.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            common::print(&String::from_utf8_lossy(&out));
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("--dir: cannot create {}", dir.display()))?;
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            write_pages(cmd, &dir)
                .with_context(|| format!("--dir: cannot write the pages into {}", dir.display()))?;
            let mut pages: Vec<String> = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("rtlab") && n.ends_with(".1"))
                .collect();
            pages.sort();
            common::print(&format!(
                "{} page(s) in {}: {}\n",
                pages.len(),
                dir.display(),
                pages.join(" ")
            ));
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand a user can type, with its parent's name: `latency`,
    /// `net ping`, ...
    fn visible() -> Vec<(String, String)> {
        fn walk(cmd: &clap::Command, parent: &str, out: &mut Vec<(String, String)>) {
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                out.push((parent.to_string(), sub.get_name().to_string()));
                walk(sub, sub.get_name(), out);
            }
        }
        let mut out = Vec::new();
        walk(&super::super::deferred::defined(), "rtlab", &mut out);
        out
    }

    #[test]
    fn every_subcommand_is_completed_in_every_shell() {
        let all = visible();
        assert!(all.len() > 30, "{all:?}");
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let text = script(shell);
            for (_, name) in &all {
                assert!(text.contains(name.as_str()), "{shell}: {name} missing");
            }
            assert!(
                !text.contains("__step"),
                "{shell} completes a hidden subcommand"
            );
        }
    }

    #[test]
    fn every_subcommand_has_a_manual_page() {
        let dir = tempfile::tempdir().unwrap();
        man(ManArgs {
            dir: Some(dir.path().to_path_buf()),
        })
        .unwrap();
        for (parent, name) in visible() {
            let page = if parent == "rtlab" {
                format!("rtlab-{name}.1")
            } else {
                format!("rtlab-{parent}-{name}.1")
            };
            let text = std::fs::read_to_string(dir.path().join(&page))
                .unwrap_or_else(|e| panic!("{page}: {e}"));
            assert!(text.contains(".TH"), "{page} is not a manual page");
        }
        assert!(!dir.path().join("rtlab-__step.1").exists());
    }
}
