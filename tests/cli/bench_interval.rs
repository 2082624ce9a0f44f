//! The statistics the bench scripts decide their verdicts with
//! (`bench/interval.awk`, used by `bench/vs-sysbench.sh` and
//! `bench/vs-cyclictest.sh`): the median of a sample and the interval of order
//! statistics that holds it with at least 90 % confidence.

use crate::common::expect;
use assert_cmd::Command;
use std::path::Path;

/// Runs `median_interval` on `values` and returns (median, low, high).
fn median_interval(values: &[f64]) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("prog.awk");
    let prog_text = "{ v[NR] = $1 } END { median_interval(v, NR); print MED, LO, HI }\n";
    std::fs::write(&prog, prog_text).unwrap();
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/interval.awk");
    let input: String = values.iter().map(|v| format!("{v}\n")).collect();
    let out = expect(
        Command::new("awk")
            .arg("-f")
            .arg(&lib)
            .arg("-f")
            .arg(&prog)
            .write_stdin(input),
        &[0],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let f: Vec<f64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(f.len(), 3, "{text}");
    (f[0], f[1], f[2])
}

/// The k of the interval for n values, worked out here independently: the
/// largest k with 2 P(Binomial(n, 1/2) < k) <= 0.10, at least 1.
fn k_for(n: u32) -> u32 {
    let total = 1u128 << n;
    let (mut below, mut c, mut k) = (0u128, 1u128, 1);
    for j in 0..n {
        if j > 0 {
            c = c * u128::from(n - j + 1) / u128::from(j);
        }
        below += c;
        // P(B <= j) = below / 2^n; it bounds P(B < j + 1).
        if 20 * below > total {
            break;
        }
        k = j + 1;
    }
    k
}

#[test]
fn the_interval_is_the_order_statistics_of_the_binomial_bound() {
    // Known values: 5 rounds, the extremes (93.75 %); 11, the 3rd and 9th
    // (93.5 %); 15, the 4th and 12th (96.5 %).
    assert_eq!(median_interval(&[5.0, 1.0, 3.0, 2.0, 4.0]), (3.0, 1.0, 5.0));
    let shuffled = [7.0, 2.0, 11.0, 5.0, 1.0, 9.0, 4.0, 10.0, 3.0, 8.0, 6.0];
    assert_eq!(median_interval(&shuffled), (6.0, 3.0, 9.0));
    let fifteen: Vec<f64> = (1..=15).rev().map(f64::from).collect();
    assert_eq!(median_interval(&fifteen), (8.0, 4.0, 12.0));
    // Even counts take the mean of the middle two.
    let ten: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(median_interval(&ten), (5.5, 2.0, 9.0));
    // Too few values for 90 %: the extremes.
    assert_eq!(median_interval(&[1.02, 0.98, 1.01]), (1.01, 0.98, 1.02));
    assert_eq!(median_interval(&[1.5]), (1.5, 1.5, 1.5));
    // Every count up to 40 against the bound worked out here.
    for n in 1..=40u32 {
        let values: Vec<f64> = (1..=n).map(f64::from).collect();
        let k = k_for(n);
        let (_, lo, hi) = median_interval(&values);
        assert_eq!((lo, hi), (f64::from(k), f64::from(n + 1 - k)), "n = {n}");
    }
}

#[test]
fn ratios_sort_as_numbers_not_as_text() {
    // As text the order would be 1.5, 10.5, 11, 2, 9.5: median 11, high 9.5.
    let (med, lo, hi) = median_interval(&[10.5, 9.5, 2.0, 1.5, 11.0]);
    assert!((med - 9.5).abs() < 1e-12, "{med}");
    assert!(
        (lo - 1.5).abs() < 1e-12 && (hi - 11.0).abs() < 1e-12,
        "{lo} {hi}"
    );
}
