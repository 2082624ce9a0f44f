//! The load spec grammar of `--load SPEC` and `rtlab load SPEC`.
//!
//! ```text
//! SPEC  := KIND[:WORKERS[:SIZE]] [KEY=VALUE | FLAG]...
//!        | exec[:WORKERS]:COMMAND           the rest of the text is the command
//!        | MIX[:WORKERS]                     a named mix, e.g. dohell
//! ```
//! Examples: `cpu`, `cpu:4`, `cpu:2 method=matrixprod load=60% slice=20ms`, `vm:2:256M`,
//! `vm workers=4 bytes=64M keep`, `io dir=/mnt/usb bytes=4M`, `fswalk root=/usr`,
//! `msg fds=10 threads pipe`, `timer timers=64 period=100us`, `exec:make -j4`,
//! `dohell`. SIZE is per worker. `force` lifts the memory guard. Errors name the
//! part of the spec that is wrong and what is accepted there.

use super::mix::MIXES;
use crate::units::{parse_duration, parse_size, DefaultUnit};
use rtlab_engine::load::cpu::{self, Method, Slice};
use rtlab_engine::load::{Load, KINDS};

/// A parsed load: what to run and how many workers.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// The spec text as given (for a part of a mix: the mix's text).
    pub text: String,
    /// The load and its parameters.
    pub load: Load,
    /// Worker processes.
    pub workers: u32,
    /// Lift the memory guard.
    pub force: bool,
    /// The mix this load is a part of.
    pub mix: Option<&'static str>,
}

/// Keys each kind accepts (besides `workers` and `force`), for errors and help.
fn keys_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "cpu" => &[
            "method=NAME (below)",
            "load=PCT% (0-100)",
            "slice=Nops|DUR|random (64ops)",
        ],
        "vm" => &["bytes=SIZE (per worker)", "keep"],
        "memcopy" => &["bytes=SIZE (each of two buffers)"],
        "io" => &["dir=PATH", "bytes=SIZE (per file)", "sync"],
        "fswalk" => &[
            "root=PATH",
            "xdev (cross file systems)",
            "follow (symlinks)",
        ],
        "msg" => &["fds=N", "size=BYTES (1-64K)", "pipe", "threads"],
        "timer" => &["timers=N", "period=DUR"],
        "net" => &["size=BYTES (1-65000)"],
        "exec" => &["exec:COMMAND"],
        _ => &[],
    }
}

/// The text of `rtlab load --list`.
pub fn listing() -> String {
    let mut s = String::from("Load kinds (spec: KIND[:WORKERS[:SIZE]] [KEY=VALUE|FLAG]...):\n");
    for (name, about) in KINDS {
        s.push_str(&format!("  {name:<8} {about}\n"));
        let keys = keys_of(name);
        if !keys.is_empty() {
            s.push_str(&format!("           keys: {}\n", keys.join(", ")));
        }
        if *name == "cpu" {
            let names: Vec<&str> = Method::ALL.iter().map(|(n, _)| *n).collect();
            let (own, ng) = names.split_at(2);
            s.push_str(&format!(
                "           methods: {} (rtlab's); stress-ng's by their names:\n           {}\n",
                own.join(" "),
                ng.join(" ")
            ));
        }
    }
    s.push_str("  every kind also takes workers=N and force (lift the 90%-of-MemAvailable and io free-space guards)\n\nMixes (each part runs alone as the spec shown):\n");
    for m in MIXES {
        s.push_str(&format!("  {:<8} {}\n", m.name, m.about));
        for p in m.parts {
            s.push_str(&format!("           part: {p}\n"));
        }
    }
    s
}

fn parse_u32(what: &str, v: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32, String> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "{what} '{v}' is not a whole number in {}-{}",
                range.start(),
                range.end()
            )
        })
}

fn parse_bool(key: &str, v: Option<&str>) -> Result<bool, String> {
    match v.map(str::to_ascii_lowercase).as_deref() {
        None | Some("yes" | "true" | "on" | "1") => Ok(true),
        Some("no" | "false" | "off" | "0") => Ok(false),
        Some(other) => Err(format!("{key}='{other}' is not yes or no")),
    }
}

fn parse_workers(v: &str) -> Result<u32, String> {
    parse_u32("workers", v, 1..=4096)
}

