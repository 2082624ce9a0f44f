#!/usr/bin/env bash
# rtlab monitor's own cost, beside cyclictest doing the same measurement.
#
# 1. CPU: `rtlab monitor` (1 ms interval, one CPU, SCHED_FIFO 90, default 5m
#    windows) and `cyclictest -q` with the same interval, CPU and priority, run
#    side by side; each one's CPU time (utime + stime of /proc/PID/stat, all its
#    threads) over CPU_SECONDS, as % of one core, and the ratio.
# 2. Memory over a sped-up day: `rtlab monitor --window 1s` for DAY_SECONDS
#    (600 s = 600 windows) with retention at a compressed scale (every window
#    kept 1m, hourly rows 5m, daily rows 8m), RSS sampled every 10 s; then the
#    rows left in the store per level.
#
# Needs root (SCHED_FIFO) and cyclictest (rt-tests). Leaves CPU 0 to the system
# when there are two CPUs or more.
# Usage: bench/monitor.sh   (CPU_SECONDS=60 DAY_SECONDS=600 by default)
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
# rss_kb PID
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

echo "== CPU over ${CPU_SECONDS}s: 1 ms interval on CPU $cpu, SCHED_FIFO 90"
"$R" --db "$work/cpu.db" monitor -a "$cpu" -i 1ms -p 90 -q >/dev/null &
mon=$!; pids+=("$mon")
cyclictest -q -m -a "$cpu" -t 1 -i 1000 -p 90 >/dev/null &
cyc=$!; pids+=("$cyc")
sleep 5 # both measuring
m0=$(ticks "$mon"); c0=$(ticks "$cyc")
sleep "$CPU_SECONDS"
m1=$(ticks "$mon"); c1=$(ticks "$cyc")
kill -TERM "$mon" "$cyc"; wait "$mon" "$cyc" 2>/dev/null || true
pct() { awk -v t="$1" -v hz="$hz" -v s="$CPU_SECONDS" 'BEGIN { printf "%.3f", 100 * t / hz / s }'; }
mp=$(pct $((m1 - m0))); cp=$(pct $((c1 - c0)))
printf "%-22s %8s %% of one core (%d ticks of 1/%d s)\n" "rtlab monitor" "$mp" $((m1 - m0)) "$hz"
printf "%-22s %8s %% of one core (%d ticks of 1/%d s)\n" "cyclictest -q" "$cp" $((c1 - c0)) "$hz"
awk -v a="$mp" -v b="$cp" 'BEGIN { if (b > 0) printf "ratio rtlab/cyclictest: %.2f\n", a / b; else print "ratio: cyclictest used no measurable CPU" }'
awk -v a="$mp" 'BEGIN { exit !(a < 1.0) }' && echo "goal (< 1% of one core): met" || echo "goal (< 1% of one core): NOT met"

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
