#!/usr/bin/env bash
# Builds what a board needs into one folder: the release binary (stripped, size
# optimised, the measuring engine at full speed), the completion scripts of bash,
# zsh and fish, and the manual pages.
#
#   scripts/dist.sh                 # this machine's target, into dist/
#   scripts/dist.sh aarch64-unknown-linux-gnu   # another target (needs its
#                                   # Rust standard library: rustup target add …,
#                                   # and a linker: gcc-aarch64-linux-gnu)
# Completions and pages come from the host build, so a cross build still gets them.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-}"
out="dist${target:+/$target}"
rm -rf "$out"
mkdir -p "$out/completions" "$out/man"

if [[ -n "$target" ]]; then
    cargo build --release --locked --target "$target"
    bin="target/$target/release/rtlab"
    cargo build --release --locked
    host="target/release/rtlab"
else
    cargo build --release --locked
    bin="target/release/rtlab"
    host="$bin"
fi

cp "$bin" "$out/rtlab"
"$host" completions bash > "$out/completions/rtlab.bash"
"$host" completions zsh > "$out/completions/_rtlab"
"$host" completions fish > "$out/completions/rtlab.fish"
"$host" man --dir "$out/man" > /dev/null

echo "$out:"
ls -l "$out/rtlab"
echo "completions: $(ls "$out/completions" | tr '\n' ' ')"
echo "manual pages: $(ls "$out/man" | wc -l) in $out/man"
