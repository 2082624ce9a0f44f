//! Read queries of `rtlab compare` and `rtlab report`: finding runs by id, by label
//! and by label pattern, and turning a run selector into an id.
//!
//! Selectors, as the user writes them:
//! - `12`: the run with id 12 (a label made only of digits is reached with `12@1`);
//! - `vanilla`: the newest *complete* run labelled `vanilla`;
//! - `vanilla@2`: the 2nd newest run labelled `vanilla`, whatever its status
//!   (`@1` is the newest). A label that itself ends in `@2` is matched whole
//!   first.
//!
//! A label whose newest run is a campaign step, and `vanilla@idle` (the step
//! `idle` of the newest campaign with runs labelled `vanilla`), are resolved
//! by `cli::selection` from [`Store::step_of`] and
//! [`Store::campaign_with_label`].
//!
//! "Newest" means the highest id: ids only grow.

use super::db::args;
use super::{CampaignStep, Store};
use crate::error::UsageError;
use anyhow::{bail, Result};

/// A run as selectors see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    /// Id.
    pub id: i64,
    /// Label.
    pub label: String,
    /// Status name (`complete`, `interrupted`, `failed`).
    pub status: String,
}

impl Store {
    /// Whether a run with this id exists.
    pub fn run_exists(&self, id: i64) -> Result<bool> {
        Ok(self
            .conn
            .query_opt("SELECT 1 FROM runs WHERE id = ?1", args![id])?
            .is_some())
    }

    /// Runs with exactly this label, newest first.
    pub fn runs_with_label(&self, label: &str) -> Result<Vec<RunRef>> {
        self.conn
            .query(
                "SELECT id, label, status FROM runs WHERE label = ?1 ORDER BY id DESC",
                args![label],
            )?
            .iter()
            .map(|r| {
                Ok(RunRef {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    status: r.get(2)?,
                })
            })
            .collect()
    }

