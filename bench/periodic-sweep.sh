#!/usr/bin/env bash
# rtlab periodic: the sweep table on this machine, and the sleep method's period
# jitter side by side with cyclictest's wake-up latency at the same interval.
#
# 1. `rtlab periodic --sweep LO..HI --method all --load cpu:1`: the highest
#    frequency each method holds (achieved frequency and every period within
#    10% of nominal), idle and under one CPU hog; SCHED_FIFO 90, pinned to the
#    last CPU, 200 ms points.
# 2. No tool sweeps a frequency, so the anchor is cyclictest at the interval of
#    a sleep-timed periodic run: `rtlab periodic --method sleep -f F` against
#    `cyclictest -i 1e6/F` (same CPU, priority, duration). A period is the
#    difference of two wake-ups, so its jitter |period − nominal| is at most
#    the larger of two latencies minus the smaller: rtlab's jitter maximum
#    should stay within cyclictest's latency maximum (ratio ≤ 1, noise aside).
#
# Usage: bench/periodic-sweep.sh   (root; SWEEP=1kHz..1MHz FREQ=1000 SECS=10)
set -euo pipefail
cd "$(dirname "$0")/.."

SWEEP=${SWEEP:-1kHz..1MHz}
FREQ=${FREQ:-1000}
SECS=${SECS:-10}
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in cyclictest jq; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests jq)"; exit 3; }
done
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
CPU=$(( $(nproc) - 1 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== sweep $SWEEP, all methods, idle and cpu:1 (CPU $CPU)"
"$RTLAB" periodic --sweep "$SWEEP" --method all --load cpu:1 --cpu "$CPU" --no-save \
    | sed -n '/^method/,/points in/p'

echo
echo "== sleep method at $FREQ Hz vs cyclictest -i $((1000000 / FREQ)) (${SECS}s each, CPU $CPU, FIFO 90)"
"$RTLAB" periodic --method sleep -f "$FREQ" -D "$SECS" --cpu "$CPU" -p 90 --json --no-save \
    > "$work/p.json"
cyclictest -q -m -p 90 -i $((1000000 / FREQ)) -D "$SECS" -t 1 -a "$CPU" --json="$work/c.json" \
    > /dev/null
p_max=$(jq '.series[0].summary.max_ns / 1000' "$work/p.json")
p_p99=$(jq '.series[0].summary.p99_ns / 1000' "$work/p.json")
p_mean=$(jq '.series[0].summary.mean_ns / 1000' "$work/p.json")
missed=$(jq '.metrics.missed_periods' "$work/p.json")
achieved=$(jq '.metrics.achieved_hz' "$work/p.json")
c_max=$(jq '[.thread[]][0].max' "$work/c.json")
c_avg=$(jq '[.thread[]][0].avg' "$work/c.json")
printf '%-34s %10s %10s %10s\n' "" "mean (µs)" "p99 (µs)" "max (µs)"
printf '%-34s %10.1f %10.1f %10.1f\n' "rtlab periodic jitter" "$p_mean" "$p_p99" "$p_max"
printf '%-34s %10.1f %10s %10.1f\n' "cyclictest latency" "$c_avg" "-" "$c_max"
awk -v a="$p_max" -v b="$c_max" 'BEGIN { printf "ratio jitter max / latency max: %.2f\n", (b > 0 ? a / b : 0) }'
echo "rtlab: achieved $achieved Hz, $missed missed periods"
