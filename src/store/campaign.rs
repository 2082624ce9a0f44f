//! Campaigns: one invocation of a scenario (`rtlab run`), its steps and the runs
//! each step saved. See the API list in the module doc of `store`.
//!
//! A campaign records the process that runs it (its pid, that process's start
//! time and the boot id). A `running` campaign whose process is gone (killed,
//! crashed, the machine rebooted, or the pid now belongs to another process) is
//! read as `interrupted`: it can be resumed, and it is never shown as running.

use super::db::{args, Conn, Row};
use super::Store;
use crate::error::UsageError;
use crate::record::now_rfc3339;
use anyhow::{bail, Context, Result};
use rtlab_engine::sysinfo::Fingerprint;
use serde::{Deserialize, Serialize};

/// Where a campaign stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CampaignStatus {
    /// Steps are running in a live process (a campaign whose process is gone is
    /// read as [`CampaignStatus::Interrupted`]).
    Running,
    /// Every step ran.
    Complete,
    /// Stopped by a signal; the runs saved so far are kept.
    Interrupted,
    /// A step could not run.
    Failed,
}

impl CampaignStatus {
    /// The name stored and printed.
    pub fn name(self) -> &'static str {
        match self {
            CampaignStatus::Running => "running",
            CampaignStatus::Complete => "complete",
            CampaignStatus::Interrupted => "interrupted",
            CampaignStatus::Failed => "failed",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }
}

/// The process that runs a campaign: a pid is reused, a pid with its start time
/// (and the boot) is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// Its start time in clock ticks after boot (`/proc/PID/stat` field 22).
    pub start: u64,
    /// `/proc/sys/kernel/random/boot_id` (empty when unreadable).
    pub boot: String,
}

impl Owner {
    /// This process.
    pub fn current() -> Option<Owner> {
        Owner::of(std::process::id())
    }

    /// Process `pid`, if it exists and has not ended (a zombie has ended).
    pub fn of(pid: u32) -> Option<Owner> {
        let stat = rtlab_engine::sysinfo::read_text(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) is in parentheses and may hold spaces and
        // parentheses itself: fields are counted after the last ')'.
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
        if matches!(fields.first(), Some(&"Z") | Some(&"X") | None) {
            return None;
        }
        let start = fields.get(19)?.parse().ok()?;
        let boot = rtlab_engine::sysinfo::read_text("/proc/sys/kernel/random/boot_id")
            .map(|b| b.trim().to_string())
            .unwrap_or_default();
        Some(Owner { pid, start, boot })
    }

    /// Whether this very process still runs.
    pub fn alive(&self) -> bool {
        Owner::of(self.pid).as_ref() == Some(self)
    }
}

/// The owner stored in columns `at`, `at + 1`, `at + 2` of a campaign's row
/// (pid, start, boot), if all of it was stored.
fn owner_from(r: &Row, at: usize) -> Result<Option<Owner>> {
    let (pid, start, boot): (Option<i64>, Option<i64>, Option<String>) =
        (r.get(at)?, r.get(at + 1)?, r.get(at + 2)?);
    Ok((|| {
        Some(Owner {
            pid: u32::try_from(pid?).ok()?,
            start: u64::try_from(start?).ok()?,
            boot: boot?,
        })
    })())
}

/// The owner columns' values for `me`.
fn owner_args(me: Option<&Owner>) -> [super::db::Value; 3] {
    [
        me.map(|o| o.pid).into(),
        me.map(|o| o.start as i64).into(),
        me.map(|o| o.boot.clone()).into(),
    ]
}

/// The status to show and act on: a `running` campaign whose process is gone
/// (or was never recorded, by an older rtlab) was interrupted.
fn effective(status: CampaignStatus, owner: Option<&Owner>) -> CampaignStatus {
    match status {
        CampaignStatus::Running if !owner.is_some_and(Owner::alive) => CampaignStatus::Interrupted,
        s => s,
    }
}

/// One saved run of a campaign step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignStep {
    /// Position of the step in the campaign's plan (0-based).
    pub step_index: i64,
    /// The step's name (`idle #2`).
    pub step_name: String,
    /// Its name without the repeat (`idle`): the same for every repeat of a
    /// step.
    pub base_name: String,
    /// Which repeat it is (1-based).
    pub repeat: u32,
    /// The run it saved.
    pub run_id: i64,
}

