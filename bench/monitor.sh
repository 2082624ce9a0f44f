#!/usr/bin/env bash
# rtlab monitor's own cost, beside cyclictest doing the same measurement.
#
# 1. CPU: `rtlab monitor` (1 ms interval, one CPU, SCHED_FIFO 95, default 5m
#    windows) and `cyclictest -m -q -p 95 -i 1000 -t1` on the same CPU, run
#    side by side for CPU_SECONDS; per thread: its exact run time from
#    /proc/PID/task/TID/schedstat (ns on the CPU, context switches included)
#    as % of one core, and its wake-ups per second; each process's total and
#    the ratio. cyclictest's measuring thread is the floor: one wake-up per
#    sample costs that much here. Then the same through perf's task-clock
#    (perf stat --per-thread), which leaves the context switch out.
# 2. Memory over a sped-up day: `rtlab monitor --window 1s` for DAY_SECONDS
#    (600 s = 600 windows) with retention at a compressed scale (every window
#    kept 1m, hourly rows 5m, daily rows 8m), RSS sampled every 10 s; RSS after
#    N = 60 windows against after 10N = 600; then the rows left per level.
#
# Needs root (SCHED_FIFO) and cyclictest (rt-tests). Leaves CPU 0 to the system
# when there are two CPUs or more.
# Usage: bench/monitor.sh   (CPU_SECONDS=60 DAY_SECONDS=600 by default; 0 skips a part)
set -euo pipefail
cd "$(dirname "$0")/.."
CPU_SECONDS=${CPU_SECONDS:-60}
DAY_SECONDS=${DAY_SECONDS:-600}
command -v cyclictest >/dev/null || { echo "bench/monitor.sh: cyclictest is missing (apt-get install rt-tests)" >&2; exit 2; }
cargo build --release -q 2>/dev/null || cargo build --release
R=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cpu=$(( $(nproc) > 1 ? 1 : 0 ))
hz=$(getconf CLK_TCK)

# ticks PID: utime + stime of the process, all threads, in clock ticks.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# rss_kb PID
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# threads PID: "tid name run_ns switches" per thread.
threads() {
    for t in /proc/"$1"/task/*; do
        printf "%s %s %s %s\n" "${t##*/}" "$(tr ' ' _ <"$t/comm")" "$(cut -d' ' -f1 "$t/schedstat")" \
            "$(awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s }' "$t/status")"
    done
}

if ((CPU_SECONDS > 0)); then
echo "== CPU over ${CPU_SECONDS}s: 1 ms interval on CPU $cpu, SCHED_FIFO 95"
"$R" --db "$work/cpu.db" monitor -a "$cpu" -i 1ms -p 95 -q >/dev/null &
mon=$!; pids+=("$mon")
cyclictest -m -q -p 95 -i 1000 -t1 -a "$cpu" >/dev/null &
cyc=$!; pids+=("$cyc")
sleep 5 # both measuring
threads "$mon" >"$work/m0"; threads "$cyc" >"$work/c0"
m0=$(ticks "$mon"); c0=$(ticks "$cyc")
sleep "$CPU_SECONDS"
threads "$mon" >"$work/m1"; threads "$cyc" >"$work/c1"
m1=$(ticks "$mon"); c1=$(ticks "$cyc")
printf "%-28s %12s %12s\n" "thread" "% of a core" "wake-ups/s"
# per PROCESS-LABEL BEFORE AFTER: one line per thread, then the total; prints the total last.
per() {
    join "$3" "$4" | awk -v l="$1" -v s="$CPU_SECONDS" -v out="$2" '
        { pct = 100 * ($6 - $3) / 1e9 / s; w = ($7 - $4) / s; tot += pct; ws += w
          printf "%-28s %12.3f %12.0f\n", l " " $2, pct, w }
        END { printf "%-28s %12.3f %12.0f\n", l " (all)", tot, ws; printf "%.3f", tot > out }'
}
per "rtlab" "$work/mt" "$work/m0" "$work/m1"
per "cyclictest" "$work/ct" "$work/c0" "$work/c1"
mt=$(cat "$work/mt"); ct=$(cat "$work/ct")
floor=$(join "$work/c0" "$work/c1" | awk -v s="$CPU_SECONDS" '{ p = 100 * ($6 - $3) / 1e9 / s; if (p > v) v = p } END { printf "%.3f", v }')
awk -v a="$mt" -v b="$ct" -v f="$floor" 'BEGIN { printf "ratio rtlab/cyclictest %.2f; rtlab over the floor (cyclictest'"'"'s busiest thread) %+.3f%% of a core\n", (b > 0 ? a / b : 0), a - f }'
pct() { awk -v t="$1" -v per="$2" -v s="$CPU_SECONDS" 'BEGIN { printf "%.3f", 100 * t / per / s }'; }
echo "utime+stime (tick-sampled): rtlab $(pct $((m1 - m0)) "$hz")%, cyclictest $(pct $((c1 - c0)) "$hz")%"
awk -v a="$mt" 'BEGIN { exit !(a < 1.0) }' && echo "goal (< 1% of one core, exact run time): met" || echo "goal (< 1% of one core, exact run time): NOT met"
if command -v perf >/dev/null; then
    echo "-- perf stat task-clock over 10 s (context switches left out)"
    perf stat -e task-clock,context-switches --per-thread -p "$mon,$cyc" -- sleep 10 2>&1 |
        awk '/task-clock/ { printf "%-28s %8.3f%% of a core\n", $1, $2 / 100 } /context-switches/ { printf "%-28s %8.0f switches/s\n", $1, $2 / 10 }'
fi
kill -TERM "$mon" "$cyc"; wait "$mon" "$cyc" 2>/dev/null || true
fi
((DAY_SECONDS > 0)) || exit 0

echo
echo "== memory over a sped-up day: --window 1s for ${DAY_SECONDS}s, RSS every 10 s"
"$R" --db "$work/day.db" monitor -a "$cpu" -i 1ms -p 95 -q --window 1s \
    --keep-windows 1m --keep-hourly 5m --keep-daily 8m --duration "${DAY_SECONDS}s" >/dev/null &
day=$!; pids+=("$day")
sleep 2
samples=()
for ((t = 0; t < DAY_SECONDS; t += 10)); do
    kill -0 "$day" 2>/dev/null || break
    samples+=("$(rss_kb "$day")")
    printf "t=%4ds rss %6d kB\n" "$t" "${samples[-1]}"
    sleep 10
done
wait "$day"
first=${samples[1]:-${samples[0]}}; last=${samples[-1]}
max=$(printf "%s\n" "${samples[@]}" | sort -n | tail -1)
echo "RSS at 10 s $first kB, at the end $last kB, highest $max kB (growth $((last - first)) kB)"
n=$((${#samples[@]} / 10))
awk -v a="${samples[n]}" -v b="$last" -v n=$((n * 10)) -v m=$((${#samples[@]} * 10 - 10)) \
    'BEGIN { printf "RSS after %d windows %d kB, after %d windows %d kB: %+.1f%%\n", n, a, m, b, 100 * (b - a) / a }'
"$R" --db "$work/day.db" monitor --show --json |
    python3 -c 'import json,sys,collections; r=json.load(sys.stdin); c=collections.Counter(x["level"] for x in r); print("rows left:", dict(c), "windows in them:", sum(x["windows"] for x in r))'
ls -l "$work/day.db" | awk '{ print "store size:", $5, "bytes" }'
