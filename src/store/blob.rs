//! How a series is stored in the `data` column.
//!
//! - Version 1 (schema 1): the series' JSON as text.
//! - Version 2: the JSON, zlib-compressed. A zlib stream starts with a byte
//!   whose low four bits are 8 (deflate).
//! - Version 3 (schema 9): the tag byte [`TABLES_APART`], the length of the
//!   JSON, the JSON without its time series and its histogram's buckets, and
//!   then those two in binary, as tables ([`put_table`]): the time series'
//!   points (first sample, time, maximum) and the buckets (value, count).
//!   They were most of a long run's JSON (a point is about 55 bytes of text
//!   and 7 here, a bucket 15 and 4), and serialising and compressing them as
//!   text most of what saving such a run cost. What is left of the JSON (the
//!   counters, summary, 1-µs buckets and time windows: a few KB) is not
//!   compressed: a compressor's tables (a quarter of a MB, zeroed, for each
//!   series) cost more to make than the few KB it would save.
//!
//! Every version is read; only version 3 is written.

use crate::record::{Series, MAX_STORED_TRACE_POINTS};
use anyhow::{bail, ensure, Context, Result};
use flate2::read::ZlibDecoder;
use rtlab_engine::stats::hist::HistogramData;
use rtlab_engine::stats::trace::TracePoint;
use std::io::Read;

use super::db::Value;

/// The first byte of a version 3 blob (never the first byte of a zlib stream).
const TABLES_APART: u8 = 3;

/// Which columns of a time series' points ([`TracePoint`]: first sample,
/// time, maximum) and of a histogram's buckets (value, count) are stored as
/// differences from the row before.
const TRACE_DELTAS: [bool; 3] = [true, true, false];
const BUCKET_DELTAS: [bool; 2] = [true, false];

/// The stored form of `s`: version 3, its time series decimated to
/// [`MAX_STORED_TRACE_POINTS`] (block maxima, no peak lost).
pub(super) fn to_blob(s: &Series) -> Result<Vec<u8>> {
    // Field by field: the time series and buckets are not copied only to be
    // left out.
    let h = &s.histogram;
    let rest = Series {
        name: s.name.clone(),
        thread: s.thread,
        cpu: s.cpu,
        tid: s.tid,
        interval_ns: s.interval_ns,
        counters: s.counters,
        summary: s.summary,
        max_at: s.max_at,
        histogram: HistogramData {
            lowest_ns: h.lowest_ns,
            highest_ns: h.highest_ns,
            sigfig: h.sigfig,
            buckets: Vec::new(),
        },
        us_histogram: s.us_histogram.clone(),
        trace: Vec::new(),
        windows: s.windows.clone(),
    };
    let json = serde_json::to_vec(&rest)?;
    let decimated;
    let trace = if s.trace.len() > MAX_STORED_TRACE_POINTS {
        decimated = super::decimate(&s.trace, MAX_STORED_TRACE_POINTS);
        &decimated
    } else {
        &s.trace
    };
    let buckets = &s.histogram.buckets;
    let mut out = Vec::with_capacity(json.len() + 24 + 8 * trace.len() + 6 * buckets.len());
    out.push(TABLES_APART);
    put(&mut out, json.len() as u64);
    out.extend_from_slice(&json);
    let points = trace
        .iter()
        .map(|p| [p.first_sample, p.offset_ns, p.max_ns]);
    put_table(&mut out, points, TRACE_DELTAS);
    put_table(
        &mut out,
        buckets.iter().map(|&(v, c)| [v, c]),
        BUCKET_DELTAS,
    );
    Ok(out)
}

/// Reads a stored series of any version.
pub(super) fn from_column(v: &Value) -> Result<Series> {
    Ok(match v {
        Value::Blob(b) if b.first() == Some(&TABLES_APART) => tables_apart(&b[1..])?,
        Value::Blob(b) => {
            let mut json = Vec::with_capacity(b.len() * 8);
            ZlibDecoder::new(&b[..]).read_to_end(&mut json)?;
            serde_json::from_slice(&json)?
        }
        Value::Text(t) => serde_json::from_str(t)?,
        other => bail!("a series is stored as {other:?}"),
    })
}

