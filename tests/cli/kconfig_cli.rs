//! `rtlab kconfig` on real Debian kernel configurations and handwritten edge cases.
//!
//! The real configurations are fixtures in the repository,
//! `tests/fixtures/kconfig/config-*.gz`, extracted once from pinned Debian packages
//! (tests/fixtures/README.md says which): the tests never depend on what a package
//! archive serves today. `tests/fixtures/check-newest-kconfig.sh` reports, outside
//! the test suite, how the newest packages differ from them.

use crate::common::expect;
use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn rtlab() -> Command {
    Command::cargo_bin("rtlab").unwrap()
}

/// The pinned Debian 12 kernel configurations: stock and PREEMPT_RT.
const STOCK: &str = "config-6.1.0-56-amd64";
const RT: &str = "config-6.1.0-56-rt-amd64";

/// Decompresses the fixture `name` (tests/fixtures/kconfig/NAME.gz) into `dir` and
/// returns its path.
fn real_config(dir: &Path, name: &str) -> PathBuf {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kconfig")
        .join(format!("{name}.gz"));
    let file = std::fs::File::open(&gz).unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// An independent reading of a configuration: symbol → value for set symbols.
fn set_symbols(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l
                .trim_end_matches('\r')
                .strip_prefix("CONFIG_")?
                .split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

fn diff_json(old: &Path, new: &Path) -> Value {
    let out = expect(
        rtlab()
            .args(["kconfig", "diff", "--json"])
            .arg(old)
            .arg(new),
        &[0],
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn group<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name}"))
}

fn headline<'a>(d: &'a Value, setting: &str) -> (&'a str, &'a str) {
    let h = d["headline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["setting"] == setting)
        .unwrap();
    (h["old"].as_str().unwrap(), h["new"].as_str().unwrap())
}

/// Counts agree with an independent comparison and with the per-group counts.
fn check_counts(d: &Value, old: &str, new: &str) {
    let (o, n) = (set_symbols(old), set_symbols(new));
    let (mut removed, mut added, mut changed, mut ytom, mut mtoy) = (0, 0, 0, 0, 0);
    for k in o
        .keys()
        .chain(n.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        match (o.get(k).map(String::as_str), n.get(k).map(String::as_str)) {
            (a, b) if a == b => {}
            (Some(_), None) => removed += 1,
            (None, Some(_)) => added += 1,
            (Some("y"), Some("m")) => ytom += 1,
            (Some("m"), Some("y")) => mtoy += 1,
            _ => changed += 1,
        }
    }
    let c = &d["counts"];
    assert_eq!(
        [
            c["removed"].as_u64(),
            c["added"].as_u64(),
            c["changed"].as_u64(),
            c["y_to_m"].as_u64(),
            c["m_to_y"].as_u64()
        ],
        [
            Some(removed),
            Some(added),
            Some(changed),
            Some(ytom),
            Some(mtoy)
        ]
    );
    for key in ["removed", "added", "changed", "y_to_m", "m_to_y"] {
        let sum: u64 = d["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["counts"][key].as_u64().unwrap())
            .sum();
        assert_eq!(sum, c[key].as_u64().unwrap(), "{key}");
    }
}

/// A trimmed copy of a real configuration, as in the field reports: sound,
/// bluetooth, NFC and amateur radio removed, HZ 250 → 300, governor → performance,
/// ext4 and FUSE built in, native language support (NLS) as a module.
fn trim(text: &str) -> String {
    let drop = |k: &str| {
        k.starts_with("SND")
            || k == "BT"
            || k.starts_with("BT_")
            || k.starts_with("NFC")
            || k.starts_with("HAMRADIO")
            || k.starts_with("AX25")
    };
    text.lines()
        .map(|l| {
            // Lines the replacements below supersede (else they would be duplicates).
            if l.starts_with("# CONFIG_CPU_FREQ_DEFAULT_GOV_") || l == "# CONFIG_HZ_300 is not set"
            {
                return String::new();
            }
            let Some((k, v)) = l.strip_prefix("CONFIG_").and_then(|r| r.split_once('=')) else {
                return l.to_string();
            };
            match k {
                _ if drop(k) => format!("# CONFIG_{k} is not set"),
                "HZ_250" => "# CONFIG_HZ_250 is not set\nCONFIG_HZ_300=y".into(),
                "HZ" => "CONFIG_HZ=300".into(),
                _ if k.starts_with("CPU_FREQ_DEFAULT_GOV_") => {
                    "CONFIG_CPU_FREQ_DEFAULT_GOV_PERFORMANCE=y".into()
                }
                "EXT4_FS" if v == "m" => "CONFIG_EXT4_FS=y".into(),
                "FUSE_FS" if v == "m" => "CONFIG_FUSE_FS=y".into(),
                "NLS" if v == "y" => "CONFIG_NLS=m".into(),
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn stock_against_a_trimmed_copy() {
    let dir = tempfile::tempdir().unwrap();
    let stock = &real_config(dir.path(), STOCK);
    let text = std::fs::read_to_string(stock).unwrap();
    let trimmed_text = trim(&text);
    let trimmed = dir.path().join("config-trimmed");
    std::fs::write(&trimmed, &trimmed_text).unwrap();

    let d = diff_json(stock, &trimmed);
    assert_eq!(d["format"], "rtlab/1");
    assert_eq!(d["kind"], "kconfig.diff");
    check_counts(&d, &text, &trimmed_text);
    let o = set_symbols(&text);
    // Every set symbol the trim unset (y, m and values such as buffer sizes).
    let set = |pred: &dyn Fn(&str) -> bool| o.keys().filter(|k| pred(k)).count() as u64;
    let snd = set(&|k| k.starts_with("SND"));
    assert!(snd > 50, "a Debian kernel builds many sound drivers");
    assert_eq!(group(&d, "Sound")["counts"]["removed"].as_u64(), Some(snd));
    assert_eq!(
        group(&d, "Bluetooth")["counts"]["removed"].as_u64(),
        Some(set(&|k| k == "BT" || k.starts_with("BT_")))
    );
    assert!(group(&d, "NFC")["counts"]["removed"].as_u64().unwrap() > 0);
    assert_eq!(headline(&d, "timer frequency (HZ)"), ("250", "300"));
    assert_eq!(headline(&d, "default CPU governor").1, "performance");
    assert_eq!(
        headline(&d, "preemption model").0,
        headline(&d, "preemption model").1
    );
    let fs = group(&d, "File systems");
    let change = |name: &str| {
        fs["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["change"].as_str().unwrap().to_string())
    };
    assert_eq!(change("EXT4_FS").as_deref(), Some("module_to_yes"));
    assert_eq!(change("FUSE_FS").as_deref(), Some("module_to_yes"));
    assert_eq!(change("NLS").as_deref(), Some("yes_to_module"));

    // The text report: headline first, the subsystem table, the symbol lists.
    let out = rtlab()
        .args(["kconfig", "diff"])
        .arg(stock)
        .arg(&trimmed)
        .output()
        .unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    let head = report.find("preemption model").unwrap();
    assert!(head < report.find("subsystem").unwrap());
    assert!(
        report.contains("- CONFIG_SND_HDA_INTEL (was m)"),
        "sound drivers listed"
    );
    assert!(report.contains("~ CONFIG_EXT4_FS: m → y"));
    // --summary leaves the symbol lists out.
    let out = rtlab()
        .args(["kconfig", "diff", "--summary"])
        .arg(stock)
        .arg(&trimmed)
        .output()
        .unwrap();
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(summary.contains("Sound") && !summary.contains("CONFIG_SND_HDA_INTEL"));

    // Image sizes.
    let (a, b) = (
        dir.path().join("vmlinuz-old"),
        dir.path().join("vmlinuz-new"),
    );
    std::fs::write(&a, vec![0u8; 8000]).unwrap();
    std::fs::write(&b, vec![0u8; 6000]).unwrap();
    let out = rtlab()
        .args(["kconfig", "diff"])
        .arg(stock)
        .arg(&trimmed)
        .arg("--image")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("image size: 8000 → 6000 bytes, -2000 bytes (-25.0%)"),
        "{report}"
    );
    rtlab()
        .args(["kconfig", "diff"])
        .arg(stock)
        .arg(&trimmed)
        .args(["--image", "/nonexistent/a"])
        .arg(&b)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--image"));

    // The same configuration gzipped (as /proc/config.gz is) gives the same diff.
    let gz = dir.path().join("config.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(trimmed_text.as_bytes()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    assert_eq!(diff_json(stock, &gz)["counts"], d["counts"]);
}

#[test]
fn stock_against_preempt_rt() {
    let dir = tempfile::tempdir().unwrap();
    let (stock, rt) = (
        &real_config(dir.path(), STOCK),
        &real_config(dir.path(), RT),
    );
    let d = diff_json(stock, rt);
    check_counts(
        &d,
        &std::fs::read_to_string(stock).unwrap(),
        &std::fs::read_to_string(rt).unwrap(),
    );
    let (old, new) = headline(&d, "preemption model");
    assert_ne!(old, "PREEMPT_RT");
    assert_eq!(new, "PREEMPT_RT");
    let sched = group(&d, "Preemption and scheduler");
    assert!(sched["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "PREEMPT_RT" && s["change"] == "added"));

    // check: the stock kernel lacks PREEMPT_RT (hurts), the RT one has it (helps).
    let check = |p: &Path| -> Value {
        let out = expect(rtlab().args(["kconfig", "check", "--json"]).arg(p), &[0]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let effect = |doc: &Value, sym: &str| {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["symbol"] == sym)
            .map(|f| f["effect"].as_str().unwrap().to_string())
    };
    assert_eq!(
        effect(&check(stock), "PREEMPT_RT").as_deref(),
        Some("hurts")
    );
    assert_eq!(effect(&check(rt), "PREEMPT_RT").as_deref(), Some("helps"));
    assert_eq!(check(rt)["preempt_model"], "PREEMPT_RT");
    rtlab()
        .args(["kconfig", "check", "--strict"])
        .arg(stock)
        .assert()
        .code(1);
}

#[test]
fn handwritten_edge_cases() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.config");
    let new = dir.path().join("new.config");
    std::fs::write(
        &old,
        "#\r\n# Linux/arm 4.19.127 Kernel Configuration\r\n#\r\nCONFIG_PREEMPT_VOLUNTARY=y\r\nCONFIG_HZ=250\r\n\
         CONFIG_LOCALVERSION=\"-v7\"\r\nCONFIG_PHYS_OFFSET=0x80000000\r\n# CONFIG_KVM is not set\r\nCONFIG_LOCKDEP=y\r\n",
    )
    .unwrap();
    std::fs::write(
        &new,
        "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=300\nCONFIG_HZ=1000\nCONFIG_LOCALVERSION=\"-v7-rt\"\n\
         CONFIG_PHYS_OFFSET=0x00008000\nCONFIG_KVM=m\n",
    )
    .unwrap();
    let out = expect(
        rtlab()
            .args(["kconfig", "diff", "--json"])
            .arg(&old)
            .arg(&new),
        &[0],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sets HZ more than once"), "{stderr}");
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["old_version"], "4.19.127");
    assert_eq!(
        headline(&d, "timer frequency (HZ)"),
        ("250", "1000"),
        "the last duplicate counts"
    );
    assert_eq!(
        headline(&d, "preemption model"),
        ("PREEMPT_VOLUNTARY", "PREEMPT_RT")
    );
    assert_eq!(
        headline(&d, "latency-costly debug options"),
        ("LOCKDEP", "none")
    );
    let c = &d["counts"];
    // removed: PREEMPT_VOLUNTARY, LOCKDEP; added: PREEMPT_RT, KVM;
    // changed: HZ, LOCALVERSION, PHYS_OFFSET.
    assert_eq!(
        (
            c["removed"].as_u64(),
            c["added"].as_u64(),
            c["changed"].as_u64()
        ),
        (Some(2), Some(2), Some(3))
    );
    let text = String::from_utf8(
        rtlab()
            .args(["kconfig", "diff"])
            .arg(&old)
            .arg(&new)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.contains("~ CONFIG_LOCALVERSION: \"-v7\" → \"-v7-rt\""),
        "{text}"
    );
    assert!(
        text.contains("~ CONFIG_PHYS_OFFSET: 0x80000000 → 0x00008000"),
        "{text}"
    );
    assert!(!text.contains('\r'));
}

#[test]
fn refuses_what_is_not_a_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::write(&good, "CONFIG_A=y\n").unwrap();
    let text = dir.path().join("Cargo.toml");
    std::fs::write(&text, "[package]\nname = \"x\"\n").unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 0xff, 0xfe, 0, 1]).unwrap();
    let badgz = dir.path().join("bad.gz");
    std::fs::write(&badgz, [0x1f, 0x8b, 1, 2, 3]).unwrap();
    for (bad, needle) in [
        (&text, "line 1: '[package]'"),
        (&empty, "no CONFIG_ symbol"),
        (&binary, "not text"),
        (&badgz, "not a valid gzip file"),
        (&dir.path().join("missing"), "cannot read"),
    ] {
        rtlab()
            .args(["kconfig", "diff"])
            .arg(&good)
            .arg(bad)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(needle));
        rtlab().args(["kconfig", "check"]).arg(bad).assert().code(2);
    }
}

#[test]
fn check_defaults_to_the_running_kernel() {
    let found = ["/proc/config.gz"].iter().any(|p| Path::new(p).exists())
        || std::fs::read_dir("/boot")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("config-"));
    let out = expect(
        rtlab().args(["kconfig", "check"]),
        &[if found { 0 } else { 2 }],
    );
    if found {
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("HIGH_RES_TIMERS") && text.contains(" hurt, "),
            "{text}"
        );
    } else {
        assert!(String::from_utf8_lossy(&out.stderr).contains("modprobe configs"));
    }
}