/// A size in bytes within `range` (a message is at most 64 KiB, a datagram
/// 65 000 bytes).
fn size_in(what: &str, v: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32, String> {
    let b = parse_size(v).map_err(|e| format!("{what}: {e}"))?;
    u32::try_from(b)
        .ok()
        .filter(|b| range.contains(b))
        .ok_or_else(|| {
            format!(
                "{what} '{v}' is outside {}-{} bytes",
                range.start(),
                range.end()
            )
        })
}

/// The value of `key=value`, or an error saying one is needed.
fn need<'a>(key: &str, v: Option<&'a str>) -> Result<&'a str, String> {
    v.ok_or_else(|| format!("'{key}' needs a value ({key}=...)"))
}

/// Applies one `key[=value]` to `load`.
fn apply(load: &mut Load, key: &str, v: Option<&str>) -> Result<(), String> {
    match (load, key) {
        (Load::Cpu { method, .. }, "method") => *method = cpu_method(need(key, v)?)?,
        (Load::Cpu { load_pct, .. }, "load") => {
            let v = need(key, v)?;
            *load_pct = parse_u32("load", v.trim_end_matches('%'), 0..=100)?;
        }
        (Load::Cpu { slice, .. }, "slice") => *slice = cpu_slice(need(key, v)?)?,
        (Load::Vm { bytes, .. } | Load::Memcopy { bytes } | Load::Io { bytes, .. }, "bytes") => {
            *bytes = parse_size(need(key, v)?).map_err(|e| format!("bytes: {e}"))?;
            if *bytes == 0 {
                return Err("bytes=0 does no work; give a size like 64M".into());
            }
        }
        (Load::Vm { keep, .. }, "keep") => *keep = parse_bool(key, v)?,
        (Load::Io { dir, .. }, "dir") => *dir = need(key, v)?.to_string(),
        (Load::Io { sync, .. }, "sync") => *sync = parse_bool(key, v)?,
        (Load::Fswalk { root, .. }, "root") => *root = need(key, v)?.to_string(),
        (Load::Fswalk { xdev, .. }, "xdev") => *xdev = parse_bool(key, v)?,
        (Load::Fswalk { follow, .. }, "follow") => *follow = parse_bool(key, v)?,
        (Load::Msg { fds, .. }, "fds") => *fds = parse_u32("fds", need(key, v)?, 1..=1000)?,
        // Checked here, before any worker starts: the buffers are this size.
        (Load::Msg { size, .. }, "size") => {
            *size = size_in("size", need(key, v)?, 1..=65_536)?;
        }
        (Load::Net { size }, "size") => {
            *size = size_in("size", need(key, v)?, 1..=65_000)?;
        }
        (Load::Msg { pipe, .. }, "pipe") => *pipe = parse_bool(key, v)?,
        (Load::Msg { threads, .. }, "threads") => *threads = parse_bool(key, v)?,
        (Load::Timer { timers, .. }, "timers") => {
            *timers = parse_u32("timers", need(key, v)?, 1..=10_000)?
        }
        (Load::Timer { period_ns, .. }, "period") => {
            let ns = parse_duration(need(key, v)?, DefaultUnit::Micros)
                .map_err(|e| format!("period: {e}"))?;
            if ns < 1_000 {
                return Err(format!("period '{}' is below 1us", v.unwrap_or_default()));
            }
            *period_ns = ns;
        }
        (load, _) => {
            let kind = load.kind();
            let keys = keys_of(kind);
            return Err(format!(
                "'{key}' is not a key of {kind} (keys: {}workers=N, force)",
                keys.iter().map(|k| format!("{k}, ")).collect::<String>()
            ));
        }
    }
    Ok(())
}

/// A cpu method by name; one of stress-ng's that is not implemented here is
/// refused with the closest one (the stress-ng personality runs that one).
fn cpu_method(v: &str) -> Result<Method, String> {
    if let Some(m) = Method::named(v) {
        return Ok(m);
    }
    let names: Vec<&str> = Method::ALL.iter().map(|(n, _)| *n).collect();
    Err(match cpu::closest_to_stress_ng(v) {
        Some(m) => format!(
            "method '{v}' is one of stress-ng's that rtlab does not implement; the closest is method={}",
            m.name()
        ),
        None => format!("method '{v}' is not one of {}", names.join(", ")),
    })
}

