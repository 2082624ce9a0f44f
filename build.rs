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
//!   binary then needs glibc 2.36 or later; `RTLAB_NO_RELR=1` links for older ones.

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
    if var("CARGO_CFG_TARGET_ENV") == "gnu" && unset("RTLAB_NO_RELR") {
        println!("cargo:rustc-link-arg-bin=rtlab=-Wl,-z,pack-relative-relocs");
    }
}
