//! What the periodic thread toggles: nothing, a file or sysfs attribute, or a
//! GPIO line through the GPIO character device (v2 uAPI); and the edges of a
//! line wired back, timed by the kernel.

use super::Params;
use crate::error::{bad_flag, SystemError};
use anyhow::Result;
use gpiocdev::line::{EdgeDetection, Value};
use gpiocdev::Request;
use rtlab_engine::probe::periodic::{FileOutput, NoOutput, Output, PeriodStats};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A GPIO line: its chip's device and its offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `/dev/gpiochipN`.
    pub chip: PathBuf,
    /// Line offset on the chip.
    pub offset: u32,
}

/// Reads `CHIP:LINE` (`/dev/gpiochip0:17`, `gpiochip0:17`), given to `flag`;
/// refuses a chip that does not exist.
pub fn line(flag: &str, text: &str) -> Result<Line> {
    let (chip, offset) = text.rsplit_once(':').ok_or_else(|| {
        bad_flag(
            flag,
            format!("'{text}' is not CHIP:LINE (e.g. /dev/gpiochip0:17)"),
        )
    })?;
    let offset: u32 = offset
        .trim()
        .parse()
        .map_err(|_| bad_flag(flag, format!("'{offset}' is not a line number")))?;
    let chip = if chip.contains('/') {
        PathBuf::from(chip)
    } else {
        PathBuf::from("/dev").join(chip)
    };
    if !chip.exists() {
        return Err(bad_flag(
            flag,
            format!(
                "{}: no such GPIO chip (the chips of this machine: ls /dev/gpiochip*; none means no GPIO controller or its driver is not loaded)",
                chip.display()
            ),
        ));
    }
    Ok(Line { chip, offset })
}

/// Checks the targets' syntax and that they exist.
pub fn check(p: &Params) -> Result<()> {
    if let Some(path) = &p.output {
        let parent = std::path::Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty());
        if parent.is_some_and(|d| !d.is_dir()) {
            return Err(bad_flag(
                "--output",
                format!("{path}: its directory does not exist"),
            ));
        }
    }
    if let Some(g) = &p.gpio {
        line("--gpio", g)?;
    }
    if let Some(g) = &p.gpio_in {
        line("--gpio-in", g)?;
    }
    Ok(())
}

/// The output, opened before measuring.
pub enum Target {
    /// Pure timing.
    None(NoOutput),
    /// A file or sysfs attribute.
    File(FileOutput),
    /// A GPIO line requested as output.
    Gpio(Request, u32),
}

impl Output for Target {
    #[inline]
    fn set(&mut self, high: bool) -> bool {
        match self {
            Target::None(n) => n.set(high),
            Target::File(f) => f.set(high),
            Target::Gpio(r, offset) => {
                let v = if high { Value::Active } else { Value::Inactive };
                r.set_value(*offset, v).is_ok()
            }
        }
    }
}

/// Opens the output `p` asks for.
pub fn open(p: &Params) -> Result<Target> {
    if let Some(path) = &p.output {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| SystemError(format!("--output {path}: {e}")))?;
        return Ok(Target::File(FileOutput(f)));
    }
    if let Some(g) = &p.gpio {
        let l = line("--gpio", g)?;
        let r = Request::builder()
            .on_chip(&l.chip)
            .with_consumer("rtlab periodic")
            .with_line(l.offset)
            .as_output(Value::Inactive)
            .request()
            .map_err(|e| {
                SystemError(format!(
                    "--gpio {g}: the kernel refused the line as output: {e}"
                ))
            })?;
        return Ok(Target::Gpio(r, l.offset));
    }
    Ok(Target::None(NoOutput))
}

/// The edges of a line, timed by the kernel, read on a thread of their own
/// while the probe runs.
pub struct Edges {
    request: Request,
}

impl Edges {
    /// Requests `--gpio-in` as an input with both edges detected.
    pub fn open(spec: &str) -> Result<Edges> {
        let l = line("--gpio-in", spec)?;
        let request = Request::builder()
            .on_chip(&l.chip)
            .with_consumer("rtlab periodic edges")
            .with_line(l.offset)
            .as_input()
            .with_edge_detection(EdgeDetection::BothEdges)
            .request()
            .map_err(|e| {
                SystemError(format!(
                    "--gpio-in {spec}: the kernel refused edge detection on the line: {e}"
                ))
            })?;
        Ok(Edges { request })
    }

    /// Reads edges until `stop`, each ending a period in `stats` (kernel
    /// timestamps, CLOCK_MONOTONIC); the read errors seen.
    pub fn read(&self, stats: &mut PeriodStats, stop: &AtomicBool) -> u64 {
        let mut errors = 0;
        while !stop.load(Ordering::Relaxed) {
            match self.request.wait_edge_event(Duration::from_millis(50)) {
                Ok(false) => {}
                Ok(true) => match self.request.read_edge_event() {
                    Ok(ev) => stats.toggle(ev.timestamp_ns),
                    Err(_) => errors += 1,
                },
                Err(_) => {
                    errors += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        errors
    }
}