/// A busy slice: `Nops` (N ops), a duration (a bare number is ms), or
/// `random`; at most 5000 ops or 5 s, as stress-ng's `--cpu-load-slice`.
fn cpu_slice(v: &str) -> Result<Slice, String> {
    let max = cpu::SLICE_MAX;
    if v == "random" {
        return Ok(Slice::Random);
    }
    if let Some(n) = v.strip_suffix("ops") {
        return parse_u32("slice", n, 1..=max)
            .map(Slice::Ops)
            .map_err(|e| format!("{e} ops"));
    }
    let ns = parse_duration(v, DefaultUnit::Millis).map_err(|e| format!("slice: {e}"))?;
    match ns / 1_000_000 {
        ms @ 1..=5000 if ns % 1_000_000 == 0 => Ok(Slice::Millis(ms as u32)),
        _ => Err(format!(
            "slice '{v}' is not a whole number of ms in 1ms-{max}ms (or Nops, random)"
        )),
    }
}

/// Applies the positional SIZE of `kind:workers:size`.
fn apply_size(load: &mut Load, v: &str) -> Result<(), String> {
    match load {
        Load::Vm { .. } | Load::Memcopy { .. } | Load::Io { .. } => apply(load, "bytes", Some(v)),
        Load::Msg { .. } | Load::Net { .. } => apply(load, "size", Some(v)),
        other => Err(format!("{} takes no size ('{v}')", other.kind())),
    }
}

