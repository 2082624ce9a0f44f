//! The kernel ring buffer's pages as `trace_pipe_raw` hands them out: a page
//! header (base timestamp, commit size) then compressed event headers (type
//! and time delta in one 32-bit word) as `events/header_page` and
//! `events/header_event` describe them.

use anyhow::{bail, Context, Result};

/// Where the parts of a page are, from `events/header_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset and size of the commit word (data length and flags).
    pub commit: (usize, usize),
    /// Offset of the first event.
    pub data: usize,
    /// Bytes of a whole page.
    pub size: usize,
}

/// Bits of the commit word above the data length.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;

/// Event types of the compressed header.
const PADDING: u32 = 29;
const TIME_EXTEND: u32 = 30;
const TIME_STAMP: u32 = 31;
/// Bits of the time delta held in the header word.
const TS_SHIFT: u32 = 27;

impl PageLayout {
    /// Reads `events/header_page`.
    pub fn parse(text: &str) -> Result<PageLayout> {
        let field = |name: &str| -> Result<(usize, usize)> {
            let line = text
                .lines()
                .find(|l| l.contains(&format!(" {name};")))
                .with_context(|| format!("header_page has no '{name}' field"))?;
            Ok((number(line, "offset:")?, number(line, "size:")?))
        };
        let commit = field("commit")?;
        let (data, data_size) = field("data")?;
        Ok(PageLayout {
            commit,
            data,
            size: data + data_size,
        })
    }
}

/// The number after `key` in a format line (`offset:8;`).
pub fn number(line: &str, key: &str) -> Result<usize> {
    let rest = line
        .split(key)
        .nth(1)
        .with_context(|| format!("no '{key}' in '{line}'"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .with_context(|| format!("bad '{key}' in '{line}'"))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// What one page held.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PageStats {
    /// Records handed out.
    pub records: u64,
    /// Whether the kernel flagged events lost before this page.
    pub missed: bool,
}

/// Calls `each(timestamp, record)` for every event record of `page`, oldest
/// first; `record` starts at the event's common fields.
pub fn for_each_record(
    page: &[u8],
    layout: &PageLayout,
    mut each: impl FnMut(u64, &[u8]),
) -> Result<PageStats> {
    let mut ts = u64_at(page, 0).context("page shorter than its header")?;
    let commit = match layout.commit.1 {
        4 => u64::from(u32_at(page, layout.commit.0).context("no commit word")?),
        _ => u64_at(page, layout.commit.0).context("no commit word")?,
    };
    let len = (commit & COMMIT_MASK) as usize;
    let end = layout.data + len;
    if end > page.len() {
        bail!("page commit {len} goes past its {} bytes", page.len());
    }
    let mut stats = PageStats {
        records: 0,
        missed: commit & (MISSED_EVENTS | MISSED_STORED) != 0,
    };
    let mut at = layout.data;
    while at + 4 <= end {
        let word = u32_at(page, at).unwrap_or(0);
        let (kind, delta) = (word & 0x1f, u64::from(word >> 5));
        let body = at + 4;
        let array0 = || u32_at(page, body).map(u64::from).unwrap_or(0);
        at = match kind {
            PADDING => {
                if delta == 0 {
                    break;
                }
                ts += delta;
                body + array0() as usize
            }
            TIME_EXTEND => {
                ts += (array0() << TS_SHIFT) + delta;
                body + 4
            }
            TIME_STAMP => {
                ts = (array0() << TS_SHIFT) + delta;
                body + 4
            }
            0 => {
                ts += delta;
                let n = (array0() as usize).saturating_sub(4).next_multiple_of(4);
                let data = body + 4;
                each(
                    ts,
                    page.get(data..data + n).context("record past the page")?,
                );
                stats.records += 1;
                data + n
            }
            n => {
                ts += delta;
                let n = n as usize * 4;
                each(
                    ts,
                    page.get(body..body + n).context("record past the page")?,
                );
                stats.records += 1;
                body + n
            }
        };
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    fn word(kind: u32, delta: u32) -> [u8; 4] {
        (kind | delta << 5).to_le_bytes()
    }

    #[test]
    fn the_header_page_gives_the_commit_word_and_the_page_size() {
        let l = PageLayout::parse(HEADER_PAGE).unwrap();
        assert_eq!(
            l,
            PageLayout {
                commit: (8, 8),
                data: 16,
                size: 4096
            }
        );
    }

    #[test]
    fn records_carry_their_timestamps_through_deltas_and_extends() {
        let mut data = Vec::new();
        data.extend(word(2, 5)); // 8 bytes of data at base + 5
        data.extend([1, 0, 0, 0, 2, 0, 0, 0]);
        data.extend(word(TIME_EXTEND, 3)); // + (1 << 27) + 3
        data.extend(1u32.to_le_bytes());
        data.extend(word(0, 7)); // long form: 12 bytes at + 7
        data.extend(16u32.to_le_bytes());
        data.extend([9; 12]);
        let mut page = 1_000u64.to_le_bytes().to_vec();
        page.extend((data.len() as u64 | MISSED_EVENTS).to_le_bytes());
        page.extend(&data);
        page.resize(4096, 0);
        let mut seen = Vec::new();
        let l = PageLayout::parse(HEADER_PAGE).unwrap();
        let st = for_each_record(&page, &l, |ts, r| seen.push((ts, r.len(), r[0]))).unwrap();
        assert_eq!(seen, [(1_005, 8, 1), (1_005 + (1 << 27) + 3 + 7, 12, 9)]);
        assert_eq!(
            st,
            PageStats {
                records: 2,
                missed: true
            }
        );
    }

    #[test]
    fn a_commit_past_the_page_is_an_error() {
        let mut page = 0u64.to_le_bytes().to_vec();
        page.extend(5000u64.to_le_bytes());
        page.resize(4096, 0);
        let l = PageLayout::parse(HEADER_PAGE).unwrap();
        assert!(for_each_record(&page, &l, |_, _| {}).is_err());
    }
}
