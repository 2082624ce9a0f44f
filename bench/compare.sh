#!/usr/bin/env bash
# rtlab compare/report against the glue it replaces, in one run.
#
# 1. Fills a fresh store with RUNS real latency runs (4 threads each, 50 wake-ups
#    at 100us), spread over 10 labels, and reports the store size per run.
# 2. Measures 10 kernels' worth of histograms the usual way: cyclictest -h per
#    "kernel", then gnuplot overlays the ten histogram files (steps, log y) into
#    one SVG; and the rtlab way: `rtlab compare` of the 10 labels from the store
#    of RUNS runs (table + overlaid SVG), and the same with the full HTML report.
# Times are the best of REPEAT runs of each command; ratios are rtlab / gnuplot.
#
# Needs root (SCHED_FIFO), cyclictest (rt-tests) and gnuplot (apt-get install
# gnuplot-nox). Usage: bench/compare.sh   (RUNS=1000 REPEAT=5 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1000}
REPEAT=${REPEAT:-5}
for tool in cyclictest gnuplot; do
    command -v "$tool" >/dev/null || { echo "bench/compare.sh: $tool is missing (apt-get install rt-tests gnuplot-nox)" >&2; exit 2; }
done
cargo build --release -q 2>/dev/null || cargo build --release
R=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/store.db

now() { date +%s%N; }
# best_ms CMD...: the fastest of REPEAT runs, in ms (output discarded).
best_ms() {
    local best=
    for _ in $(seq "$REPEAT"); do
        local t0 t1
        t0=$(now)
        "$@" >/dev/null 2>&1
        t1=$(now)
        local ms=$(( (t1 - t0) / 1000000 ))
        if [[ -z $best || $ms -lt $best ]]; then best=$ms; fi
    done
    echo "$best"
}

echo "== filling the store with $RUNS runs (4 threads each)"
t0=$(now)
for i in $(seq "$RUNS"); do
    "$R" --db "$db" latency -t 4 -i 100us -l 50 -q --label "k$((i % 10))" >/dev/null 2>&1
done
t1=$(now)
size=$(stat -c %s "$db")
[[ -f $db-wal ]] && size=$(( size + $(stat -c %s "$db-wal") ))
echo "filled in $(( (t1 - t0) / 1000000 )) ms; store $(( size / 1024 )) KiB, $(( size / RUNS )) bytes per run"

labels=()
for k in $(seq 0 9); do labels+=("k$k"); done

echo "== 10 histogram files from cyclictest (not timed: measuring, not comparing)"
plot="set terminal svg size 900,480; set output '$work/gnuplot.svg'; set logscale y; set xlabel 'latency (us)'; set ylabel 'count'; plot"
for k in $(seq 0 9); do
    cyclictest -t4 -i 100 -l 50 -m -p 90 -h 400 -q >"$work/hist$k.txt" 2>/dev/null
    plot+=" '$work/hist$k.txt' using 1:(\$2+\$3+\$4+\$5) with steps title 'k$k',"
done
echo "${plot%,}" >"$work/overlay.gp"

g=$(best_ms gnuplot "$work/overlay.gp")
c=$(best_ms "$R" --db "$db" compare "${labels[@]}" --svg "$work/rtlab.svg")
h=$(best_ms "$R" --db "$db" compare "${labels[@]}" --html "$work/rtlab.html")
j=$(best_ms "$R" --db "$db" compare "${labels[@]}" --json)
r=$(best_ms "$R" --db "$db" report k0 --html "$work/run.html")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.2f", a / b }'; }
echo
printf '%-62s %8s %8s\n' "task (best of $REPEAT)" "ms" "x gnuplot"
printf '%-62s %8s %8s\n' "gnuplot: overlay 10 cyclictest histograms (steps, log y) -> SVG" "$g" "1.00"
printf '%-62s %8s %8s\n' "rtlab compare 10 labels, table + overlaid SVG ($RUNS-run store)" "$c" "$(ratio "$c" "$g")"
printf '%-62s %8s %8s\n' "rtlab compare 10 labels --json" "$j" "$(ratio "$j" "$g")"
printf '%-62s %8s %8s\n' "rtlab compare 10 labels --html (table, verdicts, all plots)" "$h" "$(ratio "$h" "$g")"
printf '%-62s %8s %8s\n' "rtlab report one run --html" "$r" "$(ratio "$r" "$g")"
echo "sizes: gnuplot.svg $(stat -c %s "$work/gnuplot.svg") B, rtlab.svg $(stat -c %s "$work/rtlab.svg") B, rtlab.html $(stat -c %s "$work/rtlab.html") B"
