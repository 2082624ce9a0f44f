//! Memory block reads or writes (`rtlab bench memory`, scenario probe
//! `bench.memory`; sysbench memory).

use super::{bytes, size_flag, Common, Lim, DEFAULT_TIME_NS, MIB};
use crate::error::bad_flag;
use crate::limits;
use crate::record::{Run, Warning};
use crate::step::value::Size;
use crate::step::{Machine, Observer};
use anyhow::Result;
use clap::{Args, ValueEnum};
use rtlab_engine::bench::memory::{
    self, Access, HugePool, Memory, MemoryConfig, Method, Oper, Scope,
};
use rtlab_engine::bench::Tally;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The parameters of `rtlab bench memory` and of a `bench.memory` scenario step.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// Bytes moved per event (the default fits in L1; try 64M to measure RAM).
    #[arg(
        long,
        default_value = "1K",
        value_name = "SIZE",
        alias = "memory-block-size"
    )]
    pub block_size: Size,
    /// Stop after moving this much over all threads (e.g. 10G).
    #[arg(
        long,
        default_value = "100G",
        value_name = "SIZE",
        alias = "memory-total-size"
    )]
    pub total_size: Size,
    /// Load or store the words, or neither (`none`: only the loop runs, as
    /// in sysbench).
    #[arg(long, value_enum, default_value_t = OperArg::Write, alias = "memory-oper")]
    pub oper: OperArg,
    /// Word order within a block.
    #[arg(long, value_enum, default_value_t = AccessArg::Seq, alias = "memory-access-mode")]
    pub access: AccessArg,
    /// One block shared by all threads, or one per thread.
    #[arg(long, value_enum, default_value_t = ScopeArg::Global, alias = "memory-scope")]
    pub scope: ScopeArg,
    /// Whose work an event does: `sysbench` (its loops and its bookkeeping per
    /// event, so that MiB/s compare with sysbench's) or `bandwidth` (every
    /// word once per event as fast as the CPU issues the accesses, one clock
    /// read per event: the memory's speed).
    #[arg(long, value_enum, default_value_t = ModeArg::Sysbench)]
    pub mode: ModeArg,
    /// Take the blocks from the HugeTLB pool (huge pages reserved beforehand,
    /// e.g. `sysctl vm.nr_hugepages=16`) instead of ordinary pages.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hugetlb: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
}

bench_step!(
    "bench.memory",
    BenchMemory,
    "bench memory",
    DEFAULT_TIME_NS,
    rates
);

/// What a memory run was asked, in words.
fn what(a: &super::Asked) -> String {
    format!(
        "block {}, {} {} {}, total {}{}{}",
        a.size("block_size"),
        a.word("access"),
        a.word("oper"),
        a.word("scope"),
        a.size("total_size"),
        match a.word("mode") {
            "bandwidth" => ", bandwidth mode",
            _ => "",
        },
        if a.on("hugetlb") { ", huge pages" } else { "" }
    )
}

