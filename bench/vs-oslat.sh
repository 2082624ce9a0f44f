#!/usr/bin/env bash
# rtlab noise vs oslat, side by side in one run.
#
# Both tools alternate with identical settings: one thread on CPU $CPU (default:
# the last online CPU), SCHED_FIFO $PRIO, $DURATION seconds (oslat takes whole
# seconds), PAIRS times; then once each for $LONG seconds, long enough for RT
# throttling (sched_rt_runtime_us < period) to stop both spinning threads.
# Both tools' gaps are put in oslat's 1-µs buckets (bucket k: a delta of k-1 to
# k µs) and summed in power-of-two groups from 1 µs (oslat's bucket 2 up), so the
# shapes compare bucket by bucket. The loop's cost per iteration is the run's
# duration over its iterations (oslat counts every iteration in its histogram;
# rtlab reports iterations and the cost of a quiet iteration).
#
# Usage: bench/vs-oslat.sh                       (root; CPU=last DURATION=1 PAIRS=3 LONG=3)
#        CPU=1 DURATION=2 PAIRS=5 bench/vs-oslat.sh
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in oslat jq; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests jq)"; exit 3; }
done
CPU=${CPU:-$(tr ',-' '\n\n' </sys/devices/system/cpu/online | tail -1)}
DURATION=${DURATION:-1}
PAIRS=${PAIRS:-3}
LONG=${LONG:-3}
PRIO=${PRIO:-90}
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# buckets: "group count" lines from oslat-layout buckets ("k count" lines, k ≥ 2),
# group g holding deltas of 2^g to 2^(g+1) µs.
groups() {
    awk '$1 >= 2 { g = int(log($1 - 1) / log(2) + 1e-9); c[g] += $2; if (g > m) m = g }
         END { for (g = 0; g <= m; g++) print g, c[g] + 0 }'
}
oslat_buckets() { jq -r '.thread["0"].histogram | to_entries[] | "\(.key) \(.value)"' "$1"; }
# rtlab's HdrHistogram buckets (value_ns, count) into oslat's 1-µs buckets.
rtlab_buckets() {
    jq -r '.total.histogram.buckets[] | "\(.[0]) \(.[1])"' "$1" |
        awk '{ k = int($1 / 1000) + 1; if (k > 1024) k = 1024; c[k] += $2 }
             END { for (k in c) print k, c[k] }' | sort -n
}

run_pair() { # seconds tag
    local d=$1 tag=$2
    oslat -q -c "$CPU" -D "$d" -f "$PRIO" -b 1024 --json="$work/oslat-$tag.json" >/dev/null
    "$RTLAB" noise -q -a "$CPU" -D "${d}s" -p "$PRIO" --json --no-save >"$work/rtlab-$tag.json"
}

row() { # tag
    local o=$work/oslat-$1.json r=$work/rtlab-$1.json
    local omax rmax oit rit odur rdur
    omax=$(jq '.thread["0"].max' "$o")
    rmax=$(jq '.total.summary.max_ns / 1000' "$r")
    oit=$(jq '[.thread["0"].histogram[]] | add' "$o")
    odur=$(jq '.thread["0"].duration' "$o")
    rit=$(jq '.metrics.iterations' "$r")
    rdur=$(jq '.duration_ns / 1e9' "$r")
    awk -v t="$1" -v om="$omax" -v rm="$rmax" -v oi="$oit" -v od="$odur" -v ri="$rit" \
        -v rd="$rdur" -v rq="$(jq '.metrics.loop_ns' "$r")" 'BEGIN {
        ol = od * 1e9 / oi; rl = rd * 1e9 / ri
        printf "%-8s %12.1f %12.1f %7.2f %10.2f %10.2f %10.2f %7.2f\n", t, om, rm, rm / om, ol, rl, rq, rl / ol }'
}

shape() { # tag
    oslat_buckets "$work/oslat-$1.json" | groups >"$work/og"
    rtlab_buckets "$work/rtlab-$1.json" | groups >"$work/rg"
    join -a1 -a2 -e 0 -o 0,1.2,2.2 "$work/og" "$work/rg" |
        awk -v t="$1" '{ lo = 2 ^ $1; r = ($2 > 0) ? sprintf("%.2f", $3 / $2) : "-"
                         printf "%-8s %6s-%-6s %10d %10d %6s\n", t, lo, 2 * lo, $2, $3, r }'
}

echo "rtlab noise vs oslat: CPU $CPU, SCHED_FIFO $PRIO, ${DURATION}s x $PAIRS, then ${LONG}s; $(uname -r)"
echo "rt throttling: $(cat /proc/sys/kernel/sched_rt_runtime_us) us of $(cat /proc/sys/kernel/sched_rt_period_us) us"
tags=()
for i in $(seq 1 "$PAIRS"); do run_pair "$DURATION" "short$i"; tags+=("short$i"); done
run_pair "$LONG" long; tags+=(long)

echo
printf "%-8s %12s %12s %7s %10s %10s %10s %7s\n" run "oslat max us" "rtlab max us" ratio \
    "oslat ns/it" "rtlab ns/it" "rtlab quiet" ratio
for t in "${tags[@]}"; do row "$t"; done
echo
echo "gaps per power-of-two group (us), oslat vs rtlab:"
printf "%-8s %13s %10s %10s %6s\n" run group oslat rtlab ratio
for t in "${tags[@]}"; do shape "$t"; done
