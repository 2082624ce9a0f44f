#!/usr/bin/env bash
# bench/store.sh [RUNS]: the results store at scale, next to what people keep today
# (one cyclictest -h file per run, searched with grep).
#
# Saves RUNS (default 1000) copies of one real 4-thread latency run with
# `rtlab results import` (one transaction per run, as every measuring command
# does), then times `rtlab results list` over all of them and `rtlab results
# show` of single runs, and reports the database size per run. The anchor side:
# RUNS copies of a real `cyclictest -t4 -h1000` file, "listed" with grep over
# them all and "loaded" with cat. Target: list under 1 s for 1000 runs.
# RTLAB=/path/to/rtlab bench/store.sh: another build (e.g. an older one).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000}
if [ -n "${RTLAB:-}" ]; then
    BIN=$RTLAB
else
    cargo build --release -q
    BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

policy=fifo
[ "$(id -u)" -eq 0 ] || policy=other
echo "template: rtlab latency -t 4 -l 2000 -i 200us --policy $policy; cyclictest -t 4 -l 2000 -i 200 -h 1000 -q"
"$BIN" --db "$tmp/template.db" latency -t 4 -l 2000 -i 200us --policy "$policy" --json -q >"$tmp/run.json"
have_cyclictest=1
if command -v cyclictest >/dev/null; then
    prio=(); [ "$policy" = fifo ] && prio=(-p 90)
    cyclictest -t 4 -l 2000 -i 200 -h 1000 -q "${prio[@]}" >"$tmp/hist.txt" 2>/dev/null
    mkdir "$tmp/files"
    for i in $(seq "$RUNS"); do cp "$tmp/hist.txt" "$tmp/files/run$i.txt"; done
else
    have_cyclictest=0
    echo "cyclictest not installed: anchor columns skipped"
fi

db=$tmp/bench.db
files=()
for _ in $(seq "$RUNS"); do files+=("$tmp/run.json"); done
t0=$(now)
"$BIN" --db "$db" results import "${files[@]}" >/dev/null
t1=$(now)
save=$(secs "$t0" "$t1")

t0=$(now); "$BIN" --db "$db" results list >/dev/null; t1=$(now)
list=$(secs "$t0" "$t1")
t0=$(now); "$BIN" --db "$db" results list --json >/dev/null; t1=$(now)
list_json=$(secs "$t0" "$t1")
t0=$(now); "$BIN" --db "$db" results list --label '%PREEMPT%' --since 1d >/dev/null; t1=$(now)
list_filtered=$(secs "$t0" "$t1")
t0=$(now)
for id in $(seq 1 $((RUNS / 10)) "$RUNS"); do "$BIN" --db "$db" results show "$id" --json >/dev/null; done
t1=$(now)
loads=$(seq 1 $((RUNS / 10)) "$RUNS" | wc -l)
load=$(awk -v s="$(secs "$t0" "$t1")" -v n="$loads" 'BEGIN { printf "%.4f", s / n }')
"$BIN" --db "$db" results list >/dev/null # checkpoint the WAL before measuring size
size=$(( $(stat -c %s "$db") + $(stat -c %s "$db-wal" 2>/dev/null || echo 0) ))
per_run=$(( size / RUNS ))
rows=$("$BIN" --db "$db" results list --json | grep -c '"id"')
[ "$rows" -eq "$RUNS" ] || { echo "list shows $rows runs, expected $RUNS" >&2; exit 1; }

echo
printf '%-34s %12s %12s %8s\n' "operation ($RUNS runs, 4 threads)" rtlab anchor ratio
printf '%-34s %11ss %12s %8s\n' "save all (one transaction each)" "$save" "-" "-"
printf '%-34s %11sms %12s %8s\n' "save, per run" "$(awk -v s="$save" -v n="$RUNS" 'BEGIN { printf "%.2f", s * 1000 / n }')" "-" "-"
if [ "$have_cyclictest" = 1 ]; then
    t0=$(now); grep -H '^# Max Latencies' "$tmp"/files/*.txt | sort >/dev/null; t1=$(now)
    grep_list=$(secs "$t0" "$t1")
    t0=$(now); cat "$tmp/files/run1.txt" >/dev/null; t1=$(now)
    cat_load=$(secs "$t0" "$t1")
    file_size=$(stat -c %s "$tmp/hist.txt")
    printf '%-34s %11ss %11ss %8s\n' "list (table; anchor: grep max)" "$list" "$grep_list" "$(ratio "$list" "$grep_list")"
    printf '%-34s %11ss %12s %8s\n' "list --json" "$list_json" "-" "-"
    printf '%-34s %11ss %12s %8s\n' "list --label LIKE --since" "$list_filtered" "-" "-"
    printf '%-34s %11ss %11ss %8s\n' "load one run (show --json; cat)" "$load" "$cat_load" "$(ratio "$load" "$cat_load")"
    printf '%-34s %10sKB %10sKB %8s\n' "size per run (db; -h file)" "$((per_run / 1024))" "$((file_size / 1024))" "$(ratio "$per_run" "$file_size")"
else
    printf '%-34s %11ss\n' "list" "$list" "list --json" "$list_json" "list --label LIKE --since" "$list_filtered"
    printf '%-34s %11ss\n' "load one run (show --json)" "$load"
    printf '%-34s %10sKB\n' "size per run" "$((per_run / 1024))"
fi
echo
awk -v l="$list" 'BEGIN { exit !(l < 1.0) }' && echo "target list < 1 s: met ($list s)" || echo "target list < 1 s: MISSED ($list s)"