impl CampaignStep {
    /// A step known by its name alone (stored by an older rtlab, or named
    /// so by its maker): its base name and repeat read from the name, which
    /// ends in ` #r` when it is a repeat.
    pub fn of_name(step_index: i64, step_name: String, run_id: i64) -> CampaignStep {
        let (base_name, repeat) = match step_name.rsplit_once(" #") {
            Some((base, r)) if !base.is_empty() && r.bytes().all(|b| b.is_ascii_digit()) => {
                match r.parse::<u32>() {
                    Ok(r) if r >= 1 => (base.to_string(), r),
                    _ => (step_name.clone(), 1),
                }
            }
            _ => (step_name.clone(), 1),
        };
        CampaignStep {
            step_index,
            step_name,
            base_name,
            repeat,
            run_id,
        }
    }

    /// The step of a row `step_index, step_name, run_id, base_name,
    /// repeat_index` (the last two NULL in rows of an older rtlab).
    pub(super) fn of_row(r: &Row, at: usize) -> Result<CampaignStep> {
        let (index, name, run): (i64, String, i64) = (r.get(at)?, r.get(at + 1)?, r.get(at + 2)?);
        let (base, repeat): (Option<String>, Option<i64>) = (r.get(at + 3)?, r.get(at + 4)?);
        Ok(match (base, repeat.and_then(|r| u32::try_from(r).ok())) {
            (Some(base_name), Some(repeat)) => CampaignStep {
                step_index: index,
                step_name: name,
                base_name,
                repeat,
                run_id: run,
            },
            _ => CampaignStep::of_name(index, name, run),
        })
    }
}

/// A campaign with its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Campaign {
    /// Id.
    pub id: i64,
    /// Name (the scenario's name or file).
    pub name: String,
    /// The scenario text as run.
    pub scenario: String,
    /// The system it ran on.
    pub fingerprint: Fingerprint,
    /// Where it stands.
    pub status: CampaignStatus,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// When it reached a final status.
    pub ended_at: Option<String>,
    /// Runs by step, in step order.
    pub steps: Vec<CampaignStep>,
}

/// One line of a campaign listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignRow {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Status.
    pub status: CampaignStatus,
    /// Creation time.
    pub created_at: String,
    /// End time, when final.
    pub ended_at: Option<String>,
    /// Number of runs saved.
    pub runs: i64,
    /// The labels of its runs, sorted, each once.
    pub labels: Vec<String>,
}

/// Stores `step` of campaign `campaign` as saving run `run_id`.
pub(super) fn insert_step(
    c: &dyn Conn,
    campaign: i64,
    step: &CampaignStep,
    run_id: i64,
) -> Result<()> {
    c.execute(
        "INSERT INTO campaign_runs
            (campaign_id, step_index, step_name, run_id, base_name, repeat_index)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        args![
            campaign,
            step.step_index,
            &step.step_name,
            run_id,
            &step.base_name,
            i64::from(step.repeat)
        ],
    )?;
    Ok(())
}

/// Fails unless campaign `id` exists.
pub(super) fn require(conn: &dyn Conn, id: i64, path: &str) -> Result<()> {
    let found = conn.query_opt("SELECT id FROM campaigns WHERE id = ?1", args![id])?;
    if found.is_none() {
        bail!(UsageError(format!("no campaign with id {id} in {path}")));
    }
    Ok(())
}

