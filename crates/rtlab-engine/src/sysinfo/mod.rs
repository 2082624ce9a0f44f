//! The system fingerprint recorded with every run: what kernel, which preemption
//! model, which CPUs, which clock source and governor, under which hypervisor.
//!
//! Everything is read from `/proc` and `/sys` below a configurable root, so tests can
//! point it at a fake tree. A missing file is an unknown value, never an error.

mod preempt;
mod virt;

pub use preempt::PreemptModel;

use crate::rt::cpuset::CpuList;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the running system is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Fingerprint {
    /// Host name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v` (build string, names PREEMPT/PREEMPT_RT/PREEMPT_DYNAMIC).
    pub kernel_version: String,
    /// `uname -m`.
    pub arch: String,
    /// The preemption model in force.
    pub preempt: PreemptModel,
    /// For PREEMPT_DYNAMIC kernels: the current mode (`none`, `voluntary`, `full`,
    /// `lazy`), when it could be read.
    pub preempt_dynamic_mode: Option<String>,
    /// Where the preemption model was read from.
    pub preempt_source: String,
    /// `CONFIG_HZ`, when the kernel configuration was available.
    pub hz: Option<u32>,
    /// Where the kernel configuration was read from, if it was.
    pub kernel_config: Option<String>,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Online CPUs, kernel notation.
    pub cpus_online: String,
    /// Number of online CPUs.
    pub cpu_count: usize,
    /// `isolcpus`/isolated CPUs.
    pub cpus_isolated: String,
    /// `nohz_full` CPUs.
    pub cpus_nohz_full: String,
    /// SMT control state (`on`, `off`, `notsupported`, ...), if known.
    pub smt: Option<String>,
    /// Current clock source.
    pub clocksource: String,
    /// Distinct frequency governors of the online CPUs (empty: no cpufreq).
    pub governors: Vec<String>,
    /// `kernel.sched_rt_runtime_us` (-1: RT throttling off).
    pub sched_rt_runtime_us: Option<i64>,
    /// `kernel.sched_rt_period_us`.
    pub sched_rt_period_us: Option<i64>,
    /// MemTotal in KiB.
    pub mem_total_kib: u64,
    /// MemAvailable in KiB.
    pub mem_available_kib: u64,
    /// The hypervisor, when running virtualised (`kvm`, `vmware`, `hyperv`, ...).
    pub hypervisor: Option<String>,
    /// The container runtime, when running in a container.
    pub container: Option<String>,
}

/// Reads files below a root directory (`/` on a live system).
#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot {
            root: PathBuf::from("/"),
        }
    }
}

impl SysRoot {
    /// A root directory (a fake tree in tests, `/` otherwise).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysRoot { root: root.into() }
    }

    /// The path of an absolute system path under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// A file's content with surrounding whitespace trimmed, or `None`.
    pub fn read(&self, abs: &str) -> Option<String> {
        read_text(self.path(abs)).ok().map(|s| s.trim().to_string())
    }

    /// Whether a path exists.
    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// A file parsed as an integer.
    pub fn read_i64(&self, abs: &str) -> Option<i64> {
        self.read(abs)?.parse().ok()
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A whole text file of `/proc` or `/sys`, read into a buffer of 8 KiB and
/// more. These files say they are empty (`stat` size 0), and a string of
/// unknown size is read 32 bytes first, then in growing pieces; each read of
/// a `/proc` file makes all of it again (`/proc/meminfo`: five times). Read
/// through `take`, not by `File::read_to_end`, which first asks the file's
/// size and position (`statx`, `lseek`): two system calls per file, of the
/// four it needs (open, read, the read that finds the end, close), for an
/// answer these files do not have. A run reads some fifty of them.
pub fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(8192);
    std::fs::File::open(path)?
        .take(u64::MAX)
        .read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// This system's `uname(2)` fields.
pub fn uname() -> Uname {
    // SAFETY: utsname is plain bytes; uname(2) fills it and cannot fail with a
    // valid pointer.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Uname {
        hostname: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
    }
}

/// Collects the fingerprint of the running system. `kernel_config` is the text of
/// the running kernel's configuration when the caller found it (`/proc/config.gz`
/// needs decompressing, which this crate does not do), with where it came from.
pub fn collect(kernel_config: Option<(&str, &str)>) -> Fingerprint {
    collect_from(&SysRoot::default(), uname(), kernel_config)
}

/// The `uname` strings, passed in so tests can fake them.
#[derive(Debug, Clone, Default)]
pub struct Uname {
    /// Node name.
    pub hostname: String,
    /// Release.
    pub release: String,
    /// Version string.
    pub version: String,
    /// Machine.
    pub machine: String,
}

