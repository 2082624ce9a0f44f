//! A plain text table with aligned columns that fits in [`WIDTH`] columns, and
//! [`printable`], the one way a stored string (a label, a host name, a tag:
//! text another program or another user wrote) reaches a terminal: every
//! cell, heading, note and paragraph goes through it.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The widest line a table prints.
pub const WIDTH: usize = 100;

/// A wrapping column is made as narrow as its longest word, but for words
/// longer than this, which are cut.
const LONG_WORD: usize = 24;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Left (text).
    Left,
    /// Right (numbers).
    Right,
}

/// A table under construction.
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    wraps: Vec<bool>,
    rows: Vec<Vec<String>>,
    /// A line of text under each row ("" for none).
    notes: Vec<String>,
}

impl Table {
    /// A table with these column headers; the first column is left-aligned, the
    /// others right-aligned.
    pub fn new(header: &[&str]) -> Self {
        let align = (0..header.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            header: header.iter().map(|s| printable(s).into_owned()).collect(),
            align,
            wraps: vec![false; header.len()],
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Aligns column `col` to the left (text such as labels).
    pub fn align_left(&mut self, col: usize) {
        if let Some(a) = self.align.get_mut(col) {
            *a = Align::Left;
        }
    }

    /// Lets column `col` (free text: names, labels, notes) wrap onto more lines
    /// when the table is wider than [`WIDTH`].
    pub fn wrap(&mut self, col: usize) {
        if let Some(w) = self.wraps.get_mut(col) {
            *w = true;
        }
    }

    /// Adds a row (missing cells are blank).
    pub fn row(&mut self, cells: Vec<String>) {
        self.row_with_note(cells, String::new());
    }

    /// Adds a row with a line of free text under it, indented by four spaces
    /// and wrapped to [`WIDTH`] (nothing when `note` is empty).
    pub fn row_with_note(&mut self, cells: Vec<String>, note: String) {
        self.rows
            .push(cells.into_iter().map(owned_printable).collect());
        self.notes.push(owned_printable(note));
    }

    /// The column headers.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The rows, as given.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// The widest cell of each column.
    fn widths(&self) -> Vec<usize> {
        let mut width = vec![0; self.header.len()];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        width
    }

    /// Whether the table prints within [`WIDTH`] columns as it is, without
    /// wrapping anything.
    pub fn fits(&self) -> bool {
        line_width(&self.widths(), 2) <= WIDTH
    }

    /// Renders with two spaces between columns and no trailing blanks, within
    /// [`WIDTH`] columns where it can: first the wrapping columns are narrowed
    /// (the widest first) and their text wrapped onto more lines, then the
    /// columns are set one space apart; a table that still does not fit is
    /// printed in blocks of columns, each led by the first column.
    pub fn render(&self) -> String {
        let natural = self.widths();
        let all: Vec<usize> = (0..natural.len()).collect();
        for gap in [2, 1] {
            let mut width = natural.clone();
            if self.narrow(&all, &mut width, gap) {
                return self.render_block(&all, &width, gap, true);
            }
        }
        blocks(&natural)
            .iter()
            .enumerate()
            .map(|(i, cols)| {
                let mut width = natural.clone();
                self.narrow(cols, &mut width, 2);
                self.render_block(cols, &width, 2, i == 0)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Narrows the wrapping columns among `cols`, the widest first, until they
    /// fit in [`WIDTH`] set `gap` spaces apart; whether they do.
    fn narrow(&self, cols: &[usize], width: &mut [usize], gap: usize) -> bool {
        let floor: Vec<usize> = (0..width.len()).map(|c| self.floor(c)).collect();
        loop {
            let used: Vec<usize> = cols.iter().map(|&c| width[c]).collect();
            if line_width(&used, gap) <= WIDTH {
                return true;
            }
            let widest = cols
                .iter()
                .copied()
                .filter(|&c| self.wraps[c] && width[c] > floor[c])
                .max_by_key(|&c| width[c]);
            match widest {
                Some(c) => width[c] -= 1,
                None => return false,
            }
        }
    }

    /// The narrowest a wrapping column `col` is made: its header and its longest
    /// word (up to [`LONG_WORD`]).
    fn floor(&self, col: usize) -> usize {
        let word = self
            .rows
            .iter()
            .filter_map(|r| r.get(col))
            .flat_map(|c| c.split(' '))
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0);
        self.header[col].chars().count().max(word.min(LONG_WORD))
    }

    /// The columns `cols`, each row on as many lines as its wrapped cells need,
    /// and under it its note when `notes`.
    fn render_block(&self, cols: &[usize], width: &[usize], gap: usize, notes: bool) -> String {
        let mut out = String::new();
        let below = std::iter::once("").chain(self.notes.iter().map(String::as_str));
        for (r, note) in std::iter::once(&self.header).chain(&self.rows).zip(below) {
            let cells: Vec<Vec<String>> = cols
                .iter()
                .map(|&c| wrap_words(r.get(c).map(String::as_str).unwrap_or(""), width[c]))
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for i in 0..height {
                let mut line = String::new();
                for (k, &c) in cols.iter().enumerate() {
                    let text = cells[k].get(i).map(String::as_str).unwrap_or("");
                    if k > 0 {
                        line.push_str(&" ".repeat(gap));
                    }
                    let pad = " ".repeat(width[c].saturating_sub(text.chars().count()));
                    match self.align[c] {
                        Align::Left => {
                            line.push_str(text);
                            line.push_str(&pad);
                        }
                        Align::Right => {
                            line.push_str(&pad);
                            line.push_str(text);
                        }
                    }
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
            if notes && !note.is_empty() {
                out.push_str(&paragraph("    ", note));
            }
        }
        out
    }
}

/// The width of a line of columns `width` set `gap` spaces apart.
fn line_width(width: &[usize], gap: usize) -> usize {
    width.iter().sum::<usize>() + gap * width.len().saturating_sub(1)
}

/// The columns of each block: as many as fit in [`WIDTH`] two spaces apart,
/// every block after the first led by column 0 again.
fn blocks(width: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut block = Vec::new();
    for c in 0..width.len() {
        let mut with: Vec<usize> = block.iter().map(|&b| width[b]).collect();
        with.push(width[c]);
        // A block holds at least one column besides the leading one.
        if line_width(&with, 2) > WIDTH && block.len() > 1 {
            out.push(std::mem::replace(&mut block, vec![0]));
        }
        block.push(c);
    }
    out.push(block);
    out
}

/// `text` in lines of at most `width` characters, broken at spaces; a word
/// longer than a line is cut.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        let used = line.chars().count();
        if used > 0 && used + 1 + word.len() <= width {
            line.push(' ');
            line.extend(word);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > width {
            lines.push(word.drain(..width).collect());
        }
        line = word.into_iter().collect();
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` wrapped to [`WIDTH`] columns ([`printable`]): its first line starts
/// with `first`, the further ones with as many spaces; ends with a newline.
pub fn paragraph(first: &str, text: &str) -> String {
    let indent = first.chars().count();
    let lines = wrap_words(&printable(text), WIDTH.saturating_sub(indent));
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            out.push_str(first);
        } else {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// `text` as a terminal shows it without obeying it: control characters
/// (ESC, CR, BEL, newlines, tabs, DEL, the C1 set) and the bidirectional
/// overrides and isolates written as escapes (`\x1b`, `\r`, `\u{202e}`), so
/// that a stored string can neither move the cursor, clear the screen, nor
/// begin a line of its own, nor reorder what follows it.
pub fn printable(text: &str) -> Cow<'_, str> {
    let hidden =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`printable`] of an owned string, without a copy when nothing changes.
fn owned_printable(text: String) -> String {
    match printable(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(o) => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_strings_reach_the_terminal_escaped() {
        assert!(matches!(printable("rt 6.6 µs"), Cow::Borrowed("rt 6.6 µs")));
        assert_eq!(
            printable("a\u{1b}[2Jb\rc\u{7}d\ne\tf\u{7f}\u{9b}g\u{202e}h"),
            "a\\x1b[2Jb\\rc\\x07d\\ne\\tf\\x7f\\u{9b}g\\u{202e}h"
        );
        let mut t = Table::new(&["id", "x\u{1b}[31m"]);
        t.row_with_note(vec!["1".into(), "\r\u{1b}[2J".into()], "n\u{7}".into());
        let text = t.render() + &paragraph("  ", "p\u{1b}q");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(
            text.contains("\\x1b[2J") && text.contains("n\\x07") && text.contains("p\\x1bq"),
            "{text}"
        );
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", "value"]);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["long name".into(), "12345".into()]);
        assert!(t.fits());
        assert_eq!(
            t.render(),
            "name       value\na              1\nlong name  12345\n"
        );
    }

    fn widest(text: &str) -> usize {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn wide_text_wraps_within_its_column() {
        let mut t = Table::new(&["check", "why"]);
        t.align_left(1);
        t.wrap(1);
        let why = "word ".repeat(30);
        t.row(vec!["preempt".into(), why.trim().into()]);
        t.row(vec!["hz".into(), "short".into()]);
        assert!(!t.fits());
        let text = t.render();
        assert!(widest(&text) <= WIDTH, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("preempt  word word"), "{text}");
        assert!(lines[2].starts_with("         word"), "{text}");
        assert_eq!(lines.last(), Some(&"hz       short"), "{text}");
        let words = text.matches("word").count();
        assert_eq!(words, 30, "nothing lost: {text}");
    }

    #[test]
    fn columns_that_cannot_wrap_go_one_space_apart_then_into_blocks() {
        let header: Vec<String> = (0..11).map(|i| format!("column{i:02}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header);
        t.row((0..11).map(|i| i.to_string()).collect());
        // 11 columns of 8: one space apart they fit.
        let text = t.render();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.starts_with("column00 column01 "), "{text}");
        assert!(widest(&text) <= WIDTH, "{text}");

        let header: Vec<String> = (0..20).map(|i| format!("column{i:02}")).collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header);
        t.row((0..20).map(|i| i.to_string()).collect());
        let text = t.render();
        assert!(widest(&text) <= WIDTH, "{text}");
        // In blocks, two spaces apart again.
        let blocks: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(blocks.len(), 3, "{text}");
        assert!(blocks[1].starts_with("column00  column10"), "{text}");
        assert_eq!(text.matches("column").count(), 22, "{text}");
    }

    #[test]
    fn wrapping_keeps_words_whole_and_notes_go_under_their_row() {
        let mut t = Table::new(&["name", "n", "text"]);
        t.wrap(0);
        t.align_left(2);
        t.row_with_note(
            vec!["a-long-name with-words".into(), "1".into(), "x".repeat(80)],
            "under the row".into(),
        );
        t.row(vec!["b".into(), "2".into(), "y".into()]);
        let text = t.render();
        assert!(widest(&text) <= WIDTH, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1].split_whitespace().next(),
            Some("a-long-name"),
            "{text}"
        );
        assert_eq!(lines[2].trim(), "with-words", "{text}");
        assert_eq!(lines[3], "    under the row", "{text}");
        assert!(lines[4].starts_with("b "), "{text}");
    }

    #[test]
    fn words_wrap_and_long_ones_are_cut() {
        assert_eq!(wrap_words("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(wrap_words("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_words("", 4), [""]);
        let p = paragraph("  ! ", &"x ".repeat(60));
        assert!(widest(&p) <= WIDTH, "{p}");
        assert!(p.lines().nth(1).unwrap().starts_with("    x"), "{p}");
    }
}
