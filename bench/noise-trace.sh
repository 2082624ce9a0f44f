#!/usr/bin/env bash
# The cost of `rtlab noise --trace` on the spinning loop: runs with and without
# it alternate on one CPU (SCHED_FIFO $PRIO, $DURATION, PAIRS times) and print
# the cost of a quiet iteration, the run's time over all its iterations, the
# gaps marked and the trace's events per second.
#
# Usage: bench/noise-trace.sh                 (root; CPU=last DURATION=900ms PAIRS=3 PRIO=1)
#        THRESHOLD=20us PAIRS=5 bench/noise-trace.sh
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO, tracefs)"; exit 3; }
command -v jq >/dev/null || { echo "missing jq (apt-get install jq)"; exit 3; }
CPU=${CPU:-$(tr ',-' '\n\n' </sys/devices/system/cpu/online | tail -1)}
DURATION=${DURATION:-900ms}
PAIRS=${PAIRS:-3}
PRIO=${PRIO:-1}
THRESHOLD=${THRESHOLD:-10us}
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab

printf '%-8s %12s %14s %10s %10s %10s\n' run "quiet ns/it" "all ns/it" gaps marked "events/s"
for _ in $(seq "$PAIRS"); do
    for mode in plain trace; do
        args=(noise -a "$CPU" -p "$PRIO" -D "$DURATION" --json --no-save)
        [ "$mode" = trace ] && args+=(--trace --trace-threshold "$THRESHOLD")
        "$RTLAB" "${args[@]}" 2>/dev/null | jq -r --arg m "$mode" '
            (.duration_ns / 1e9) as $s
            | [$m, (.metrics.loop_ns * 100 | round / 100),
               ((.duration_ns / .metrics.iterations) * 100 | round / 100),
               .total.counters.samples,
               (.why.spikes_total // "-"),
               (if .why then (.why.events / $s | round) else "-" end)]
            | @tsv' | awk -F'\t' '{ printf "%-8s %12s %14s %10s %10s %10s\n", $1, $2, $3, $4, $5, $6 }'
    done
done
