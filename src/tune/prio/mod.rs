//! Thread priorities: list the threads of the system with their policy, priority
//! and affinity; change them by process pattern (what `pgrep | xargs chrt -p` did),
//! remembering what was changed so it can be undone; profiles and systemd units.
//!
//! The threads are read from `/proc` ([`task`]) and picked by pattern
//! ([`select`]); what they should have ([`target`]) is refused for protected
//! threads ([`guard`]), set under the journal ([`change`], [`state`]) one thread
//! at a time ([`thread`]), reported ([`outcome`]) and put back ([`restore`]).
//! Profiles ([`profile`]) are applied ([`apply`]), captured ([`capture`]) and
//! turned into systemd drop-ins ([`mod@unit`]); [`list`] is what `prio list` shows.

pub mod apply;
pub mod capture;
pub mod change;
pub mod guard;
pub mod list;
pub mod outcome;
pub mod profile;
pub mod restore;
pub mod select;
pub mod state;
pub mod target;
pub mod task;
pub mod thread;
pub mod unit;