    /// The distinct labels matching an SQL `LIKE` pattern (`%` any text, `_` one
    /// character, case-insensitive for ASCII), in the order of their oldest run.
    pub fn labels_like(&self, pattern: &str) -> Result<Vec<String>> {
        self.conn
            .query(
                "SELECT label FROM runs WHERE lower(label) LIKE lower(?1)
                 GROUP BY label ORDER BY MIN(id)",
                args![pattern],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// The id a selector names (see the module documentation). Errors are usage
    /// errors that say what exists and how to name it.
    pub fn resolve(&self, selector: &str) -> Result<i64> {
        let sel = selector.trim();
        if sel.is_empty() {
            bail!(UsageError(
                "an empty run selector: give an id, a label or label@N".into()
            ));
        }
        if let Ok(id) = sel.parse::<i64>() {
            if self.run_exists(id)? {
                return Ok(id);
            }
            bail!(UsageError(format!(
                "no run with id {id} in {} (see 'rtlab results list'; a label made of digits is written {id}@1)",
                self.path.display()
            )));
        }
        let runs = self.runs_with_label(sel)?;
        if runs.is_empty() {
            if let Some((label, nth)) = sel.rsplit_once('@') {
                if let Ok(n) = nth.parse::<usize>() {
                    return self.nth_with_label(selector, label, n);
                }
            }
            bail!(UsageError(self.unknown_label(sel)?));
        }
        if let Some(r) = runs.iter().find(|r| r.status == "complete") {
            return Ok(r.id);
        }
        let found: Vec<String> = runs
            .iter()
            .map(|r| format!("{} ({})", r.id, r.status))
            .collect();
        bail!(UsageError(format!(
            "no complete run labelled '{sel}'; its runs are {}: name one by id or as '{sel}@1'",
            found.join(", ")
        )))
    }

    fn nth_with_label(&self, selector: &str, label: &str, n: usize) -> Result<i64> {
        if n == 0 {
            bail!(UsageError(format!(
                "'{selector}': runs are counted from @1 (the newest)"
            )));
        }
        let runs = self.runs_with_label(label)?;
        if runs.is_empty() {
            bail!(UsageError(self.unknown_label(label)?));
        }
        match runs.get(n - 1) {
            Some(r) => Ok(r.id),
            None => bail!(UsageError(format!(
                "'{selector}': there are only {} run(s) labelled '{label}'",
                runs.len()
            ))),
        }
    }

    /// The campaign step a run was saved as: its campaign and the step as
    /// recorded (its base name and repeat).
    pub fn step_of(&self, id: i64) -> Result<Option<(i64, CampaignStep)>> {
        self.conn
            .query_opt(
                "SELECT campaign_id, step_index, step_name, run_id, base_name, repeat_index
                 FROM campaign_runs WHERE run_id = ?1",
                args![id],
            )?
            .map(|r| Ok((r.get(0)?, CampaignStep::of_row(&r, 1)?)))
            .transpose()
    }

    /// The newest campaign holding a run labelled `label`, if any.
    pub fn campaign_with_label(&self, label: &str) -> Result<Option<i64>> {
        self.conn
            .query_opt(
                "SELECT c.campaign_id FROM campaign_runs c JOIN runs r ON r.id = c.run_id
                 WHERE r.label = ?1 ORDER BY r.id DESC LIMIT 1",
                args![label],
            )?
            .map(|r| r.get(0))
            .transpose()
    }

    fn unknown_label(&self, label: &str) -> Result<String> {
        let like = self.labels_like(&format!("%{}%", label.replace(['%', '_'], "")))?;
        let hint = if like.is_empty() {
            "see 'rtlab results list'".to_string()
        } else {
            format!("similar labels: {}", like.join(", "))
        };
        Ok(format!(
            "no run with id or label '{label}' in {} ({hint})",
            self.path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::fixture::run_from_samples;
    use crate::record::Status;
    use crate::store::Store;

    /// A new store of one backend (with the directory that holds its file).
    type Open<'a> = &'a dyn Fn() -> (Option<tempfile::TempDir>, Store);

    fn sqlite() -> (Option<tempfile::TempDir>, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("x.db")).unwrap();
        (Some(dir), store)
    }

    fn store_with(
        open: Open,
        runs: &[(&str, Status)],
    ) -> (Option<tempfile::TempDir>, Store, Vec<i64>) {
        let (dir, mut store) = open();
        let ids = runs
            .iter()
            .map(|(label, status)| {
                let mut run = run_from_samples(label, &[1000, 2000]);
                run.status = *status;
                store.save(&run).unwrap()
            })
            .collect();
        (dir, store, ids)
    }

    const TESTS: [fn(Open); 4] = [
        label_means_newest_complete_run,
        a_label_ending_in_at_n_is_matched_whole_first,
        bad_selectors_say_what_exists,
        label_patterns,
    ];

    #[test]
    fn selectors_on_sqlite() {
        for t in TESTS {
            t(&sqlite);
        }
    }

    #[test]
    #[cfg(feature = "postgres")]
    #[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
    fn selectors_on_postgres() {
        let server = crate::store::pg_cluster::Cluster::start();
        let n = std::cell::Cell::new(0);
        let open = || {
            n.set(n.get() + 1);
            let url = server.create_db(&format!("q{}", n.get()));
            (None, Store::open(std::path::Path::new(&url)).unwrap())
        };
        for t in TESTS {
            t(&open);
        }
    }

    fn label_means_newest_complete_run(open: Open) {
        use Status::*;
        let (_d, store, ids) = store_with(
            open,
            &[
                ("rt", Complete),
                ("rt", Complete),
                ("rt", Interrupted),
                ("stock", Complete),
            ],
        );
        assert_eq!(store.resolve("rt").unwrap(), ids[1]);
        assert_eq!(store.resolve("rt@1").unwrap(), ids[2]);
        assert_eq!(store.resolve("rt@3").unwrap(), ids[0]);
        assert_eq!(store.resolve(&ids[3].to_string()).unwrap(), ids[3]);
        assert_eq!(store.resolve(" stock ").unwrap(), ids[3]);
    }

    fn a_label_ending_in_at_n_is_matched_whole_first(open: Open) {
        use Status::*;
        let (_d, store, ids) =
            store_with(open, &[("v", Complete), ("v", Complete), ("v@2", Complete)]);
        assert_eq!(store.resolve("v@2").unwrap(), ids[2]);
        assert_eq!(store.resolve("v@1").unwrap(), ids[1]);
    }

    fn bad_selectors_say_what_exists(open: Open) {
        use Status::*;
        let (_d, store, ids) = store_with(open, &[("rt", Interrupted), ("4.19-rt", Complete)]);
        let e = store.resolve("rt").unwrap_err().to_string();
        assert!(e.contains(&format!("{} (interrupted)", ids[0])), "{e}");
        let e = store.resolve("rt@5").unwrap_err().to_string();
        assert!(e.contains("only 1 run"), "{e}");
        let e = store.resolve("rt@0").unwrap_err().to_string();
        assert!(e.contains("@1"), "{e}");
        let e = store.resolve("999").unwrap_err().to_string();
        assert!(e.contains("no run with id 999"), "{e}");
        let e = store.resolve("r").unwrap_err().to_string();
        assert!(e.contains("similar labels: rt, 4.19-rt"), "{e}");
        assert!(store.resolve("").is_err());
    }

    fn label_patterns(open: Open) {
        use Status::*;
        let (_d, store, _) = store_with(
            open,
            &[
                ("4.19 rt", Complete),
                ("5.10 rt", Complete),
                ("4.19 stock", Complete),
                ("4.19 rt", Complete),
            ],
        );
        assert_eq!(
            store.labels_like("4.19%").unwrap(),
            vec!["4.19 rt", "4.19 stock"]
        );
        assert_eq!(
            store.labels_like("%rt").unwrap(),
            vec!["4.19 rt", "5.10 rt"]
        );
        assert!(store.labels_like("6.%").unwrap().is_empty());
    }
}
