//! `rtlab why`: the spike analysis stored with a run, again.

use super::common::{write_output, Context};
use crate::error::UsageError;
use crate::format::{json, run_name, text};
use anyhow::Result;
use clap::Args;

/// Why a stored run's latency spikes (or noise gaps) happened: each one's
/// decomposition (the timer interrupt, other IRQs, softirqs, NMIs, threads,
/// idle exit, what is unexplained), worst first, and the causes ranked over the
/// run. Runs measured with `rtlab latency --trace` (or `rtlab run --trace`) or
/// `rtlab noise --trace` carry it.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  rtlab why 12
  rtlab why 12 --spikes 3
  rtlab why 'my label' --json")]
pub struct WhyArgs {
    /// The run: an id (12), a label (the newest complete run with that label) or
    /// label@N (the Nth newest run with that label, any status; @1 is the newest).
    #[arg(value_name = "RUN")]
    run: String,
    /// Print the analysis as one JSON document (times in ns).
    #[arg(long)]
    json: bool,
    /// Decompose at most this many spikes (or gaps), worst first [default: all
    /// stored].
    #[arg(long, value_name = "N")]
    spikes: Option<usize>,
}

/// Runs `rtlab why`.
pub fn run(ctx: &Context, a: WhyArgs) -> Result<i32> {
    let store = ctx.open_read()?;
    let run = store.load(store.resolve(&a.run)?)?;
    let name = run_name(&run);
    let Some(mut why) = run.why else {
        let how = crate::step::kind(&run.kind)
            .why
            .map_or_else(crate::step::kind::analysed, str::to_string);
        return Err(UsageError(format!(
            "run {name} ({}) has no spike analysis: {how}",
            run.kind
        ))
        .into());
    };
    if let Some(n) = a.spikes {
        why.spikes.truncate(n);
    }
    let out = if a.json {
        let doc = serde_json::json!({"run": run.id, "label": run.label, "why": why});
        json::tagged("why", &doc)?
    } else {
        format!(
            "run {}\n{}",
            text::table::printable(&name),
            text::why::render(&why)
        )
    };
    write_output("--output", None, &out)?;
    Ok(0)
}
