//! Which threads a pattern picks: by process name, command line or PID, and by
//! thread name; kernel threads only when asked.

use super::task::Task;
use regex::Regex;

/// Which threads a pattern selects.
#[derive(Debug, Clone)]
pub struct Selector {
    /// Matched against the process name, or the command line with `full`; a
    /// plain number selects that PID.
    pub pattern: Regex,
    /// The pattern as given.
    pub text: String,
    /// Match the whole command line instead of the process name.
    pub full: bool,
    /// Only threads whose name matches this.
    pub threads: Option<Regex>,
    /// Include kernel threads.
    pub kernel_threads: bool,
}

/// Why a pattern was refused.
pub fn compile(flag: &str, pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| {
        let detail = e.to_string();
        let last = detail.lines().last().unwrap_or("").trim().to_string();
        format!("{flag}: '{pattern}' is not a valid regular expression ({last}); escape special characters, e.g. 'a\\.out'")
    })
}

impl Selector {
    /// Whether the process (by PID, name or command line) matches; threads and
    /// kernel threads are judged by [`select`].
    pub fn matches_process(&self, pid: i32, name: &str, cmdline: &str) -> bool {
        match self.text.parse::<i32>() {
            Ok(want) => pid == want,
            Err(_) if self.full && !cmdline.is_empty() => self.pattern.is_match(cmdline),
            Err(_) => self.pattern.is_match(name),
        }
    }
}

/// The threads a selector picks, and how many kernel threads it left out.
pub fn select<'a>(tasks: &'a [Task], s: &Selector) -> (Vec<&'a Task>, usize) {
    let own = std::process::id() as i32;
    let mut skipped_kernel = 0;
    let mut out = Vec::new();
    for t in tasks.iter().filter(|t| t.pid != own) {
        if !s.matches_process(t.pid, &t.process, &t.cmdline)
            || s.threads.as_ref().is_some_and(|r| !r.is_match(&t.name))
        {
            continue;
        }
        if t.kernel && !s.kernel_threads {
            skipped_kernel += 1;
            continue;
        }
        out.push(t);
    }
    (out, skipped_kernel)
}
