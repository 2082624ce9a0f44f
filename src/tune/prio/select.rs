//! Which threads a pattern picks: by process name, command line or PID, and by
//! thread name; kernel threads only when asked.

use super::task::{proc_dir, tasks_of, Task};
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
        format!(
            "{flag}: '{pattern}' is not a valid regular expression ({last}); {}",
            fix_for(&last)
        )
    })
}

/// How to fix a pattern the regex crate refused with `error`: the binary's regex
/// has Perl classes and case folding but not the Unicode property tables.
fn fix_for(error: &str) -> &'static str {
    if error.contains("Unicode property") {
        "Unicode property classes such as \\p{Greek} are not built in: list the characters, e.g. '[α-ω]'"
    } else {
        "escape special characters, e.g. 'a\\.out'"
    }
}

impl Selector {
    /// A selector of the processes whose name (or command line, with `full`)
    /// matches `pattern`, and of their threads whose name matches `threads`.
    pub fn new(
        pattern: &str,
        full: bool,
        threads: Option<&str>,
        kernel_threads: bool,
    ) -> Result<Selector, String> {
        Ok(Selector {
            pattern: compile("PATTERN", pattern)?,
            text: pattern.to_string(),
            full,
            threads: threads.map(|t| compile("--threads", t)).transpose()?,
            kernel_threads,
        })
    }

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

/// Refuses an empty pattern for a change: it matches every process.
pub fn refuse_empty(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err(
            "PATTERN is empty, which matches every process; give '.' if every process is meant"
                .into(),
        );
    }
    Ok(())
}

/// The threads of the processes any of `selectors` matches, from `/proc` (the
/// command lines are read only when a selector matches on them).
pub fn tasks_matching(selectors: &[&Selector]) -> Vec<Task> {
    let full = selectors.iter().any(|s| s.full);
    tasks_of(proc_dir(), full, |pid, name, cmdline| {
        selectors
            .iter()
            .any(|s| s.matches_process(pid, name, cmdline))
    })
}

/// Why nothing was selected by `pattern`, when `skipped` kernel threads would have
/// been.
pub fn no_match(pattern: &str, skipped: usize) -> String {
    format!(
        "no thread matches '{pattern}'{}",
        if skipped > 0 {
            format!(" ({skipped} kernel threads do; add --kernel-threads)")
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtlab_engine::rt::sched::Policy;

    #[test]
    fn perl_classes_and_case_folding_work_and_refusals_say_how_to_fix() {
        let re = compile("PATTERN", r"(?i)^KWORKER/\d+:\w+$").unwrap();
        assert!(re.is_match("kworker/0:1H") && !re.is_match("kworker/x:1"));
        let e = compile("--threads", "a(").unwrap_err();
        assert!(e.starts_with("--threads: 'a(' is not a valid"), "{e}");
        assert!(
            e.ends_with("escape special characters, e.g. 'a\\.out'"),
            "{e}"
        );
        assert!(fix_for("error: Unicode property not found").ends_with("e.g. '[α-ω]'"));
    }

    #[test]
    fn selection_by_name_pid_and_thread() {
        let mut tasks = vec![
            Task::for_test(500, "app", false, Policy::Other),
            Task::for_test(40, "irq/9-acpi", true, Policy::Fifo),
        ];
        let mut rx = Task::for_test(500, "app", false, Policy::Other);
        (rx.tid, rx.name) = (501, "rx".into());
        tasks.push(rx);
        let tids = |s: &Selector| {
            let (hits, skipped) = select(&tasks, s);
            (hits.iter().map(|t| t.tid).collect::<Vec<_>>(), skipped)
        };
        assert_eq!(
            tids(&Selector::new("^app$", false, None, false).unwrap()),
            (vec![500, 501], 0)
        );
        assert_eq!(
            tids(&Selector::new("500", false, Some("^rx"), false).unwrap()),
            (vec![501], 0)
        );
        assert_eq!(
            tids(&Selector::new("irq", false, None, false).unwrap()),
            (vec![], 1)
        );
        assert_eq!(
            tids(&Selector::new("irq", false, None, true).unwrap()),
            (vec![40], 0)
        );
        assert!(Selector::new("(", false, None, false)
            .unwrap_err()
            .starts_with("PATTERN: '('"));
        assert!(Selector::new("a", false, Some("["), false)
            .unwrap_err()
            .starts_with("--threads"));
        assert!(refuse_empty(" ").unwrap_err().contains("PATTERN is empty"));
        assert_eq!(
            no_match("x", 2),
            "no thread matches 'x' (2 kernel threads do; add --kernel-threads)"
        );
    }
}
