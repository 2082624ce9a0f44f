#!/usr/bin/env bash
# rtlab latency --policy deadline vs cyclicdeadline, side by side in one run.
#
# Same reservation as cyclicdeadline takes for -i 10000 (runtime 6 ms, deadline
# = period = 10 ms, read from the kernel with chrt -p while it ran), one thread,
# unpinned (deadline threads cannot be pinned narrower than their root domain),
# SECS seconds each, PAIRS alternations. cyclicdeadline refuses intervals
# under 2 ms unless HRTICK is on in debugfs, which this VM does not have, so
# the interval stays at 10 ms. Both report wake-up latency after the period's
# start (µs): min / avg / max, and rtlab's ratio to cyclicdeadline.
#
# Usage: bench/vs-cyclicdeadline.sh   (root; SECS=10 PAIRS=2)
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECS:-10}
PAIRS=${PAIRS:-2}
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_DEADLINE)"; exit 3; }
for t in cyclicdeadline jq; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests jq)"; exit 3; }
done
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-16s %4s %8s %8s %8s %8s %10s\n' tool pair cycles min avg max dl_overruns
for i in $(seq 1 "$PAIRS"); do
    cyclicdeadline -q -i 10000 -t 1 -D "$SECS" --json="$work/cd$i.json" > /dev/null
    jq -r --arg i "$i" '.thread["0"] | "cyclicdeadline \($i) \(.cycles) \(.min) \(.avg) \(.max) -"' \
        "$work/cd$i.json" >> "$work/rows"
    "$RTLAB" latency --policy deadline -t 1 -i 10ms --dl-runtime 6ms --dl-deadline 10ms \
        --dl-period 10ms -D "$SECS" --json --no-save > "$work/r$i.json"
    jq -r --arg i "$i" '.total as $t | "rtlab \($i) \($t.counters.samples) \($t.summary.min_ns / 1000) \($t.summary.mean_ns / 1000) \($t.summary.max_ns / 1000) \(.metrics.dl_overruns)"' \
        "$work/r$i.json" >> "$work/rows"
done
awk '{ printf "%-16s %4s %8s %8.1f %8.1f %8.1f %10s\n", $1, $2, $3, $4, $5, $6, $7 }' "$work/rows"
awk '
    $1 == "cyclicdeadline" { cmin += $4; cavg += $5; cmax += $6; n++ }
    $1 == "rtlab" { rmin += $4; ravg += $5; rmax += $6 }
    END {
        printf "ratios rtlab/cyclicdeadline (means over %d pairs): min %.2f  avg %.2f  max %.2f\n",
            n, rmin / cmin, ravg / cavg, rmax / cmax
    }' "$work/rows"
