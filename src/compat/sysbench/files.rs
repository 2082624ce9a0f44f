//! `sysbench fileio prepare` and `cleanup`: the test files in the current
//! directory, made and removed with what sysbench prints while it does so.

use super::params::{in_sysbench_terms, Plan};
use super::report::{banner, file_set};
use crate::error::EXIT_INTERRUPTED;
use crate::step::bench::{prepared, Interrupted};
use crate::step::Params;
use anyhow::Result;
use rtlab_engine::bench::fileio::{file_name, Prepared};
use std::io::Write;

fn fileio(plan: &Plan) -> &crate::step::bench::fileio::Params {
    match &plan.step {
        Params::BenchFileio(p) => p,
        _ => unreachable!("prepare and cleanup are fileio's commands"),
    }
}

/// Prints `text` unless the plan is quiet, at once.
fn say(plan: &Plan, text: &str) {
    if !plan.quiet {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// `prepare`: makes, reuses or extends each file; exit 130 when a signal
/// stops it (the file being made is removed, the others stay for `cleanup`).
pub fn prepare(plan: &Plan) -> Result<i32> {
    let p = fileio(plan);
    let (files, each, _) = file_set(p);
    let flags = if p.direct { "directio" } else { "(none)" };
    say(
        plan,
        &format!(
            "{}\n{files} files, {}Kb each, {}Mb total\nCreating files for the test...\nExtra file open flags: {flags}\n",
            banner(),
            each >> 10,
            (each * files) >> 20
        ),
    );
    let mut on_file = |i: u32, what: Prepared| {
        let verb = match what {
            Prepared::Created => "Creating file",
            Prepared::Reused => "Reusing existing file",
            Prepared::Extended => "Extending existing file",
        };
        say(plan, &format!("{verb} {}\n", file_name(i)));
    };
    let w = match prepared::prepare(p, &mut on_file) {
        Err(e) if e.is::<Interrupted>() => {
            eprintln!("rtlab: interrupted while preparing the files; the ones made are left for 'cleanup'");
            return Ok(EXIT_INTERRUPTED);
        }
        other => other.map_err(|e| in_sysbench_terms(plan.test, e))?,
    };
    match w.bytes {
        0 => say(plan, "No bytes written.\n"),
        n => say(
            plan,
            &format!(
                "{n} bytes written in {:.2} seconds ({:.2} MiB/sec).\n",
                w.secs,
                n as f64 / (1024.0 * 1024.0) / w.secs.max(1e-9)
            ),
        ),
    }
    Ok(0)
}

/// `cleanup`: removes the files.
pub fn cleanup(plan: &Plan) -> Result<i32> {
    say(plan, &format!("{}\nRemoving test files...\n", banner()));
    prepared::cleanup(fileio(plan))?;
    Ok(0)
}
