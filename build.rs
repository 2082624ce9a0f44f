//! Release builds for Linux link the code a latency run executes into one block
//! (`link/hot-code.ld`, made by `link/hot-code.sh`, which says why), so that a
//! probe maps and locks little more of the binary than it runs.
//!
//! `RTLAB_NO_HOT_CODE=1` links as usual: for linkers that cannot take a linker
//! script with `INSERT` (GNU ld and lld can), and for `link/hot-code.sh`, whose
//! profiler attributes code outside `.text` to no file.

fn main() {
    println!("cargo:rerun-if-changed=link/hot-code.ld");
    println!("cargo:rerun-if-env-changed=RTLAB_NO_HOT_CODE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let wanted = std::env::var_os("RTLAB_NO_HOT_CODE").is_none_or(|v| v.is_empty() || v == "0");
    if linux && release && wanted {
        let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
        println!("cargo:rustc-link-arg-bin=rtlab=-Wl,-T,{dir}/link/hot-code.ld");
    }
}
