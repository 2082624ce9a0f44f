#!/usr/bin/env bash
# The bare loads of sysbench's sequential read, timed alone, beside sysbench
# and rtlab, when the block lies in L2 (512 KiB and 1 MiB, on a CPU with 1 MiB of L2).
#
# bench/seq-read-layout.c holds the loop's loads two ways (a C loop shaped as
# sysbench's source, and the same loads written out); this script builds it
# with unused code of 0, 1000 and 2500 bytes placed before the readers, so the
# readers lie at other addresses, and runs every build, `sysbench memory
# --memory-oper=read` and `rtlab sysbench memory --memory-oper=read` in turn,
# ROUNDS times, pinned to the last CPU, one second each. Each line: the median
# MiB/s, the range, and the median over sysbench's. Where every build of the
# bare loads reads at rtlab's rate and sysbench alone reads slower, the
# difference is not in the loads, which rtlab does as sysbench does, but
# elsewhere in sysbench's binary. x86-64 only.
#
# Usage: [RTLAB=BINARY] bench/seq-read-layout.sh [ROUNDS]   (default 7; about 5 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-7}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS takes a number of rounds, e.g. 7" >&2; exit 2; }
[ "$(uname -m)" = x86_64 ] || { echo "the readers are x86-64 assembly; this is $(uname -m)" >&2; exit 2; }
for tool in sysbench cc taskset; do
    command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done
if [ -z "${RTLAB:-}" ]; then
    cargo build --release --quiet 2>/dev/null || cargo build --release
    RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PADS=(0 1000 2500)
for pad in "${PADS[@]}"; do
    cc -O2 -funroll-loops -DPAD=$pad bench/seq-read-layout.c -o "$WORK/read-$pad"
done
CPU=$(( $(nproc) - 1 ))
pin() { taskset -c $CPU "$@"; }
mibs() { grep -o '([0-9.]* MiB/sec' | tr -d '(' | cut -d' ' -f1; }

echo "sysbench $(sysbench --version | cut -d' ' -f2), rtlab $("$RTLAB" --version | cut -d' ' -f2); $(nproc) CPUs, pinned to CPU $CPU; $ROUNDS rounds of 1 s runs"
printf '%-6s %-26s %9s %19s %8s\n' block run median range /sysbench
for kib in 512 1024; do
    declare -A rates=()
    names=(sysbench rtlab)
    for pad in "${PADS[@]}"; do names+=("c, code offset $pad" "asm, code offset $pad"); done
    for _ in $(seq "$ROUNDS"); do
        rates[sysbench]+=" $(pin sysbench memory --memory-block-size=${kib}K --memory-oper=read --time=1 run | mibs)"
        rates[rtlab]+=" $(pin "$RTLAB" sysbench memory --memory-block-size=${kib}K --memory-oper=read --time=1 run | mibs)"
        for pad in "${PADS[@]}"; do
            rates["c, code offset $pad"]+=" $(pin "$WORK/read-$pad" $kib c)"
            rates["asm, code offset $pad"]+=" $(pin "$WORK/read-$pad" $kib asm)"
        done
    done
    base=$(echo ${rates[sysbench]} | tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    for name in "${names[@]}"; do
        echo ${rates[$name]} | tr ' ' '\n' | sort -g | awk -v kib=$kib -v name="$name" -v base="$base" '
            { v[NR] = $1 }
            END {
                m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%-6s %-26s %9.0f %9.0f-%-9.0f %8.3f\n", kib "K", name, m, v[1], v[NR], m / base
            }'
    done
    unset rates
done
