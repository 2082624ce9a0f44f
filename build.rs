//! Release builds for Linux keep the part of the binary a latency run maps small:
//!
//! - the code a latency run executes is laid out in a few blocks, from a profile
//!   of the very binary being linked (`link/cc`, the linker driver of Linux
//!   builds in `.cargo/config.toml`, which says why and how): asked for here,
//!   for a native release build of the binary when valgrind is installed.
//!   Without it (another linker, a cross build, no valgrind, or
//!   `RTLAB_NO_HOT_CODE=1`) the binary links as usual, and the build says so.
//! - with glibc, relative relocations are packed (`-z pack-relative-relocs`,
//!   DT_RELR): the dynamic loader reads a few KB at start instead of about
//!   300 KB of relocation entries, which would otherwise stay resident. The
//!   binary then needs glibc 2.36 or later: only native builds on such a glibc
//!   pack them; `RTLAB_NO_RELR=1` links a binary to copy to an older one.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link/cc");
    println!("cargo:rerun-if-changed=link/order");
    println!("cargo:rerun-if-env-changed=RTLAB_NO_HOT_CODE");
    println!("cargo:rerun-if-env-changed=RTLAB_NO_RELR");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let unset = |k: &str| std::env::var_os(k).is_none_or(|v| v.is_empty() || v == "0");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("PROFILE") != "release" {
        return;
    }
    let native = var("TARGET") == var("HOST");
    if unset("RTLAB_NO_HOT_CODE") {
        let wrapper = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link/cc");
        let linker = var("RUSTC_LINKER");
        let without = if !native {
            Some("a cross build cannot run what it links".to_string())
        } else if std::path::Path::new(&linker) != wrapper {
            Some(format!("the linker is {linker:?}, not link/cc"))
        } else if !runs("valgrind", "--version") {
            Some("valgrind is not installed".to_string())
        } else {
            None
        };
        match without {
            None => println!("cargo:rustc-env=RTLAB_HOT_CODE_DIR={}", var("OUT_DIR")),
            Some(why) => println!(
                "cargo:warning=linked without the hot-code layout ({why}): a latency run maps more of the binary; RTLAB_NO_HOT_CODE=1 silences this"
            ),
        }
    }
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && unset("RTLAB_NO_RELR") && native && glibc_has_relr()
    {
        println!("cargo:rustc-link-arg-bin=rtlab=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether `program arg` runs and succeeds.
fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether this glibc reads packed relocations (2.36 or newer): a cross build,
/// or one on an older glibc, links them unpacked, so that the binary starts
/// wherever its glibc would let it.
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