/// Parses one spec; a mix gives one spec per part.
pub fn parse(text: &str) -> Result<Vec<LoadSpec>, String> {
    let err = |msg: String| format!("in load spec '{text}': {msg}");
    let t = text.trim();
    if t.is_empty() {
        return Err(
            "empty load spec (write e.g. cpu:2, vm:1:256M, dohell; see rtlab load --list)".into(),
        );
    }
    let (head, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    let mut fields = head.splitn(3, ':');
    let kind = fields.next().unwrap_or_default();

    if kind == "exec" {
        let after = t["exec".len()..].strip_prefix(':').unwrap_or("");
        let (workers, command) = match after.split_once(':') {
            Some((n, cmd)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                (parse_workers(n).map_err(err)?, cmd)
            }
            _ => (1, after),
        };
        if command.trim().is_empty() {
            return Err(err(
                "exec needs a command: exec:COMMAND (e.g. \"exec:make -j4\")".into(),
            ));
        }
        return Ok(vec![LoadSpec {
            text: t.to_string(),
            load: Load::Exec {
                command: command.trim().to_string(),
            },
            workers,
            force: false,
            mix: None,
        }]);
    }

    if let Some(mix) = MIXES.iter().find(|m| m.name == kind) {
        let workers = fields.next().map(parse_workers).transpose().map_err(err)?;
        if fields.next().is_some() || !rest.trim().is_empty() {
            return Err(err(format!(
                "{kind} takes only a worker count ({kind}[:WORKERS]); to tune a part, give the part as its own spec"
            )));
        }
        let mut out = Vec::new();
        for part in mix.parts {
            for mut p in parse(part)? {
                p.text = t.to_string();
                p.mix = Some(mix.name);
                if let Some(n) = workers {
                    p.workers = n;
                }
                out.push(p);
            }
        }
        return Ok(out);
    }

    let mut load = Load::defaults(kind).ok_or_else(|| {
        let names: Vec<&str> = KINDS
            .iter()
            .map(|(n, _)| *n)
            .chain(MIXES.iter().map(|m| m.name))
            .collect();
        err(format!(
            "unknown load kind '{kind}' (one of: {})",
            names.join(", ")
        ))
    })?;
    let mut workers = 1;
    if let Some(w) = fields.next() {
        if !w.is_empty() {
            workers = parse_workers(w).map_err(err)?;
        }
    }
    if let Some(size) = fields.next() {
        apply_size(&mut load, size).map_err(err)?;
    }
    let mut force = false;
    for token in rest.split_whitespace() {
        let (key, value) = match token.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (token, None),
        };
        match key {
            "workers" => {
                workers = parse_workers(
                    value.ok_or_else(|| err("'workers' needs a value (workers=N)".into()))?,
                )
                .map_err(err)?
            }
            "force" => force = parse_bool(key, value).map_err(err)?,
            _ => apply(&mut load, key, value).map_err(err)?,
        }
    }
    Ok(vec![LoadSpec {
        text: t.to_string(),
        load,
        workers,
        force,
        mix: None,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(t: &str) -> LoadSpec {
        let mut v = parse(t).unwrap();
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn short_forms() {
        let s = one("cpu:4");
        assert_eq!(s.workers, 4);
        assert_eq!(s.load, Load::defaults("cpu").unwrap());
        let s = one("vm:2:256M");
        assert_eq!((s.workers, s.load.memory_per_worker()), (2, 256 << 20));
        assert_eq!(one("fswalk").workers, 1);
        assert_eq!(one("net:1:1K").load, Load::Net { size: 1024 });
    }

    #[test]
    fn keys_and_flags() {
        let s = one("cpu:2 method=prime load=60%");
        assert_eq!(
            s.load,
            Load::Cpu {
                method: Method::Prime,
                load_pct: 60,
                slice: Slice::Ops(64),
            }
        );
        let s = one("vm workers=3 bytes=8M keep force");
        assert_eq!(
            s.load,
            Load::Vm {
                bytes: 8 << 20,
                keep: true
            }
        );
        assert!(s.force && s.workers == 3);
        let s = one("msg fds=5 size=64 pipe threads=yes");
        assert_eq!(
            s.load,
            Load::Msg {
                fds: 5,
                size: 64,
                pipe: true,
                threads: true
            }
        );
        assert_eq!(
            one("timer timers=4 period=100us").load,
            Load::Timer {
                timers: 4,
                period_ns: 100_000
            }
        );
    }

    #[test]
    fn every_cpu_method_and_slice_parses() {
        for (name, method) in Method::ALL {
            let s = one(&format!("cpu:2 method={name}"));
            assert!(
                matches!(s.load, Load::Cpu { method: m, .. } if m == method),
                "{name}"
            );
        }
        let slice = |t: &str| match one(&format!("cpu load=30% slice={t}")).load {
            Load::Cpu {
                slice, load_pct, ..
            } => {
                assert_eq!(load_pct, 30);
                slice
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(slice("64ops"), Slice::Ops(64));
        assert_eq!(slice("20ms"), Slice::Millis(20));
        assert_eq!(slice("20"), Slice::Millis(20));
        assert_eq!(slice("2s"), Slice::Millis(2000));
        assert_eq!(slice("random"), Slice::Random);
        assert!(matches!(
            one("cpu load=0%").load,
            Load::Cpu { load_pct: 0, .. }
        ));
    }

    #[test]
    fn exec_keeps_the_whole_command() {
        let s = one("exec:make -j4 -C ~/linux");
        assert_eq!(
            s.load,
            Load::Exec {
                command: "make -j4 -C ~/linux".into()
            }
        );
        assert_eq!(one("exec:2:sleep 1").workers, 2);
        assert_eq!(
            one("exec:sh -c 'a:b'").load,
            Load::Exec {
                command: "sh -c 'a:b'".into()
            }
        );
    }

    #[test]
    fn mixes_split_into_their_parts() {
        let parts = parse("dohell").unwrap();
        let kinds: Vec<&str> = parts.iter().map(|p| p.load.kind()).collect();
        assert_eq!(kinds, ["procfs", "msg", "memcopy", "fswalk", "io"]);
        assert!(parts
            .iter()
            .all(|p| p.mix == Some("dohell") && p.text == "dohell"));
        assert!(parse("dohell:2").unwrap().iter().all(|p| p.workers == 2));
        for m in MIXES {
            for p in m.parts {
                assert!(parse(p).is_ok(), "{p}");
            }
        }
    }

    #[test]
    fn errors_name_the_bad_part() {
        for (spec, part) in [
            ("cpux:2", "cpux"),
            ("cpu:0", "workers '0'"),
            ("cpu:two", "'two'"),
            ("vm:1:12Q", "12Q"),
            ("cpu:1:4M", "takes no size"),
            (
                "cpu method=fast",
                "method 'fast' is not one of int, mix, ackermann",
            ),
            (
                "cpu method=decimal64",
                "one of stress-ng's that rtlab does not implement; the closest is method=double",
            ),
            ("cpu load=150%", "load '150'"),
            (
                "cpu slice=0ops",
                "slice '0' is not a whole number in 1-5000 ops",
            ),
            ("cpu slice=6s", "slice '6s' is not a whole number of ms"),
            ("cpu slice=1500us", "slice '1500us'"),
            ("cpu slice=fast", "slice: "),
            ("vm keep=maybe", "keep='maybe'"),
            ("fswalk colour=red", "'colour' is not a key of fswalk"),
            ("exec", "exec needs a command"),
            ("dohell:1:2", "dohell takes only"),
            ("timer period=10ns", "below 1us"),
            ("io bytes", "'bytes' needs a value"),
            ("msg size=1M", "size '1M' is outside 1-65536 bytes"),
            ("net:1:64K", "size '64K' is outside 1-65000 bytes"),
            ("msg size=0", "outside"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(part), "{spec}: {e}");
            assert!(e.contains(spec), "{spec}: {e}");
        }
        assert!(parse("  ").unwrap_err().contains("empty"));
    }

    #[test]
    fn listing_names_every_kind_and_part() {
        let l = listing();
        for (k, _) in KINDS {
            assert!(l.contains(k));
        }
        assert!(l.contains("part: fswalk"));
    }

    proptest! {
        #[test]
        fn worker_counts_parse_exactly(n in 1u32..=4096, kind in proptest::sample::select(vec!["cpu", "vm", "fork", "procfs"])) {
            prop_assert_eq!(one(&format!("{kind}:{n}")).workers, n);
            prop_assert_eq!(one(&format!("{kind} workers={n}")).workers, n);
        }

        #[test]
        fn never_panics(text in "\\PC{0,40}") {
            let _ = parse(&text);
        }
    }

    /// A spec put together from the grammar's own words and hostile values.
    fn spec() -> impl Strategy<Value = String> {
        let kind = proptest::sample::select(vec![
            "cpu", "vm", "memcopy", "io", "msg", "net", "timer", "fswalk", "dohell", "exec",
        ]);
        let value = proptest::sample::select(vec![
            "0",
            "1",
            "64",
            "4096",
            "4097",
            "65536",
            "65537",
            "1K",
            "64K",
            "1M",
            "3G",
            "99999999999999999999",
            "-1",
            "1.5",
            "10ns",
            "1us",
            "60%",
            "yes",
            "",
            "x",
            "64ops",
            "random",
            "matrixprod",
        ]);
        let key = proptest::sample::select(vec![
            "workers", "bytes", "size", "fds", "timers", "period", "load", "method", "keep",
            "force", "sync", "slice",
        ]);
        (
            kind,
            proptest::option::of(value.clone()),
            proptest::option::of(value.clone()),
            proptest::collection::vec((key, value), 0..4),
        )
            .prop_map(|(kind, w, size, keys)| {
                let mut t = kind.to_string();
                for part in [w, size].into_iter().flatten() {
                    t.push(':');
                    t.push_str(part);
                }
                for (k, v) in keys {
                    t.push_str(&format!(" {k}={v}"));
                }
                t
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn what_is_accepted_is_within_the_documented_bounds(text in spec()) {
            if let Ok(specs) = parse(&text) {
                for s in specs {
                    prop_assert!((1..=4096).contains(&s.workers), "{text}");
                    match &s.load {
                        Load::Vm { bytes, .. } | Load::Memcopy { bytes } | Load::Io { bytes, .. } => {
                            prop_assert!(*bytes > 0, "{text}")
                        }
                        Load::Msg { fds, size, .. } => {
                            prop_assert!((1..=1000).contains(fds) && (1..=65_536).contains(size), "{text}")
                        }
                        Load::Net { size } => prop_assert!((1..=65_000).contains(size), "{text}"),
                        Load::Timer { timers, period_ns } => {
                            prop_assert!((1..=10_000).contains(timers) && *period_ns >= 1_000, "{text}")
                        }
                        Load::Cpu { load_pct, slice, .. } => {
                            prop_assert!(*load_pct <= 100, "{text}");
                            match slice {
                                Slice::Ops(n) | Slice::Millis(n) => prop_assert!((1..=5000).contains(n), "{text}"),
                                Slice::Random => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}
