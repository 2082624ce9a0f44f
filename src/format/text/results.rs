//! The results store in words: the list of runs, the campaigns and one
//! campaign's steps, and the line of each imported run.

use super::compare::value_text;
use super::table::{paragraph, printable, Table};
use crate::analysis::compare::Comparison;
use crate::analysis::metrics::headline_rate;
use crate::format::UNKNOWN;
use crate::record::Run;
use crate::store::{Backed, Campaign, CampaignRow, Checked, RunRow};
use crate::units::TimeUnit;
use std::path::Path;

fn cell(ns: Option<i64>, unit: TimeUnit) -> String {
    ns.map(|v| unit.cell(v as f64))
        .unwrap_or_else(|| UNKNOWN.into())
}

fn count(n: Option<i64>) -> String {
    n.map(|s| s.to_string()).unwrap_or_else(|| UNKNOWN.into())
}

/// `rtlab results list`: one row per run and a count, or a sentence naming the
/// database when no run matches.
pub fn list(rows: &[RunRow], unit: TimeUnit, db: &Path) -> String {
    if rows.is_empty() {
        return format!(
            "no runs match in {}\n",
            printable(&db.display().to_string())
        );
    }
    let steps = rows.iter().any(|r| r.step.is_some());
    let mut t = list_table(rows, unit, true, steps);
    for step_column in [steps, false] {
        if !t.fits() {
            t = list_table(rows, unit, false, step_column);
        }
    }
    format!(
        "{}{} run(s), times in {}\n",
        t.render(),
        rows.len(),
        unit.symbol()
    )
}

/// The table of `rtlab results list`: label and tags in columns when `inline`,
/// else on a line under each run; the campaign step each run was saved as in
/// a column when `steps`, else on that line.
fn list_table(rows: &[RunRow], unit: TimeUnit, inline: bool, steps: bool) -> Table {
    let mut header = vec!["id", "started (UTC)", "kind"];
    if steps {
        header.push("step");
    }
    if inline {
        header.push("label");
    }
    let left = header.len();
    header.extend(["status", "samples", "p99", "max", "misses", "events/s"]);
    if inline {
        header.push("tags");
    }
    let mut t = Table::new(&header);
    for col in 1..=left {
        t.align_left(col);
    }
    if steps {
        t.wrap(3);
    }
    if inline {
        t.align_left(header.len() - 1);
    }
    for r in rows {
        let mut cells = vec![
            r.id.to_string(),
            r.started_at
                .get(..19)
                .unwrap_or(&r.started_at)
                .replace('T', " "),
            r.kind.clone(),
        ];
        if steps {
            cells.push(r.step.clone().unwrap_or_default());
        }
        if inline {
            cells.push(r.label.clone());
        }
        cells.extend([
            r.status.clone(),
            count(r.samples),
            cell(r.p99_ns, unit),
            cell(r.max_ns, unit),
            count(r.misses),
            headline_rate(&r.metrics)
                .map(|v| format!("{v:.1}"))
                .unwrap_or_else(|| UNKNOWN.into()),
        ]);
        if inline {
            cells.push(r.tags.join(","));
            t.row(cells);
            continue;
        }
        let mut note = r.label.clone();
        if !r.tags.is_empty() {
            note.push_str(&format!("  [{}]", r.tags.join(",")));
        }
        if let Some(step) = r.step.as_ref().filter(|_| !steps) {
            note.push_str(&format!("  · step {step}"));
        }
        t.row_with_note(cells, note);
    }
    t
}

/// The figures of `rtlab results list --by`, after the group and its worst run.
const GROUP_FIGURES: [&str; 5] = ["runs", "samples", "p99", "max", "misses"];

/// `rtlab results list --by`: one row per group of `c` (its runs merged, see
/// `analysis::group`), headed by `by` (`host`): its name, its worst run and
/// [`GROUP_FIGURES`]; and a count.
pub fn groups(c: &Comparison, by: &str, unit: TimeUnit) -> String {
    let mut header = vec![by, "worst run"];
    header.extend(GROUP_FIGURES);
    let mut t = Table::new(&header);
    let mut runs = 0;
    for (i, col) in c.columns.iter().enumerate() {
        let worst = col.group.as_ref().and_then(|g| g.worst);
        runs += col.group.as_ref().map_or(0, |g| g.runs.len());
        let worst = worst.map_or_else(|| UNKNOWN.into(), |id| format!("#{id}"));
        let mut cells = vec![col.label.clone(), worst];
        cells.extend(GROUP_FIGURES.iter().map(|name| match c.value(name, i) {
            Some((row, v)) => value_text(row, v, unit),
            None => UNKNOWN.into(),
        }));
        t.row(cells);
    }
    format!(
        "{}{} group(s) of {runs} run(s); p99 of all their samples, max of the worst run; times in {}\n",
        t.render(),
        c.columns.len(),
        unit.symbol()
    )
}