/// A version 3 blob after its tag byte.
fn tables_apart(mut b: &[u8]) -> Result<Series> {
    let len = usize::try_from(get(&mut b)?).context("the JSON is too long")?;
    ensure!(len <= b.len(), "the JSON claims {len} bytes of {}", b.len());
    let (json, mut b) = b.split_at(len);
    let mut s: Series = serde_json::from_slice(json)?;
    s.trace = get_table(&mut b, TRACE_DELTAS)?
        .into_iter()
        .map(|[first_sample, offset_ns, max_ns]| TracePoint {
            first_sample,
            offset_ns,
            max_ns,
        })
        .collect();
    s.histogram.buckets = get_table(&mut b, BUCKET_DELTAS)?
        .into_iter()
        .map(|[v, c]| (v, c))
        .collect();
    ensure!(b.is_empty(), "{} bytes follow the tables", b.len());
    Ok(s)
}

/// Appends a table of `K` columns: its number of rows, then each row's
/// values, those of the columns `deltas` names as their difference from the
/// row before (modulo 2^64, [`zigzag`]ged: small either way), each [`put`].
fn put_table<const K: usize>(
    out: &mut Vec<u8>,
    rows: impl ExactSizeIterator<Item = [u64; K]>,
    deltas: [bool; K],
) {
    put(out, rows.len() as u64);
    let mut prev = [0u64; K];
    for row in rows {
        for ((&v, &p), &delta) in row.iter().zip(&prev).zip(&deltas) {
            put(out, if delta { zigzag(v.wrapping_sub(p)) } else { v });
        }
        prev = row;
    }
}

/// Takes a [`put_table`] table off the front of `b`.
fn get_table<const K: usize>(b: &mut &[u8], deltas: [bool; K]) -> Result<Vec<[u64; K]>> {
    let n = get(b)?;
    // A value takes a byte at least: a count beyond that is damage, refused
    // before anything is allocated for it.
    ensure!(
        n <= (b.len() / K) as u64,
        "a table claims {n} rows of {K} values in {} bytes",
        b.len()
    );
    let mut prev = [0u64; K];
    (0..n)
        .map(|_| {
            let mut row = [0u64; K];
            for ((v, &p), &delta) in row.iter_mut().zip(&prev).zip(&deltas) {
                let got = get(b)?;
                *v = if delta {
                    p.wrapping_add(unzigzag(got))
                } else {
                    got
                };
            }
            prev = row;
            Ok(row)
        })
        .collect()
}

/// A difference of two `u64`s taken modulo 2^64, as an `i64` mapped so that
/// small values either way are small: 0, -1, 1, -2 → 0, 1, 2, 3.
fn zigzag(d: u64) -> u64 {
    (d << 1) ^ ((d as i64 >> 63) as u64)
}

/// The inverse of [`zigzag`].
fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

