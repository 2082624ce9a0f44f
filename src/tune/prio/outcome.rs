//! What changing (or restoring) threads did: a row per thread, the counts, and the
//! exit code they make.

use super::task::{Setting, Task};
use crate::error::{EXIT_FAILED, EXIT_OK, EXIT_SYSTEM};
use crate::tune::text_table;

/// `fifo/50 cpus 2-3`: a setting in a table cell.
pub fn setting_text(s: &Setting) -> String {
    format!("{} cpus {}", s.policy_text(), s.affinity)
}

/// The outcome of changing threads, printed as a table and a summary line.
#[derive(Default)]
pub struct Outcome {
    table: Vec<Vec<String>>,
    /// Threads changed (or that would be).
    pub changed: usize,
    /// Threads already as wanted.
    pub unchanged: usize,
    /// Threads the system refused to change.
    pub failed: usize,
    /// Threads that exited meanwhile.
    pub gone: usize,
}

impl Outcome {
    /// Adds a thread's row: its setting before, after, and what happened.
    pub fn row(&mut self, t: &Task, before: &Setting, after: String, result: String) {
        self.table.push(vec![
            t.pid.to_string(),
            t.tid.to_string(),
            t.name.clone(),
            setting_text(before),
            after,
            result,
        ]);
    }

    /// The table and the summary line; `verb` says what was done to the changed
    /// threads, `skipped_kernel` and `protected` count threads left alone.
    pub fn render(&self, verb: &str, skipped_kernel: usize, protected: usize) -> String {
        let mut t = text_table(&["pid", "tid", "thread", "before", "after", "result"]);
        for r in &self.table {
            t.row(r.clone());
        }
        let mut out = t.render();
        out.push_str(&format!(
            "{} {verb}, {} already as wanted, {} failed",
            self.changed, self.unchanged, self.failed
        ));
        if self.gone > 0 {
            out.push_str(&format!(", {} exited meanwhile", self.gone));
        }
        if skipped_kernel > 0 {
            out.push_str(&format!(
                "; {skipped_kernel} kernel threads left alone (--kernel-threads to include them)"
            ));
        }
        if protected > 0 {
            out.push_str(&format!(
                "; {protected} protected threads left alone (see the warnings)"
            ));
        }
        out.push('\n');
        out
    }

    /// 0 when every change was made; 3 when the system refused every thread it
    /// was asked to change (permissions, as documented for exit 3); 1 when some
    /// were changed and others refused.
    pub fn code(&self) -> i32 {
        if self.failed == 0 {
            EXIT_OK
        } else if self.changed == 0 && self.unchanged == 0 {
            EXIT_SYSTEM
        } else {
            EXIT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_3_only_when_every_thread_was_refused() {
        let code = |changed, unchanged, failed, gone| {
            Outcome {
                changed,
                unchanged,
                failed,
                gone,
                ..Outcome::default()
            }
            .code()
        };
        assert_eq!(code(0, 0, 0, 0), EXIT_OK);
        assert_eq!(code(3, 1, 0, 1), EXIT_OK);
        assert_eq!(code(1, 0, 1, 0), EXIT_FAILED);
        assert_eq!(code(0, 1, 1, 0), EXIT_FAILED);
        assert_eq!(code(0, 0, 4, 0), EXIT_SYSTEM);
        assert_eq!(code(0, 0, 1, 2), EXIT_SYSTEM);
    }
}