impl Store {
    /// Starts a campaign (status `running`, owned by this process) and returns
    /// its id.
    pub fn create_campaign(
        &mut self,
        name: &str,
        scenario: &str,
        fingerprint: &Fingerprint,
    ) -> Result<i64> {
        let [pid, start, boot] = owner_args(Owner::current().as_ref());
        let head = args![
            name,
            scenario,
            serde_json::to_string(fingerprint)?,
            CampaignStatus::Running.name(),
            now_rfc3339(),
            super::db::new_uuid()?,
        ];
        let all: Vec<_> = head.iter().cloned().chain([pid, start, boot]).collect();
        self.write(|c| {
            c.query_one(
                "INSERT INTO campaigns (name, scenario, fingerprint, status, created_at, uuid,
                    owner_pid, owner_start, owner_boot)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
                &all,
            )?
            .get(0)
        })
    }

    /// Takes over a campaign to continue it: it becomes `running`, owned by this
    /// process. Refused while another live process runs it.
    pub fn claim_campaign(&mut self, campaign: i64) -> Result<()> {
        let path = self.path.display().to_string();
        let me = Owner::current();
        self.write(|c| {
            require(c, campaign, &path)?;
            let r = c.query_one(
                "SELECT status, owner_pid, owner_start, owner_boot FROM campaigns WHERE id = ?1",
                args![campaign],
            )?;
            let status: String = r.get(0)?;
            let owner = owner_from(&r, 1)?;
            if CampaignStatus::parse(&status) == Some(CampaignStatus::Running)
                && owner.as_ref().is_some_and(Owner::alive)
                && owner != me
            {
                let pid = owner.map(|o| o.pid).unwrap_or_default();
                bail!(UsageError(format!(
                    "campaign {campaign} is still running in process {pid}; wait for it, or stop it with 'kill -INT {pid}' and resume then"
                )));
            }
            let [pid, start, boot] = owner_args(me.as_ref());
            c.execute(
                "UPDATE campaigns SET status = ?2, ended_at = NULL,
                    owner_pid = ?3, owner_start = ?4, owner_boot = ?5
                 WHERE id = ?1",
                &[campaign.into(), CampaignStatus::Running.name().into(), pid, start, boot],
            )?;
            Ok(())
        })
    }

    /// Records that `step` of `campaign` saved its run, and sets the run's
    /// campaign. A run belongs to one campaign.
    pub fn add_campaign_run(&mut self, campaign: i64, step: &CampaignStep) -> Result<()> {
        let path = self.path.display().to_string();
        let run_id = step.run_id;
        self.write(|c| {
            require(c, campaign, &path)?;
            Self::require_runs(c, &[run_id], &path)?;
            let taken = c.query_opt(
                "SELECT campaign_id FROM campaign_runs WHERE run_id = ?1",
                args![run_id],
            )?;
            if taken.is_some() {
                bail!(UsageError(format!(
                    "run {run_id} already belongs to a campaign"
                )));
            }
            insert_step(c, campaign, step, run_id)?;
            super::set_record_field(c, run_id, "campaign", campaign.into())?;
            c.execute(
                "UPDATE runs SET campaign = ?1 WHERE id = ?2",
                args![campaign, run_id],
            )?;
            Ok(())
        })
    }

    /// Sets a campaign's status; a final status also sets `ended_at`.
    pub fn set_campaign_status(&mut self, campaign: i64, status: CampaignStatus) -> Result<()> {
        let path = self.path.display().to_string();
        let ended = (status != CampaignStatus::Running).then(now_rfc3339);
        self.write(|c| {
            require(c, campaign, &path)?;
            c.execute(
                "UPDATE campaigns SET status = ?2, ended_at = ?3 WHERE id = ?1",
                args![campaign, status.name(), ended],
            )?;
            Ok(())
        })
    }

    /// A campaign with its steps.
    pub fn load_campaign(&self, id: i64) -> Result<Campaign> {
        let path = self.path.display().to_string();
        require(&*self.conn, id, &path)?;
        let r = self.conn.query_one(
            "SELECT name, scenario, fingerprint, status, created_at, ended_at,
                owner_pid, owner_start, owner_boot
             FROM campaigns WHERE id = ?1",
            args![id],
        )?;
        let (fp, status): (String, String) = (r.get(2)?, r.get(3)?);
        let owner = owner_from(&r, 6)?;
        let steps = self
            .conn
            .query(
                "SELECT step_index, step_name, run_id, base_name, repeat_index FROM campaign_runs
                 WHERE campaign_id = ?1 ORDER BY step_index, run_id",
                args![id],
            )?
            .iter()
            .map(|r| CampaignStep::of_row(r, 0))
            .collect::<Result<_>>()?;
        Ok(Campaign {
            id,
            name: r.get(0)?,
            scenario: r.get(1)?,
            fingerprint: serde_json::from_str(&fp)
                .with_context(|| format!("campaign {id} is damaged in {path}"))?,
            status: effective(
                CampaignStatus::parse(&status)
                    .with_context(|| format!("campaign {id} has an unknown status '{status}'"))?,
                owner.as_ref(),
            ),
            created_at: r.get(4)?,
            ended_at: r.get(5)?,
            steps,
        })
    }

    /// Campaigns, newest first.
    pub fn list_campaigns(&self) -> Result<Vec<CampaignRow>> {
        let rows = self.conn.query(
            "SELECT c.id, c.name, c.status, c.created_at, c.ended_at,
                (SELECT count(*) FROM campaign_runs m WHERE m.campaign_id = c.id),
                c.owner_pid, c.owner_start, c.owner_boot
             FROM campaigns c ORDER BY c.id DESC",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                let status: String = r.get(2)?;
                let owner = owner_from(r, 6)?;
                Ok(CampaignRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    status: effective(
                        CampaignStatus::parse(&status).unwrap_or(CampaignStatus::Failed),
                        owner.as_ref(),
                    ),
                    created_at: r.get(3)?,
                    ended_at: r.get(4)?,
                    runs: r.get(5)?,
                    labels: self.campaign_labels(r.get(0)?)?,
                })
            })
            .collect()
    }

    /// The labels of the runs of campaign `id`, sorted, each once.
    fn campaign_labels(&self, id: i64) -> Result<Vec<String>> {
        self.conn
            .query(
                "SELECT DISTINCT r.label FROM runs r JOIN campaign_runs m ON m.run_id = r.id
                 WHERE m.campaign_id = ?1 ORDER BY r.label",
                args![id],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_owner(store: &Store, id: i64, pid: Option<i64>, start: Option<i64>) {
        store
            .conn
            .execute(
                "UPDATE campaigns SET owner_pid = ?2, owner_start = ?3 WHERE id = ?1",
                args![id, pid, start],
            )
            .unwrap();
    }

    fn shown(store: &Store, id: i64) -> (CampaignStatus, CampaignStatus) {
        let listed = store.list_campaigns().unwrap();
        let row = listed.iter().find(|r| r.id == id).unwrap();
        (row.status, store.load_campaign(id).unwrap().status)
    }

    #[test]
    fn this_process_is_its_own_live_owner() {
        let me = Owner::current().unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(me.alive());
        assert_eq!(Owner::of(me.pid), Some(me.clone()));
        // The same pid with another start time is another process.
        let reused = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!reused.alive());
        let rebooted = Owner {
            boot: "another boot".into(),
            ..me
        };
        assert!(!rebooted.alive());
    }

    fn a_running_campaign_whose_process_is_gone_reads_as_interrupted(mut store: Store) {
        let fp = Fingerprint::default();
        let id = store.create_campaign("c", "", &fp).unwrap();
        let running = CampaignStatus::Running;
        assert_eq!(
            shown(&store, id),
            (running, running),
            "this process runs it"
        );

        let me = Owner::current().unwrap();
        // The pid reused by another process: the start time differs.
        set_owner(&store, id, Some(me.pid.into()), Some(me.start as i64 + 1));
        let interrupted = CampaignStatus::Interrupted;
        assert_eq!(shown(&store, id), (interrupted, interrupted));
        // A pid that does not exist (above the kernel's pid_max limit).
        set_owner(&store, id, Some(1 << 23), Some(1));
        assert_eq!(shown(&store, id), (interrupted, interrupted));
        // Made by an rtlab that recorded no owner.
        set_owner(&store, id, None, None);
        assert_eq!(shown(&store, id), (interrupted, interrupted));

        // Final statuses are never reinterpreted.
        store
            .set_campaign_status(id, CampaignStatus::Complete)
            .unwrap();
        assert_eq!(
            shown(&store, id),
            (CampaignStatus::Complete, CampaignStatus::Complete)
        );
    }

    fn claiming_takes_over_a_dead_campaign_but_not_a_live_one(mut store: Store) {
        let id = store
            .create_campaign("c", "", &Fingerprint::default())
            .unwrap();
        set_owner(&store, id, Some(1 << 23), Some(1));
        store.claim_campaign(id).unwrap();
        let running = CampaignStatus::Running;
        assert_eq!(shown(&store, id), (running, running));
        // Now run by a live process that is not this one (PID 1 exists).
        let init = Owner::of(1).expect("pid 1 exists");
        set_owner(&store, id, Some(1), Some(init.start as i64));
        let e = store.claim_campaign(id).unwrap_err().to_string();
        assert!(e.contains("still running in process 1"), "{e}");
        assert!(store.claim_campaign(id + 1).is_err(), "no such campaign");
    }

    const TESTS: [fn(Store); 2] = [
        a_running_campaign_whose_process_is_gone_reads_as_interrupted,
        claiming_takes_over_a_dead_campaign_but_not_a_live_one,
    ];

    #[test]
    fn owners_on_sqlite() {
        crate::store::tests::each_on_sqlite(&TESTS);
    }

    #[test]
    #[cfg(feature = "postgres")]
    #[ignore = "needs PostgreSQL: initdb and pg_ctl under /usr/lib/postgresql/*/bin"]
    fn owners_on_postgres() {
        crate::store::tests::each_on_postgres(&TESTS);
    }
}
