//! The order in which release builds lay out their code (`link/order`, run by
//! the linker driver `link/cc`): from callgrind profiles of the binary, the
//! functions that ran, grouped so that each phase's code is in few stretches,
//! and the same whatever order the profiles list them in.

use crate::common::expect;
use assert_cmd::Command;
use std::path::Path;

/// The binary's functions, in the order they are defined (so in the order of
/// their addresses), which is neither the order of their names nor of the
/// profiles below.
const DEFINED: [&str; 9] = [
    "c_zulu", "a_alpha", "m_mike", "b_bravo", "y_yankee", "d_delta", "x_xray", "e_echo", "n_never",
];

/// A function that ran, and the functions it called.
type Entry = (&'static str, &'static [&'static str]);

/// What each profile file of a run saw, by the phase its name gives it:
/// `.cg.1` loading and `.cg.2` start-up, `.cg.3` measuring, `.cg.4` making the
/// run, `.cg.5` saving, `.cg` printing. Each entry is a function and the
/// functions it called, `'2` marking a level of recursion as callgrind does.
const PROFILES: [(&str, &[Entry]); 6] = [
    ("run.cg.1", &[("c_zulu", &[])]),
    (
        "run.cg.2",
        &[
            ("c_zulu", &["a_alpha"]),
            ("m_mike'2", &["m_mike", "b_bravo"]),
        ],
    ),
    ("run.cg.3", &[("m_mike", &["y_yankee"])]),
    ("run.cg.4", &[("m_mike", &[]), ("d_delta", &[])]),
    ("run.cg.5", &[("d_delta", &["x_xray"])]),
    ("run.cg", &[("e_echo", &["a_alpha"])]),
];

/// The sets of phases, in the order of a Gray code over (measuring, start-up,
/// making, saving, printing): printing only, saving only, making and saving,
/// start-up and printing, start-up only (two functions, by address: c_zulu is
/// defined first), start-up with measuring and making, measuring only. The
/// functions of measuring are one stretch, those of start-up another.
const EXPECTED: [&str; 8] = [
    "e_echo", "x_xray", "d_delta", "a_alpha", "c_zulu", "b_bravo", "m_mike", "y_yankee",
];

/// Compiles a binary defining [`DEFINED`] in `dir`, named as a release
/// binary's object is, and returns its path.
fn binary(dir: &Path) -> std::path::PathBuf {
    let source = dir.join("functions.c");
    let text: String = DEFINED
        .iter()
        .enumerate()
        .map(|(i, f)| format!("int {f}(int x) {{ return x * {} + {i}; }}\n", i + 2))
        .collect();
    std::fs::write(&source, text).unwrap();
    let bin = dir.join("rtlab-0123456789abcdef");
    expect(
        Command::new("cc")
            .args(["-c", "-O0", "-fno-function-sections", "-o"])
            .arg(&bin)
            .arg(&source),
        &[0],
    );
    bin
}

/// Writes [`PROFILES`] into `dir` as callgrind writes them, with calls into
/// another object, a name made up from an address and a made-up frame between
/// them; `reversed` lists every file's functions and calls the other way round.
fn profiles(dir: &Path, bin: &Path, reversed: bool) -> Vec<std::path::PathBuf> {
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    let mut paths = Vec::new();
    for (name, entries) in PROFILES {
        let mut text = format!(
            "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\ncmd:  {}\n\nevents: Ir\n\nob={libc}\nfl=???\nfn=memcpy\n0 12\n",
            bin.display()
        );
        text += &format!(
            "ob={}\nfl=???\nfn=0x0000000000001040\n0 3\nfn=(below main)\n0 1\n",
            bin.display()
        );
        let mut entries: Vec<_> = entries.to_vec();
        if reversed {
            entries.reverse();
        }
        for (f, calls) in entries {
            text += &format!("fn={f}\n0 5\ncob={libc}\ncfn=free\ncalls=1 0\n0 40\n");
            let mut calls = calls.to_vec();
            if reversed {
                calls.reverse();
            }
            for c in calls {
                text += &format!("cfn={c}\ncalls=2 0\n0 9\n");
            }
        }
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    if reversed {
        paths.reverse();
    }
    paths
}

fn order(bin: &Path, profiles: &[std::path::PathBuf]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/order");
    let out = expect(Command::new(script).arg(bin).args(profiles), &[0]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn functions_that_ran_are_grouped_by_their_phases_and_kept_in_the_compilers_order() {
    let dir = tempfile::tempdir().unwrap();
    let bin = binary(dir.path());
    let got = order(&bin, &profiles(dir.path(), &bin, false));
    assert_eq!(got, EXPECTED, "link/order's order");
}

#[test]
fn the_order_does_not_depend_on_the_order_of_the_profiles() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let bin = binary(a.path());
    let forward = order(&bin, &profiles(a.path(), &bin, false));
    let backward = order(&bin, &profiles(b.path(), &bin, true));
    assert_eq!(forward, backward);
    assert_eq!(forward.len(), EXPECTED.len());
}

#[test]
fn a_file_that_is_not_a_profile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bin = binary(dir.path());
    let stray = dir.path().join("notes.txt");
    std::fs::write(&stray, "fn=a_alpha\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/order");
    let out = expect(Command::new(script).arg(&bin).arg(&stray), &[2]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("notes.txt") && err.contains("NAME.cg"),
        "{err}"
    );
}

#[test]
fn a_binary_without_readable_symbols_stops_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let bin = binary(dir.path());
    let profiles = profiles(dir.path(), &bin, false);
    let not_elf = dir.path().join("app");
    std::fs::write(&not_elf, "not an object file\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/order");
    let out = expect(Command::new(script).arg(&not_elf).args(&profiles), &[2]);
    assert!(out.stdout.is_empty(), "no order is printed");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("nm cannot read") && err.contains("app"),
        "{err}"
    );
}
