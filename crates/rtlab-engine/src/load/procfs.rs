//! `procfs`: read `/proc/interrupts` and every `/proc/<pid>/stat` and `cmdline`
//! in a loop (what `cat /proc/interrupts; ps w` do in dohell).

use super::{Ctx, LoadError};
use std::io::Read;
use std::sync::atomic::Ordering::Relaxed;

fn read_into(path: &str, buf: &mut Vec<u8>) -> Option<u64> {
    buf.clear();
    let mut f = std::fs::File::open(path).ok()?;
    f.read_to_end(buf).ok().map(|n| n as u64)
}

/// Reads the files until stopped.
pub fn run(ctx: &Ctx, ready: &mut dyn FnMut()) -> Result<(), LoadError> {
    let mut buf = Vec::with_capacity(64 << 10);
    if read_into("/proc/interrupts", &mut buf).is_none() {
        return Err(LoadError::System(
            "cannot read /proc/interrupts (is /proc mounted?)".into(),
        ));
    }
    ready();
    let mut path = String::with_capacity(64);
    while !ctx.stopped() {
        if let Some(n) = read_into("/proc/interrupts", &mut buf) {
            ctx.counters.add(1, n);
        }
        let Ok(dir) = std::fs::read_dir("/proc") else {
            ctx.counters.errors.fetch_add(1, Relaxed);
            continue;
        };
        for e in dir.flatten() {
            if ctx.stopped() {
                return Ok(());
            }
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            for file in ["stat", "cmdline"] {
                path.clear();
                path.push_str("/proc/");
                path.push_str(pid);
                path.push('/');
                path.push_str(file);
                match read_into(&path, &mut buf) {
                    Some(n) => ctx.counters.add(1, n),
                    // The process exited meanwhile: normal.
                    None => {
                        ctx.counters.errors.fetch_add(1, Relaxed);
                    }
                }
            }
        }
        ctx.counters.rounds.fetch_add(1, Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{testutil::run_until, Load};

    #[test]
    fn reads_proc_files() {
        let c = run_until(&Load::Procfs, 50, |c| c.rounds > 0);
        assert!(c.rounds > 0 && c.ops > c.rounds && c.bytes > 0, "{c:?}");
    }
}
