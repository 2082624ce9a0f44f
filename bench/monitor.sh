#!/usr/bin/env bash
# rtlab monitor's own cost, beside cyclictest doing the same measurement.
#
# 1. CPU: `rtlab monitor` (1 ms interval, one CPU, SCHED_FIFO 90, default 5m
#    windows) and `cyclictest -q` with the same interval, CPU and priority, run
#    side by side; each one's CPU time over CPU_SECONDS, as % of one core, and
#    the ratio, two ways: utime + stime of /proc/PID/stat (all threads; the
#    kernel samples these at each tick, so a thread that runs 10 us a ms is
#    charged by luck), and the exact run time of every thread from
#    /proc/PID/task/*/schedstat (ns).
# 2. Memory over a sped-up day: `rtlab monitor --window 1s` for DAY_SECONDS
#    (600 s = 600 windows) with retention at a compressed scale (every window
#    kept 1m, hourly rows 5m, daily rows 8m), RSS sampled every 10 s; then the
#    rows left in the store per level.
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
R=$PWD/target/release/rtlab
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cpu=$(( $(nproc) > 1 ? 1 : 0 ))
hz=$(getconf CLK_TCK)

# ticks PID: utime + stime of the process, all threads, in clock ticks.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# run_ns PID: the run time of all its threads (ns), from schedstat.
run_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%d", s }'; }
# rss_kb PID
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

if ((CPU_SECONDS > 0)); then
echo "== CPU over ${CPU_SECONDS}s: 1 ms interval on CPU $cpu, SCHED_FIFO 90"
"$R" --db "$work/cpu.db" monitor -a "$cpu" -i 1ms -p 90 -q >/dev/null &
mon=$!; pids+=("$mon")
cyclictest -q -m -a "$cpu" -t 1 -i 1000 -p 90 >/dev/null &
cyc=$!; pids+=("$cyc")
sleep 5 # both measuring
m0=$(ticks "$mon"); c0=$(ticks "$cyc"); ms0=$(run_ns "$mon"); cs0=$(run_ns "$cyc")
sleep "$CPU_SECONDS"
m1=$(ticks "$mon"); c1=$(ticks "$cyc"); ms1=$(run_ns "$mon"); cs1=$(run_ns "$cyc")
kill -TERM "$mon" "$cyc"; wait "$mon" "$cyc" 2>/dev/null || true
pct() { awk -v t="$1" -v per="$2" -v s="$CPU_SECONDS" 'BEGIN { printf "%.3f", 100 * t / per / s }'; }
mp=$(pct $((m1 - m0)) "$hz"); cp=$(pct $((c1 - c0)) "$hz")
mx=$(pct $((ms1 - ms0)) 1000000000); cx=$(pct $((cs1 - cs0)) 1000000000)
printf "%-16s %10s %10s   %% of one core\n" "" "stat" "schedstat"
printf "%-16s %10s %10s\n" "rtlab monitor" "$mp" "$mx" "cyclictest -q" "$cp" "$cx"
awk -v a="$mp" -v b="$cp" -v x="$mx" -v y="$cx" 'BEGIN { printf "ratio rtlab/cyclictest: stat %.2f, schedstat %.2f\n", (b > 0 ? a / b : 0), (y > 0 ? x / y : 0) }'
awk -v a="$mx" 'BEGIN { exit !(a < 1.0) }' && echo "goal (< 1% of one core, exact run time): met" || echo "goal (< 1% of one core, exact run time): NOT met"
fi
((DAY_SECONDS > 0)) || exit 0

echo
echo "== memory over a sped-up day: --window 1s for ${DAY_SECONDS}s, RSS every 10 s"
"$R" --db "$work/day.db" monitor -a "$cpu" -i 1ms -p 90 -q --window 1s \
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
"$R" --db "$work/day.db" monitor --show --json |
    python3 -c 'import json,sys,collections; r=json.load(sys.stdin); c=collections.Counter(x["level"] for x in r); print("rows left:", dict(c), "windows in them:", sum(x["windows"] for x in r))'
ls -l "$work/day.db" | awk '{ print "store size:", $5, "bytes" }'