/// The rate of a memory interval: MiB moved per second.
fn rates(now: &Tally, prev: &Tally, dt: f64) -> String {
    let moved = (now.bytes_read + now.bytes_written) - (prev.bytes_read + prev.bytes_written);
    format!("  MiB/s {:.2}", moved as f64 / dt / MIB)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperArg {
    Read,
    Write,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessArg {
    Seq,
    Rnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeArg {
    Global,
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    Sysbench,
    Bandwidth,
}

/// The workload and its limits, checked.
pub struct Plan {
    lim: Lim,
    cfg: MemoryConfig,
}

impl Params {
    /// The workload and its limits, every value checked on machine `m`.
    pub fn plan(&self, m: &Machine) -> Result<Plan> {
        let lim = self.lim()?;
        let cfg = self.config()?;
        let threads = lim.limits.threads;
        let (need, what) = memory_need(&cfg, threads);
        let need = limits::Need {
            bytes: need,
            what: &what,
            fix: "give a smaller --block-size (or fewer --threads with --scope local)",
        };
        if cfg.hugetlb {
            check_pool(&cfg, threads, HugePool::now())?;
        } else {
            let budget = (m.mem_available > 0).then(|| limits::budget_of(m.mem_available));
            limits::check_memory("--block-size", &need, budget)?;
        }
        if cfg.total_size / cfg.block_size < threads as u64 {
            return Err(bad_flag(
                "--total-size",
                format!(
                    "{} is less than one {} block per thread ({threads} threads); raise --total-size",
                    bytes(cfg.total_size),
                    bytes(cfg.block_size)
                ),
            ));
        }
        Ok(Plan { lim, cfg })
    }

    /// The engine's configuration: sizes read and checked.
    fn config(&self) -> Result<MemoryConfig> {
        let block_size = size_flag("--block-size", &self.block_size)?;
        if block_size % memory::WORD != 0 {
            return Err(bad_flag(
                "--block-size",
                format!(
                    "{} is not a multiple of the {}-byte word; use e.g. 1K or 64M",
                    self.block_size,
                    memory::WORD
                ),
            ));
        }
        if (self.mode, self.oper) == (ModeArg::Bandwidth, OperArg::None) {
            return Err(bad_flag(
                "--oper",
                "none moves no byte, so it has no bandwidth; use read or write, or --mode sysbench",
            ));
        }
        Ok(MemoryConfig {
            block_size,
            total_size: size_flag("--total-size", &self.total_size)?,
            oper: match self.oper {
                OperArg::Read => Oper::Read,
                OperArg::Write => Oper::Write,
                OperArg::None => Oper::None,
            },
            access: match self.access {
                AccessArg::Seq => Access::Seq,
                AccessArg::Rnd => Access::Rnd,
            },
            scope: match self.scope {
                ScopeArg::Global => Scope::Global,
                ScopeArg::Local => Scope::Local,
            },
            method: match self.mode {
                ModeArg::Sysbench => Method::Sysbench,
                ModeArg::Bandwidth => Method::Bandwidth,
            },
            hugetlb: self.hugetlb,
        })
    }

    /// What it was asked, for [`super::asked`].
    pub(super) fn asked(&self) -> Value {
        let word = |v: Value| v.as_str().map(str::to_string).unwrap_or_default();
        let mut asked = json!({
            "block_size": self.block_size.get(),
            "total_size": self.total_size.get(),
            "oper": word(json!(self.oper)),
            "access": word(json!(self.access)),
            "scope": word(json!(self.scope)),
            "mode": word(json!(self.mode)),
        });
        if self.hugetlb {
            asked["hugetlb"] = json!(true);
        }
        super::with_threads(&self.common, asked)
    }
}

/// Refuses a run whose blocks the HugeTLB pool cannot hold, saying how many
/// huge pages to reserve.
fn check_pool(c: &MemoryConfig, threads: usize, pool: Option<HugePool>) -> Result<()> {
    let Some(pool) = pool else {
        return Err(bad_flag(
            "--hugetlb",
            "this kernel has no HugeTLB pool (no HugePages_Free in /proc/meminfo); run without it",
        ));
    };
    let blocks = c.blocks(threads) as u64;
    let need = pool.pages_for(c.block_size).saturating_mul(blocks);
    if need > pool.free {
        return Err(bad_flag(
            "--hugetlb",
            format!(
                "{blocks} block(s) of {} need {need} huge page(s) of {}, and the pool has {} free of {}; reserve them as root (sysctl vm.nr_hugepages={}) or run without --hugetlb",
                bytes(c.block_size),
                bytes(pool.page),
                pool.free,
                pool.total,
                pool.total + need - pool.free
            ),
        ));
    }
    Ok(())
}

/// Memory the blocks take, and what they are.
fn memory_need(c: &MemoryConfig, threads: usize) -> (u64, String) {
    let what = match c.scope {
        Scope::Global => format!("one {} block", bytes(c.block_size)),
        Scope::Local => format!(
            "{threads} thread(s) × one {} block (--scope local)",
            bytes(c.block_size)
        ),
    };
    (c.block_size.saturating_mul(c.blocks(threads) as u64), what)
}

/// Moves blocks until the total size, a limit or a signal; the run has the
/// MiB moved and the rates. A block that fits in a cache is warned about.
pub fn measure(p: &Params, obs: &mut dyn Observer) -> Result<Run> {
    let Plan { lim, cfg: c } = p.plan(&Machine::this())?;
    let mut warnings = Vec::new();
    let caches = memory::caches();
    if let Some(cache) = memory::fits_in(&caches, c.block_size) {
        warnings.push(Warning::new(
            "in_cache",
            format!(
                "the {} block fits in the {} cache ({}): this measures the cache, not RAM; --block-size {} fits in no cache",
                bytes(c.block_size),
                cache.name(),
                bytes(cache.size),
                bytes(memory::block_beyond_caches(&caches)).replace("iB", ""),
            ),
        ));
    }
    let w = Memory::new(c, lim.limits.threads).map_err(|e| bad_flag("--block-size", e))?;
    let mut m = super::measure(&w, lim, p.recorded(), warnings, obs);
    let t = m.total.tally;
    if c.oper != Oper::None {
        let moved = (t.bytes_read + t.bytes_written) as f64;
        m.run.metrics.insert("total_mib".into(), moved / MIB);
        super::rate(&mut m.run, "mib_per_s", moved / MIB);
    }
    super::rate(&mut m.run, "ops_per_s", t.ops as f64);
    Ok(m.run)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{machine, refusal, round_trip};
    use super::*;

    #[test]
    fn sizes_may_be_numbers_or_words() {
        let p: Params = serde_json::from_value(json!({
            "block_size": 4096, "total_size": "4M", "oper": "read", "access": "rnd",
            "scope": "local", "threads": 2, "time": "1s",
        }))
        .unwrap();
        assert_eq!((p.block_size.text(), p.scope), ("4096", ScopeArg::Local));
        round_trip(&p);
        let a = p.asked();
        assert_eq!(
            (a["block_size"].as_u64(), a["threads"].as_u64()),
            (Some(4096), Some(2))
        );
        assert_eq!(a["oper"], "read");
        assert_eq!(a["mode"], "sysbench");
    }

    #[test]
    fn every_oper_and_mode_reaches_the_engine() {
        let p: Params = serde_json::from_value(json!({"oper": "none", "access": "rnd"})).unwrap();
        let c = p.plan(&machine(8 << 30)).unwrap().cfg;
        assert_eq!(
            (c.oper, c.access, c.method),
            (Oper::None, Access::Rnd, Method::Sysbench)
        );
        let p: Params = serde_json::from_value(json!({"mode": "bandwidth"})).unwrap();
        let c = p.plan(&machine(8 << 30)).unwrap().cfg;
        assert_eq!((c.oper, c.method), (Oper::Write, Method::Bandwidth));
        assert_eq!((c.block_size, c.total_size), (1024, 100 << 30));
    }

    #[test]
    fn huge_pages_are_counted_before_the_run() {
        let pool = |free, total| {
            Some(HugePool {
                page: 2 << 20,
                total,
                free,
            })
        };
        let p: Params = serde_json::from_value(json!({
            "block_size": "3M", "scope": "local", "hugetlb": true, "threads": 2,
        }))
        .unwrap();
        assert_eq!(p.asked()["hugetlb"], true);
        round_trip(&p);
        let c = p.config().unwrap();
        assert!(c.hugetlb);
        // Two blocks of 3 MiB: two huge pages each.
        assert!(check_pool(&c, 2, pool(4, 4)).is_ok());
        let e = refusal(check_pool(&c, 2, pool(3, 8)));
        assert_eq!(
            e,
            "--hugetlb: 2 block(s) of 3MiB need 4 huge page(s) of 2MiB, and the pool has 3 free of 8; \
             reserve them as root (sysctl vm.nr_hugepages=9) or run without --hugetlb"
        );
        assert!(refusal(check_pool(&c, 2, None)).contains("no HugeTLB pool"));
        // Not asked: not recorded, and a record without it reads as ordinary pages.
        let p: Params = serde_json::from_value(json!({"block_size": "3M"})).unwrap();
        assert!(!p.hugetlb && p.asked().get("hugetlb").is_none());
        assert!(serde_json::to_value(&p).unwrap().get("hugetlb").is_none());
    }

    #[test]
    fn refusals_name_the_flag() {
        let with = |f: fn(&mut Params)| {
            let mut p = Params::default();
            f(&mut p);
            refusal(p.plan(&machine(8 << 30)))
        };
        assert!(
            with(|p| p.block_size = "12".into()).starts_with("--block-size: 12 is not a multiple")
        );
        assert!(with(|p| p.block_size = "lots".into()).starts_with("--block-size: 'lots'"));
        assert!(with(|p| p.total_size = "0".into()).starts_with("--total-size: '0' is zero"));
        assert!(with(|p| {
            p.total_size = "1K".into();
            p.common.threads = 2;
        })
        .starts_with("--total-size: 1KiB is less than one 1KiB block per thread"));
        assert!(with(|p| {
            p.oper = OperArg::None;
            p.mode = ModeArg::Bandwidth;
        })
        .starts_with("--oper: none moves no byte"));
        let e = with(|p| p.block_size = "16G".into());
        assert!(e.starts_with("--block-size: one 16GiB block needs"), "{e}");
        // Memory unknown: nothing refused for it.
        let p = Params {
            block_size: "16G".into(),
            ..Default::default()
        };
        assert!(p.plan(&machine(0)).is_ok());
    }
}
