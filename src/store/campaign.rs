//! Campaigns: one invocation of a scenario (`rtlab run`), its steps and the runs
//! each step saved. See the API list in the module doc of `store`.

use super::Store;
use crate::error::UsageError;
use crate::record::now_rfc3339;
use anyhow::{bail, Context, Result};
use rtlab_engine::sysinfo::Fingerprint;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// Where a campaign stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CampaignStatus {
    /// Steps are still running (or the runner died: `ended_at` stays empty).
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

/// One saved run of a campaign step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignStep {
    /// Position of the step in the scenario (0-based).
    pub step_index: i64,
    /// The step's name.
    pub step_name: String,
    /// The run it saved.
    pub run_id: i64,
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
}

/// Fails unless campaign `id` exists.
pub(super) fn require(conn: &rusqlite::Connection, id: i64, path: &str) -> Result<()> {
    let found: Option<i64> = conn
        .query_row("SELECT id FROM campaigns WHERE id = ?1", [id], |r| r.get(0))
        .optional()?;
    if found.is_none() {
        bail!(UsageError(format!("no campaign with id {id} in {path}")));
    }
    Ok(())
}

impl Store {
    /// Starts a campaign (status `running`) and returns its id.
    pub fn create_campaign(
        &mut self,
        name: &str,
        scenario: &str,
        fingerprint: &Fingerprint,
    ) -> Result<i64> {
        let tx = self.write_tx()?;
        tx.execute(
            "INSERT INTO campaigns (name, scenario, fingerprint, status, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                name,
                scenario,
                serde_json::to_string(fingerprint)?,
                CampaignStatus::Running.name(),
                now_rfc3339()
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    /// Records that step `step_index` (`step_name`) of `campaign` saved run
    /// `run_id`, and sets the run's campaign. A run belongs to one campaign.
    pub fn add_campaign_run(
        &mut self,
        campaign: i64,
        step_index: i64,
        step_name: &str,
        run_id: i64,
    ) -> Result<()> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        require(&tx, campaign, &path)?;
        Self::require_runs(&tx, &[run_id], &path)?;
        tx.execute(
            "INSERT INTO campaign_runs (campaign_id, step_index, step_name, run_id)
             VALUES (?1, ?2, ?3, ?4)",
            params![campaign, step_index, step_name, run_id],
        )
        .with_context(|| format!("run {run_id} already belongs to a campaign"))?;
        tx.execute(
            "UPDATE runs SET campaign = ?1, record = json_set(record, '$.campaign', ?1)
             WHERE id = ?2",
            params![campaign, run_id],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Sets a campaign's status; a final status also sets `ended_at`.
    pub fn set_campaign_status(&mut self, campaign: i64, status: CampaignStatus) -> Result<()> {
        let path = self.path.display().to_string();
        let tx = self.write_tx()?;
        require(&tx, campaign, &path)?;
        let ended = (status != CampaignStatus::Running).then(now_rfc3339);
        tx.execute(
            "UPDATE campaigns SET status = ?2, ended_at = ?3 WHERE id = ?1",
            params![campaign, status.name(), ended],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A campaign with its steps.
    pub fn load_campaign(&self, id: i64) -> Result<Campaign> {
        let path = self.path.display().to_string();
        require(&self.conn, id, &path)?;
        let (name, scenario, fp, status, created_at, ended_at): (
            String,
            String,
            String,
            String,
            String,
            Option<String>,
        ) = self.conn.query_row(
            "SELECT name, scenario, fingerprint, status, created_at, ended_at
             FROM campaigns WHERE id = ?1",
            [id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )?;
        let mut stmt = self.conn.prepare(
            "SELECT step_index, step_name, run_id FROM campaign_runs
             WHERE campaign_id = ?1 ORDER BY step_index, run_id",
        )?;
        let steps = stmt
            .query_map([id], |r| {
                Ok(CampaignStep {
                    step_index: r.get(0)?,
                    step_name: r.get(1)?,
                    run_id: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Campaign {
            id,
            name,
            scenario,
            fingerprint: serde_json::from_str(&fp)
                .with_context(|| format!("campaign {id} is damaged in {path}"))?,
            status: CampaignStatus::parse(&status)
                .with_context(|| format!("campaign {id} has an unknown status '{status}'"))?,
            created_at,
            ended_at,
            steps,
        })
    }

    /// Campaigns, newest first.
    pub fn list_campaigns(&self) -> Result<Vec<CampaignRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT c.id, c.name, c.status, c.created_at, c.ended_at,
                (SELECT count(*) FROM campaign_runs m WHERE m.campaign_id = c.id)
             FROM campaigns c ORDER BY c.id DESC",
        )?;
        let rows = stmt
            .query_map([], |r| {
                let status: String = r.get(2)?;
                Ok(CampaignRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    status: CampaignStatus::parse(&status).unwrap_or(CampaignStatus::Failed),
                    created_at: r.get(3)?,
                    ended_at: r.get(4)?,
                    runs: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
