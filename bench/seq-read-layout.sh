#!/usr/bin/env bash
# sysbench's sequential read, instruction for instruction, timed alone with its
# loop at sixteen places in a page of code, beside sysbench and rtlab, at the
# block sizes that lie in L2 (512 KiB and 1 MiB, on a CPU with 1 MiB of L2).
#
# bench/seq-read-layout.c holds the instructions of sysbench 1.0.20's compiled
# `event_seq_read` (Debian's binary); this script builds it with the top of the
# loop at 0x00a, 0x10a, ... 0xf0a into a 4 KiB page (ten bytes into a 64-byte
# line, as in sysbench's binary, whose loop lies at 0x90a), and runs every
# build, `sysbench memory --memory-oper=read` and `rtlab sysbench memory
# --memory-oper=read` in turn, ROUNDS times, pinned to the last CPU, one
# second each. Each line: the median MiB/s, the range, and the median over
# sysbench's. Where the same instructions read at different rates in
# different places, the rate of this loop is as much the place's as the
# work's, and a tool that does the same work can read faster or slower than
# sysbench by as much. x86-64 only.
#
# Usage: [RTLAB=BINARY] bench/seq-read-layout.sh [ROUNDS]   (default 7; about 6 minutes)
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
PLACES=()
for line in $(seq 0 15); do
    at=$(printf '0x%x0a' "$line")
    PLACES+=("$at")
    cc -O2 -DLOOP_AT="$at" bench/seq-read-layout.c -o "$WORK/read-$at"
done
CPU=$(( $(nproc) - 1 ))
pin() { taskset -c $CPU "$@"; }
mibs() { grep -o '([0-9.]* MiB/sec' | tr -d '(' | cut -d' ' -f1; }

echo "sysbench $(sysbench --version | cut -d' ' -f2), rtlab $("$RTLAB" --version | cut -d' ' -f2); $(nproc) CPUs, pinned to CPU $CPU; $ROUNDS rounds of 1 s runs"
printf '%-6s %-26s %9s %19s %8s\n' block run median range /sysbench
for kib in 512 1024; do
    declare -A rates=()
    names=(sysbench rtlab)
    for at in "${PLACES[@]}"; do names+=("loop at $at"); done
    for _ in $(seq "$ROUNDS"); do
        rates[sysbench]+=" $(pin sysbench memory --memory-block-size=${kib}K --memory-oper=read --time=1 run | mibs)"
        rates[rtlab]+=" $(pin "$RTLAB" sysbench memory --memory-block-size=${kib}K --memory-oper=read --time=1 run | mibs)"
        for at in "${PLACES[@]}"; do
            rates["loop at $at"]+=" $(pin "$WORK/read-$at" $kib)"
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
