#!/usr/bin/env bash
# rtlab latency vs cyclictest, side by side in one run.
#
# Both tools alternate with identical settings (-i 200us, -l LOOPS, SCHED_FIFO 90,
# mlockall, one thread pinned to CPU 0, cpu_dma_latency 0), first on an idle
# machine, then under `stress-ng --cpu 2`. Percentiles of both are computed the same
# way, from each tool's 1-µs histogram file (cyclictest -h / rtlab --histfile), so
# the comparison does not depend on either tool's own arithmetic. CPU cost per
# sample is (user+sys)/samples from /usr/bin/time; memory is peak RSS. Page
# faults: those of the whole process (start-up included, /usr/bin/time's minor +
# major), and for rtlab those its measuring threads took while measuring (the
# run's "page faults while measuring"), which must be 0; cyclictest does not
# report its own.
#
# Usage: bench/vs-cyclictest.sh            (LOOPS=100000 PAIRS=3 by default; root)
#        LOOPS=20000 PAIRS=3 bench/vs-cyclictest.sh
#        RTLAB=/path/to/rtlab bench/vs-cyclictest.sh   (another build, e.g. an older one)
set -euo pipefail
cd "$(dirname "$0")/.."

LOOPS=${LOOPS:-100000}
PAIRS=${PAIRS:-3}
HIST_US=10000
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in cyclictest stress-ng /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests stress-ng time)"; exit 3; }
done
if [ -z "${RTLAB:-}" ]; then
    cargo build --release -q
    RTLAB=$PWD/target/release/rtlab
fi
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT

# pct FILE Q: latency (µs) at quantile Q from a cyclictest-layout histogram,
# counting overflows as above the range.
pct() {
    awk -v q="$2" '
        /^[0-9]/ { b[$1+0] = $2; n++ ; next }
        /^# Histogram Overflows:/ { ov = $4 }
        END {
            for (i = 0; i < n; i++) total += b[i]; total += ov
            want = q * total; acc = 0
            for (i = 0; i < n; i++) { acc += b[i]; if (acc >= want) { print i; exit } }
            print ">" n
        }' "$1"
}
footer() { awk -v k="# $2:" 'index($0, k) == 1 { print $NF }' "$1"; }

run_one() { # tool condition pair
    local tool=$1 cond=$2 i=$3 hist=$work/$1-$2-$3.hist tm=$work/$1-$2-$3.time out=$work/$1-$2-$3.out
    local window=-
    if [ "$tool" = cyclictest ]; then
        /usr/bin/time -f "%U %S %M %R %F" -o "$tm" cyclictest -q -m -p 90 -i 200 -l "$LOOPS" -t 1 -a 0 \
            -h "$HIST_US" --histfile="$hist" >"$out"
    else
        /usr/bin/time -f "%U %S %M %R %F" -o "$tm" "$RTLAB" latency -q -p 90 -i 200us -l "$LOOPS" --cpus 0 \
            --histogram-max "${HIST_US}us" --histfile "$hist" --no-save >"$out"
        window=$(awk '/^page faults while measuring:/ { print $5 }' "$out")
    fi
    read -r user sys rss minflt majflt < "$tm"
    printf '%s %s %s %s %s %s %s %s %s %s\n' "$tool" "$cond" "$(footer "$hist" "Min Latencies")" \
        "$(pct "$hist" 0.5)" "$(pct "$hist" 0.99)" "$(footer "$hist" "Max Latencies")" \
        "$(awk -v u="$user" -v s="$sys" -v n="$LOOPS" 'BEGIN { printf "%.0f", (u + s) * 1e9 / n }')" "$rss" \
        "$((minflt + majflt))" "${window:-?}" >> "$work/results"
}

for cond in idle stress; do
    if [ "$cond" = stress ]; then
        stress-ng --cpu 2 --timeout 0 >/dev/null 2>&1 &
        sleep 1
    fi
    for i in $(seq 1 "$PAIRS"); do
        run_one cyclictest "$cond" "$i"
        run_one rtlab "$cond" "$i"
    done
    [ "$cond" = stress ] && { kill %1; wait %1 2>/dev/null || true; }
done

echo "rtlab vs cyclictest: -i 200us -l $LOOPS -p 90 -m, 1 thread on CPU 0, $PAIRS pairs per condition"
echo "kernel: $(uname -r) $(uname -v)"
echo
awk '
    { key = $1 " " $2; n[key]++
      min[key] += $3; p50[key] += $4; p99[key] += $5; max[key] += $6; cpu[key] += $7; rss[key] += $8
      flt[key] += $9
      if ($10 == "-") win[key] = "-"; else if (win[key] != "?") win[key] = ($10 == "?") ? "?" : win[key] + $10 }
    END {
        printf "%-11s %-7s %8s %8s %8s %8s %14s %10s %12s %14s\n", "tool", "load", "min_us", "p50_us", "p99_us", "max_us", "cpu_ns/sample", "rss_kb", "proc_faults", "faults_in_loop"
        split("idle stress", conds, " ")
        for (c = 1; c <= 2; c++) for (t = 1; t <= 2; t++) {
            tool = (t == 1) ? "cyclictest" : "rtlab"; key = tool " " conds[c]
            if (!(key in n)) continue
            printf "%-11s %-7s %8.1f %8.1f %8.1f %8.1f %14.0f %10.0f %12.0f %14s\n", tool, conds[c], min[key]/n[key], p50[key]/n[key], p99[key]/n[key], max[key]/n[key], cpu[key]/n[key], rss[key]/n[key], flt[key]/n[key], win[key]
        }
        print ""
        printf "%-7s %12s %12s %12s %12s %16s %10s\n", "load", "min ratio", "p50 ratio", "p99 ratio", "max ratio", "cpu/sample ratio", "rss ratio"
        for (c = 1; c <= 2; c++) {
            a = "cyclictest " conds[c]; b = "rtlab " conds[c]
            if (!(a in n) || !(b in n)) continue
            printf "%-7s %12.2f %12.2f %12.2f %12.2f %16.2f %10.2f\n", conds[c], min[b]/min[a], p50[b]/p50[a], p99[b]/p99[a], max[b]/max[a], cpu[b]/cpu[a], rss[b]/rss[a]
        }
        print "(means over the pairs; ratio = rtlab / cyclictest; below 1 is better for rtlab;"
        print " proc_faults: minor + major of the whole process; faults_in_loop: total over the pairs"
        print " of the faults the measuring threads took while measuring, as rtlab records them)"
    }' "$work/results"