/// Appends `v` seven bits a byte, low bits first, the high bit set on every
/// byte but the last (LEB128).
fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Takes a [`put`] integer off the front of `b`.
fn get(b: &mut &[u8]) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let Some((&byte, rest)) = b.split_first() else {
            bail!("a table ends inside a number");
        };
        *b = rest;
        let bits = u64::from(byte & 0x7f);
        ensure!(
            shift < 63 || bits <= 1,
            "a number of a table is longer than 64 bits"
        );
        v |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    bail!("a number of a table is longer than 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Counters;
    use flate2::write::ZlibEncoder;
    use flate2::Compression;
    use rtlab_engine::stats::Summary;
    use std::io::Write;

    fn point(first_sample: u64, offset_ns: u64, max_ns: u64) -> TracePoint {
        TracePoint {
            first_sample,
            offset_ns,
            max_ns,
        }
    }

    fn series(trace: Vec<TracePoint>, buckets: Vec<(u64, u64)>) -> Series {
        let mut s = Series::new(
            "cpu0".into(),
            Counters::default(),
            Summary::default(),
            HistogramData {
                lowest_ns: 1,
                highest_ns: 100_000_000_000,
                sigfig: 3,
                buckets,
            },
        );
        s.thread = Some(0);
        s.trace = trace;
        s
    }

    fn read(blob: Vec<u8>) -> Result<Series> {
        from_column(&Value::Blob(blob))
    }

    proptest::proptest! {
        #[test]
        fn any_series_reads_back_as_it_was_written(
            points in proptest::collection::vec(
                (proptest::num::u64::ANY, proptest::num::u64::ANY, proptest::num::u64::ANY),
                0..300,
            ),
            buckets in proptest::collection::vec(
                (proptest::num::u64::ANY, proptest::num::u64::ANY),
                0..300,
            ),
        ) {
            let trace = points.into_iter().map(|(a, b, c)| point(a, b, c)).collect();
            let s = series(trace, buckets);
            let blob = to_blob(&s).unwrap();
            proptest::prop_assert_eq!(blob[0], TABLES_APART);
            proptest::prop_assert_eq!(read(blob).unwrap(), s);
        }

        #[test]
        fn integers_round_trip(v in proptest::num::u64::ANY) {
            let mut out = Vec::new();
            put(&mut out, v);
            proptest::prop_assert!(out.len() <= 10);
            let mut b = &out[..];
            proptest::prop_assert_eq!(get(&mut b).unwrap(), v);
            proptest::prop_assert!(b.is_empty());
            proptest::prop_assert_eq!(unzigzag(zigzag(v)), v);
        }
    }

    /// A run's time series and histogram as the probe makes them: blocks of
    /// 16 wake-ups 3.2 ms apart with maxima near 20 µs, and buckets of an
    /// HdrHistogram of 3 digits. A point takes a few bytes, not the 55 of its
    /// JSON, and a bucket fewer than the 15 of its JSON.
    #[test]
    fn a_probes_tables_take_a_few_bytes_a_row() {
        let trace: Vec<TracePoint> = (0..1_250u64)
            .map(|i| {
                let offset = 3_200_000 * i + (i * 7_919) % 3_000_000;
                point(16 * i, offset, 15_000 + (i * 104_729) % 9_000)
            })
            .collect();
        let buckets: Vec<(u64, u64)> = (0..1_000u64)
            .map(|i| (12_000 + 16 * i + 8 * (i % 3), 1 + (i * 31) % 200))
            .collect();
        let empty = to_blob(&series(Vec::new(), Vec::new())).unwrap().len() as f64;
        let with_trace = to_blob(&series(trace.clone(), Vec::new())).unwrap();
        let per_point = (with_trace.len() as f64 - empty) / trace.len() as f64;
        assert!((5.0..9.0).contains(&per_point), "{per_point} bytes a point");
        let both = series(trace, buckets.clone());
        let blob = to_blob(&both).unwrap();
        let per_bucket = (blob.len() - with_trace.len()) as f64 / buckets.len() as f64;
        assert!(
            (2.0..5.0).contains(&per_bucket),
            "{per_bucket} bytes a bucket"
        );
        assert_eq!(read(blob).unwrap(), both);
    }

    /// Versions 1 and 2, as older rtlab wrote them, still read.
    #[test]
    fn older_forms_still_read() {
        let trace = vec![point(0, 200_000, 17_000), point(16, 3_400_000, 21_000)];
        let s = series(trace, vec![(17_007, 1), (21_007, 1)]);
        let json = serde_json::to_vec(&s).unwrap();
        let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
        z.write_all(&json).unwrap();
        assert_eq!(read(z.finish().unwrap()).unwrap(), s);
        let text = String::from_utf8(json).unwrap();
        assert_eq!(from_column(&Value::Text(text)).unwrap(), s);
    }

    /// Damage is an error naming what is wrong, never a panic or a huge
    /// allocation.
    #[test]
    fn damaged_blobs_are_refused() {
        let trace = vec![point(0, 200_000, 17_000), point(16, 3_400_000, 21_000)];
        let blob = to_blob(&series(trace, vec![(17_007, 1), (21_007, 1)])).unwrap();
        for cut in 1..blob.len() {
            assert!(read(blob[..cut].to_vec()).is_err(), "cut at {cut}");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(read(longer).unwrap_err().to_string().contains("follow"));
        // A count of rows far beyond the bytes left (a series without
        // points or buckets ends with two counts of 0).
        let mut b = to_blob(&series(Vec::new(), Vec::new())).unwrap();
        assert_eq!(b.split_off(b.len() - 2), [0, 0]);
        put(&mut b, u64::MAX / 2);
        b.extend_from_slice(&[1, 2, 3]);
        let e = read(b).unwrap_err().to_string();
        assert!(e.contains("claims"), "{e}");
        // An eleventh byte of a number.
        let mut over = vec![TABLES_APART];
        over.extend_from_slice(&[0xff; 10]);
        over.push(0x01);
        assert!(read(over).unwrap_err().to_string().contains("64 bits"));
    }
}
