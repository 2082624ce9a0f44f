//! Audit and tuning: is this system ready for real-time work ([`audit`]), which
//! threads run at which priority ([`prio`]), what a kernel configuration does for
//! latency ([`kconfig`]), and what each fix is worth under load ([`trial`]), every
//! change undoable through a journal ([`journal`]).

pub mod audit;
pub mod journal;
pub mod kconfig;
pub mod prio;
pub mod trial;

use crate::format::text::table::Table;

/// A table whose columns are all text, left-aligned, wrapping when the table is
/// too wide.
pub fn text_table(header: &[&str]) -> Table {
    let mut t = Table::new(header);
    for col in 0..header.len() {
        t.align_left(col);
        t.wrap(col);
    }
    t
}