/// The lines of a kernel configuration the fingerprint reads: those that start
/// (after blanks) with one of these.
pub const CONFIG_LINES: [&str; 2] = ["CONFIG_PREEMPT", "CONFIG_HZ="];

/// Collects a fingerprint from the files under `root`.
pub fn collect_from(root: &SysRoot, u: Uname, kernel_config: Option<(&str, &str)>) -> Fingerprint {
    // The few lines read here, found in one pass over the thousands of a
    // configuration rather than in one pass per name.
    let config = kernel_config.map(|(_, text)| lines_starting_with(text, &CONFIG_LINES));
    let config = config.as_deref();
    let (preempt, preempt_dynamic_mode, preempt_source) = preempt::detect(root, &u.version, config);
    let hz = config
        .and_then(|c| config_value(c, "CONFIG_HZ"))
        .and_then(|v| v.parse().ok());
    let online = root
        .read("/sys/devices/system/cpu/online")
        .and_then(|s| CpuList::parse(&s).ok())
        .unwrap_or_default();
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let meminfo = root.read("/proc/meminfo").unwrap_or_default();
    let mut governors: Vec<String> = online
        .cpus()
        .iter()
        .filter_map(|c| {
            root.read(&format!(
                "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            ))
        })
        .collect();
    governors.sort();
    governors.dedup();
    Fingerprint {
        hostname: u.hostname,
        kernel_release: u.release,
        kernel_version: u.version,
        arch: u.machine,
        preempt,
        preempt_dynamic_mode,
        preempt_source,
        hz,
        kernel_config: kernel_config.map(|(src, _)| src.to_string()),
        cmdline: root.read("/proc/cmdline").unwrap_or_default(),
        cpu_model: cpu_model(&cpuinfo),
        cpu_count: online.cpus().len(),
        cpus_online: online.to_string(),
        cpus_isolated: root
            .read("/sys/devices/system/cpu/isolated")
            .unwrap_or_default(),
        cpus_nohz_full: root
            .read("/sys/devices/system/cpu/nohz_full")
            .filter(|s| s != "(null)")
            .unwrap_or_default(),
        smt: root.read("/sys/devices/system/cpu/smt/control"),
        clocksource: root
            .read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default(),
        governors,
        sched_rt_runtime_us: root.read_i64("/proc/sys/kernel/sched_rt_runtime_us"),
        sched_rt_period_us: root.read_i64("/proc/sys/kernel/sched_rt_period_us"),
        mem_total_kib: meminfo_kib(&meminfo, "MemTotal"),
        mem_available_kib: meminfo_kib(&meminfo, "MemAvailable"),
        hypervisor: virt::hypervisor(root, &cpuinfo),
        container: virt::container(root),
    }
}

/// The value of `NAME=value` in a kernel configuration (quotes removed), `None`
/// when unset or absent.
pub fn config_value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    // Found by a substring search rather than line by line: a configuration has
    // thousands of lines, and the fingerprint asks for several names.
    config.match_indices(name).find_map(|(at, _)| {
        let line_start = config[..at].rfind('\n').map_or(0, |n| n + 1);
        if !config[line_start..at].trim().is_empty() {
            return None;
        }
        let rest = config[at + name.len()..].strip_prefix('=')?;
        let value = rest.split('\n').next().unwrap_or_default().trim_end();
        Some(value.trim_matches('"'))
    })
}

/// The lines of `text` that start (after blanks) with one of `prefixes`, in
/// the order of the text. Each prefix is searched for in the whole text (a
/// substring search, much cheaper than looking at every line of a
/// configuration) and kept where it starts a line.
fn lines_starting_with(text: &str, prefixes: &[&str]) -> String {
    let mut starts: Vec<usize> = prefixes
        .iter()
        .flat_map(|p| text.match_indices(p))
        .filter_map(|(at, _)| {
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            text[line_start..at].trim().is_empty().then_some(line_start)
        })
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let mut out = String::new();
    for start in starts {
        let line = text[start..].split('\n').next().unwrap_or_default();
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out
}

fn cpu_model(cpuinfo: &str) -> String {
    // x86 says "model name"; arm64 often only "Hardware"/"CPU part"; some boards
    // give "Model" (Raspberry Pi).
    for key in ["model name", "Model", "Hardware", "cpu model", "Processor"] {
        if let Some(v) = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        }) {
            return v;
        }
    }
    String::new()
}

