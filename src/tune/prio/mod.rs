//! Thread priorities: list the threads of the system with their policy, priority
//! and affinity; change them by process pattern (what `pgrep | xargs chrt -p` did),
//! remembering what was changed so it can be undone; profiles and systemd units.

pub mod guard;
pub mod profile;
pub mod select;
pub mod state;
pub mod target;
pub mod task;
pub mod thread;
