//! Timer migration off (`kernel.timer_migration = 0`): timers armed on a busy
//! CPU stay there instead of moving to the measured one.

use super::{sysctl, Ctx, Fix, Plan};

/// The candidate.
pub const FIX: Fix = Fix {
    name: "timer_migration",
    title: "timer migration off",
    plan,
};

fn plan(c: &Ctx) -> Result<Plan, String> {
    sysctl(c, "kernel.timer_migration", "0")
}