/// A `/proc/meminfo` field in KiB (0 when absent).
pub fn meminfo_kib(meminfo: &str, key: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.split_whitespace().next()?.parse().ok())?
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, abs: &str, text: &str) {
        let p = root.join(abs.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn reads_a_fake_rt_board() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "/sys/kernel/realtime", "1\n");
        write(dir, "/sys/devices/system/cpu/online", "0-3\n");
        write(dir, "/sys/devices/system/cpu/isolated", "2-3\n");
        write(
            dir,
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "performance\n",
        );
        write(
            dir,
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "ondemand\n",
        );
        write(
            dir,
            "/proc/cpuinfo",
            "processor\t: 0\nModel\t\t: Raspberry Pi 3 Model B Plus Rev 1.3\n",
        );
        write(
            dir,
            "/proc/meminfo",
            "MemTotal:         948304 kB\nMemAvailable:     700000 kB\n",
        );
        write(dir, "/proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        let u = Uname {
            release: "4.19.127-rt55-v7+".into(),
            version: "#1 SMP PREEMPT RT Tue Jun 9 2020".into(),
            ..Uname::default()
        };
        let fp = collect_from(&SysRoot::new(dir), u, Some(("test", "CONFIG_HZ=300\n")));
        assert_eq!(fp.preempt, PreemptModel::Rt);
        assert_eq!(fp.hz, Some(300));
        assert_eq!(fp.cpu_count, 4);
        assert_eq!(fp.cpus_isolated, "2-3");
        assert_eq!(fp.governors, vec!["ondemand", "performance"]);
        assert_eq!(fp.cpu_model, "Raspberry Pi 3 Model B Plus Rev 1.3");
        assert_eq!(fp.mem_total_kib, 948304);
        assert_eq!(fp.sched_rt_runtime_us, Some(950000));
        assert_eq!(fp.hypervisor, None);
    }

    #[test]
    fn an_empty_root_gives_unknowns_not_errors() {
        let dir = tempfile::tempdir().unwrap();
        let fp = collect_from(&SysRoot::new(dir.path()), Uname::default(), None);
        assert_eq!(fp.preempt, PreemptModel::Unknown);
        assert_eq!(fp.cpu_count, 0);
        assert!(fp.governors.is_empty());
    }

    /// The lines a prefix starts, as a reading of every line would find them:
    /// in order, each once, indented ones too, never one where the prefix is not
    /// at its start; CRLF ends dropped.
    #[test]
    fn lines_starting_with_a_prefix_are_found_in_order() {
        let text = "# Linux 6.1 Kernel Configuration\r\nCONFIG_HZ_250=y\r\nCONFIG_HZ=250\r\n\
            # CONFIG_PREEMPT_NONE is not set\n  CONFIG_PREEMPT=y\nX CONFIG_PREEMPT_RT=y\n\
            CONFIG_PREEMPT_DYNAMIC=y CONFIG_HZ=1\nCONFIG_PREEMPT_RT=n";
        let by_line: String = text
            .lines()
            .filter(|l| {
                ["CONFIG_PREEMPT", "CONFIG_HZ="]
                    .iter()
                    .any(|p| l.trim_start().starts_with(p))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let found = lines_starting_with(text, &["CONFIG_PREEMPT", "CONFIG_HZ="]);
        assert_eq!(found, by_line);
        assert_eq!(
            found,
            "CONFIG_HZ=250\n  CONFIG_PREEMPT=y\nCONFIG_PREEMPT_DYNAMIC=y CONFIG_HZ=1\nCONFIG_PREEMPT_RT=n\n"
        );
        assert_eq!(lines_starting_with("", &["CONFIG_HZ="]), "");
    }

    #[test]
    fn config_values_are_found_and_unquoted() {
        let c = "# CONFIG_FOO is not set\nCONFIG_HZ=250\nCONFIG_LOCALVERSION=\"-v7\"\n";
        assert_eq!(config_value(c, "CONFIG_HZ"), Some("250"));
        assert_eq!(config_value(c, "CONFIG_LOCALVERSION"), Some("-v7"));
        assert_eq!(config_value(c, "CONFIG_FOO"), None);
        // Only a whole name at the start of a line, up to the end of its line.
        let c = "CONFIG_PREEMPT_RT=y\nX CONFIG_PREEMPT=y\n  CONFIG_PREEMPT=n \r\nCONFIG_PREEMPT=y";
        assert_eq!(config_value(c, "CONFIG_PREEMPT"), Some("n"));
        assert_eq!(config_value("CONFIG_HZ=", "CONFIG_HZ"), Some(""));
        assert_eq!(config_value("CONFIG_HZ", "CONFIG_HZ"), None);
    }

    #[test]
    fn the_live_system_can_be_read() {
        let fp = collect(None);
        assert!(!fp.kernel_release.is_empty());
        assert!(fp.cpu_count >= 1);
    }
}