/// `rtlab results campaigns`: one row per campaign.
pub fn campaigns(rows: Vec<CampaignRow>) -> String {
    let mut t = Table::new(&["id", "name", "labels", "status", "created (UTC)", "runs"]);
    for col in [1, 2, 3, 4] {
        t.align_left(col);
    }
    t.wrap(1);
    t.wrap(2);
    for c in rows {
        t.row(vec![
            c.id.to_string(),
            c.name,
            c.labels.join(", "),
            c.status.name().to_string(),
            c.created_at,
            c.runs.to_string(),
        ]);
    }
    t.render()
}

/// `rtlab results campaigns ID`: the campaign and its steps' runs.
pub fn campaign(c: &Campaign) -> String {
    let mut out = format!(
        "campaign {}  {}  [{}]  created {}  ended {}\n",
        c.id,
        printable(&c.name),
        c.status.name(),
        c.created_at,
        c.ended_at.as_deref().unwrap_or("-")
    );
    let mut t = Table::new(&["step", "name", "run"]);
    t.align_left(1);
    t.wrap(1);
    for s in &c.steps {
        t.row(vec![
            s.step_index.to_string(),
            s.step_name.clone(),
            s.run_id.to_string(),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// The line of a run imported from `file` and saved as run `id`.
pub fn imported(id: i64, run: &Run, file: &Path) -> String {
    let what = match &run.total {
        Some(t) => (crate::step::kind(&run.kind).holds)(run, t),
        None => format!("{} load(s)", run.loads.len()),
    };
    let mut out = format!(
        "run {id}: {} '{}' ({what}) from {}\n",
        printable(&run.kind),
        printable(&run.label),
        printable(&file.display().to_string())
    );
    for w in run.warnings.iter().filter(|w| w.code == "truncated") {
        out.push_str(&format!("  note: {}\n", w.message));
    }
    out
}

/// Ids as a short list: runs of consecutive ids as ranges (`3-7, 12`).
fn id_list(ids: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => ids[i].to_string(),
            _ => format!("{}-{}", ids[i], ids[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// `rtlab results check`: whether the store `db` is whole, and when it is
/// not, what SQLite found, which runs can and cannot be read, and how to keep
/// what can.
pub fn checked(db: &Path, c: &Checked) -> String {
    let shown = printable(&db.display().to_string()).into_owned();
    let total = c.readable.len() + c.lost.len();
    let windows = match c.windows {
        Some(n) => format!("{n} monitor window(s)"),
        None => "monitor windows: cannot be read".into(),
    };
    if c.is_whole() {
        return format!(
            "{shown}: whole (SQLite's integrity check found nothing wrong); {total} run(s), {windows}\n"
        );
    }
    let mut out = match c.problems.len() {
        0 => format!("{shown}: damaged\n"),
        n => format!("{shown}: damaged: SQLite's integrity check found {n} problem(s):\n"),
    };
    for p in c.problems.iter().take(5) {
        out.push_str(&paragraph("  ", p));
    }
    if c.problems.len() > 5 {
        out.push_str(&format!("  and {} more\n", c.problems.len() - 5));
    }
    let of = if c.probed {
        "tried one by one, the list of runs being damaged".to_string()
    } else {
        format!("of {total}")
    };
    out.push_str(&format!(
        "runs that can be read: {} ({of})\n",
        c.readable.len()
    ));
    if !c.lost.is_empty() {
        out.push_str(&paragraph("runs that cannot be read: ", &id_list(&c.lost)));
    }
    out.push_str(&format!("{windows}\n"));
    out.push_str(&format!(
        "rtlab writes nothing more to {shown}. To keep what can be read, copy it into a new store:\n  rtlab --db {shown} results push --to NEW.db\nthen put it in the damaged one's place (its write-ahead log removed first):\n  rm -f {shown}-wal {shown}-shm && mv NEW.db {shown}\n"
    ));
    out
}

/// `rtlab results backup`: what was copied from `db` into `file`.
pub fn backed_up(db: &Path, file: &Path, b: &Backed) -> String {
    let runs = b.runs.map_or_else(
        || "runs that cannot be counted".into(),
        |n| format!("{n} run(s)"),
    );
    let mut out = format!(
        "{} copied into {}: {runs}, {:.1} MB\n",
        printable(&db.display().to_string()),
        printable(&file.display().to_string()),
        b.bytes as f64 / 1e6
    );
    if b.problems.is_empty() {
        out.push_str("SQLite's quick check of the copy: ok\n");
    } else {
        out.push_str("SQLite's quick check of the copy found problems, as the store has them (see rtlab results check):\n");
        for p in b.problems.iter().take(5) {
            out.push_str(&paragraph("  ", p));
        }
    }
    out
}
