//! Subcommands defined only when run: `rtlab latency` builds, keeps and runs the
//! definitions of `latency` alone, not those of every subcommand, so that a probe
//! starts with less code, heap and stack touched.

use anyhow::Result;
use clap::builder::{Resettable, StyledStr};
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether subcommands are defined at once rather than deferred.
static AT_ONCE: AtomicBool = AtomicBool::new(false);

/// The whole command line with every subcommand defined at once, in the order
/// clap defines them without deferring (each subcommand's arguments before the
/// global ones): what completion scripts are generated from.
pub fn defined() -> clap::Command {
    AT_ONCE.store(true, Relaxed);
    let cmd = super::Cli::command();
    AT_ONCE.store(false, Relaxed);
    cmd
}

/// A subcommand's arguments, defined only when that subcommand is the one run
/// (`clap::Command::defer`). Help, completions and manual pages build them as
/// before, so what they show does not change.
#[derive(Debug)]
pub struct Deferred<T>(T);

/// Adds `T`'s arguments to `cmd`, keeping the about texts `cmd` already has (the
/// variant's), as when they were added before those texts.
fn keep_about(cmd: clap::Command, augment: fn(clap::Command) -> clap::Command) -> clap::Command {
    let text = |t: Option<&StyledStr>| t.cloned().map_or(Resettable::Reset, Resettable::Value);
    let about = text(cmd.get_about());
    let long_about = text(cmd.get_long_about());
    augment(cmd).about(about).long_about(long_about)
}

impl<T: Args> Args for Deferred<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        if AT_ONCE.load(Relaxed) {
            return T::augment_args(cmd);
        }
        cmd.defer(|c| keep_about(c, T::augment_args))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        cmd.defer(|c| keep_about(c, T::augment_args_for_update))
    }
    fn group_id() -> Option<clap::Id> {
        T::group_id()
    }
}

impl<T> Deferred<T> {
    /// Hands the arguments to their subcommand's handler, run as a function of
    /// its own: the dispatcher holds none of the handlers, so that a run of one
    /// subcommand executes (and maps) that handler alone.
    #[inline(never)]
    pub fn run(self, handler: impl FnOnce(T) -> Result<i32>) -> Result<i32> {
        handler(self.0)
    }
}

// Out of line for the same reason: each subcommand's reading of its matches stays
// its own function, not a branch of one that reads them all.
impl<T: FromArgMatches> FromArgMatches for Deferred<T> {
    #[inline(never)]
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Deferred)
    }
    #[inline(never)]
    fn from_arg_matches_mut(m: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
    fn update_from_arg_matches_mut(&mut self, m: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    #[test]
    fn deferred_subcommands_get_their_arguments_and_keep_the_variant_about() {
        let mut cmd = Cli::command();
        let latency = cmd.find_subcommand("latency").unwrap();
        assert_eq!(latency.get_arguments().count(), 0, "defined when run");
        cmd.build();
        let latency = cmd.find_subcommand("latency").unwrap();
        assert!(latency.get_arguments().any(|a| a.get_id() == "interval"));
        assert_eq!(
            latency.get_about().map(ToString::to_string).as_deref(),
            Some("Timer wake-up latency of periodic RT threads (what cyclictest measures)")
        );
        assert!(latency.get_long_about().is_none(), "not the struct's doc");
    }
}
