//! Release builds for Linux keep the part of the binary a latency run maps small:
//!
//! - the code a latency run executes is linked into one block (`link/hot-code.ld`,
//!   made by `link/hot-code.sh`, which says why), so that a probe maps and locks
//!   little more of the binary than it runs. `RTLAB_NO_HOT_CODE=1` links as
//!   usual: for linkers that cannot take a linker script with `INSERT` (GNU ld
//!   and lld can), and for `link/hot-code.sh`, whose profiler attributes code
//!   outside `.text` to no file.
//! - with glibc, relative relocations are packed (`-z pack-relative-relocs`,
//!   DT_RELR): the dynamic loader reads a few KB at start instead of about
//!   300 KB of relocation entries, which would otherwise stay resident. The
//!   binary then needs glibc 2.36 or later: only native builds on such a glibc
//!   pack them; `RTLAB_NO_RELR=1` links a binary to copy to an older one.

fn main() {
    println!("cargo:rerun-if-changed=link/hot-code.ld");
    println!("cargo:rerun-if-env-changed=RTLAB_NO_HOT_CODE");
    println!("cargo:rerun-if-env-changed=RTLAB_NO_RELR");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let unset = |k: &str| std::env::var_os(k).is_none_or(|v| v.is_empty() || v == "0");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("PROFILE") != "release" {
        return;
    }
    if unset("RTLAB_NO_HOT_CODE") {
        let dir = var("CARGO_MANIFEST_DIR");
        println!("cargo:rustc-link-arg-bin=rtlab=-Wl,-T,{dir}/link/hot-code.ld");
    }
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && unset("RTLAB_NO_RELR") && native_glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=rtlab=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this is a native build on a glibc that reads packed relocations
/// (2.36 or newer): a cross build, or one on an older glibc, links them
/// unpacked, so that the binary starts wherever its glibc would let it.
fn native_glibc_has_relr() -> bool {
    if std::env::var("TARGET").ok() != std::env::var("HOST").ok() {
        return false;
    }
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
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
