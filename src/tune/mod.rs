//! Audit and tuning: is this system ready for real-time work ([`audit`]), which
//! threads run at which priority ([`prio`]), and what a kernel configuration does
//! for latency ([`kconfig`]).

pub mod audit;
pub mod kconfig;
pub mod prio;

use crate::format::text::table::Table;
use serde::Serialize;

/// A table whose columns are all text, left-aligned, wrapping when the table is
/// too wide.
pub fn text_table(header: &[&str]) -> Table {
    let mut t = Table::new(header);
    for col in 0..header.len() {
        t.align_left(col);
        t.wrap(col);
    }
    t
}

/// A JSON document of a tuning command: `{"format": "rtlab/1", "kind": KIND, ...}`
/// with the fields of `body` (which must serialize as an object), newline-terminated.
pub fn json_document(kind: &str, body: &impl Serialize) -> anyhow::Result<String> {
    let mut doc = serde_json::Map::new();
    doc.insert("format".into(), crate::record::FORMAT.into());
    doc.insert("kind".into(), kind.into());
    match serde_json::to_value(body)? {
        serde_json::Value::Object(fields) => doc.extend(fields),
        other => {
            doc.insert("result".into(), other);
        }
    }
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
