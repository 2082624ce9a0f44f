#!/usr/bin/env bash
# rtlab's sysbench against the real sysbench: the same command line to both
# (`sysbench ARGS run` and `rtlab sysbench ARGS run`), the same parser on both
# outputs, and one line per comparison with the ratio rtlab/sysbench of the
# rate (MiB/s, events/s, operations/s; for mutex, 1 / total time), higher meaning rtlab did
# more.
#
# Each comparison runs ROUNDS rounds; a round runs both tools back to back,
# sysbench first in odd rounds and rtlab first in even ones, so that drift
# hits both alike, and gives one ratio. The line shows each tool's median
# rate, the median ratio and the range of the rounds' ratios (the spread),
# and whether the median is within the target. Single-thread runs are pinned
# to one CPU (the last one) for both tools.
#
# Before measuring it waits (up to 5 minutes) for the 1-minute load average
# to drop below 0.3 per CPU and says so if it did not: figures from a busy
# machine are printed but marked. At the end: the load average, and rtlab's
# timing overhead per event.
#
# Usage: bench/vs-sysbench.sh [-r ROUNDS] [-t SECONDS] [-k PATTERN] [-n]
#   -r  rounds per comparison (default 5)
#   -t  seconds per run (default 2)
#   -k  only the comparisons whose name contains PATTERN
#   -n  do not wait for a quiet machine
# About 12 minutes with the defaults. RTLAB=BINARY: another rtlab build.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=5 T=2 ONLY= WAIT=1
while getopts "r:t:k:n" o; do
    case $o in
    r) ROUNDS=$OPTARG ;;
    t) T=$OPTARG ;;
    k) ONLY=$OPTARG ;;
    n) WAIT= ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 2; }
if [ -z "${RTLAB:-}" ]; then
    cargo build --release --quiet 2>/dev/null || cargo build --release
    RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
export RTLAB_NO_STORE=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CPUS=$(nproc)
PIN="taskset -c $((CPUS - 1))"

load1() { cut -d' ' -f1 /proc/loadavg; }
quiet() { awk -v l="$(load1)" -v n="$CPUS" 'BEGIN { exit !(l < 0.3 * n) }'; }
BUSY=
if [ -n "$WAIT" ]; then
    for _ in $(seq 60); do quiet && break; sleep 5; done
fi
quiet || BUSY=" (BUSY: the figures below are not to be trusted)"

# rate KIND < output: the rate of one sysbench-layout output.
rate() {
    awk -v kind="$1" '
        /MiB transferred/ { mib = $0; sub(/.*\(/, "", mib); sub(/ MiB.*/, "", mib) }
        /reads\/s:/ { rd = $NF }
        /Total operations:/ { ops = $0; sub(/.*\(/, "", ops); sub(/ per second.*/, "", ops) }
        /events per second:/ { eps = $NF }
        /total time:/ { t = $NF; sub("s$", "", t) }
        /total number of events:/ { ev = $NF }
        END {
            if (kind == "mib") print mib
            else if (kind == "eps") print eps
            else if (kind == "rd") print rd
            else if (kind == "ops") print ops
            else if (kind == "evt") print ev / t
            else print 1 / t
        }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "sysbench $(sysbench --version | awk '{print $2}'), $($RTLAB --version); $CPUS CPUs;" \
    "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)$BUSY"
echo "${T}s per run, $ROUNDS rounds in alternating order; ratio = rtlab / sysbench of the rate"
printf '%-34s %12s %12s %7s %13s  %s\n' comparison sysbench rtlab ratio "spread" target

# cmp NAME KIND TARGET PIN|- ARGS: ROUNDS rounds of `sysbench ARGS run` and
# `rtlab sysbench ARGS run`; KIND is the rate (mib, ops, eps, evt, rd, inv).
cmp() {
    local name=$1 kind=$2 target=$3 pin=$4 args=$5 s=() r=() q=() round tool out a b
    [[ -z $ONLY || $name == *$ONLY* ]] || return 0
    [ "$pin" = - ] && pin= || pin=$PIN
    for round in $(seq "$ROUNDS"); do
        for tool in $([ $((round % 2)) = 1 ] && echo "sb rt" || echo "rt sb"); do
            out=$WORK/$tool
            if [ "$tool" = sb ]; then
                (cd "$WORK" && $pin sysbench $args run) >"$out"
            else
                (cd "$WORK" && $pin "$RTLAB" sysbench $args run) >"$out"
            fi
        done
        a=$(rate "$kind" <"$WORK/sb") b=$(rate "$kind" <"$WORK/rt")
        s+=("$a") r+=("$b") q+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')")
    done
    local m lo hi ok
    m=$(median "${q[@]}")
    lo=$(printf '%s\n' "${q[@]}" | sort -g | head -1)
    hi=$(printf '%s\n' "${q[@]}" | sort -g | tail -1)
    ok=$(awk -v m="$m" -v t="$target" 'BEGIN {
        if (split(t, b, "-") != 2) { print ""; exit }
        print (m >= b[1] && m <= b[2]) ? "ok" : "OFF" }')
    printf '%-34s %12.2f %12.2f %7.3f %6.3f-%-6.3f  %s %s\n' "$name" "$(median "${s[@]}")" \
        "$(median "${r[@]}")" "$m" "$lo" "$hi" "$target" "$ok"
}

MEM="memory --time=$T"
for size in 1K 1M 64M; do
    for access in seq rnd; do
        for oper in write read; do
            cmp "memory $size $access $oper MiB/s" mib 0.97-1.03 pin \
                "$MEM --memory-block-size=$size --memory-access-mode=$access --memory-oper=$oper"
        done
    done
done
cmp "memory 1K seq none ops/s" ops 0.97-1.03 pin "$MEM --memory-oper=none"
cmp "memory 1K seq write, 2 threads" mib 0.97-1.03 - "$MEM --threads=2"
cmp "memory 1K local, 2 threads" mib 0.97-1.03 - "$MEM --threads=2 --memory-scope=local"
cmp "cpu events/s, max prime 2000" eps 0.97-1.03 pin "cpu --cpu-max-prime=2000 --time=$T"
cmp "cpu events/s, max prime 20000" eps 0.97-1.03 pin "cpu --cpu-max-prime=20000 --time=$T"
cmp "threads events/s, 1 thread" evt 0.97-1.03 pin "threads --time=$T"
cmp "threads events/s, yields 1 locks 1" evt 0.97-1.03 pin \
    "threads --thread-yields=1 --thread-locks=1 --time=$T"
cmp "threads events/s, 4 threads" evt 0.97-1.03 - "threads --threads=4 --time=$T"
cmp "mutex 1/time, 1 thread" inv 0.97-1.03 pin "mutex"
cmp "mutex 1/time, loops 0" inv 0.97-1.03 pin "mutex --mutex-loops=0 --mutex-locks=2000000"
cmp "mutex 1/time, 4 threads" inv 0.97-1.03 - "mutex --threads=4"
FIO="fileio --file-total-size=256M --file-test-mode=rndrw"
if [[ -z $ONLY || "fileio" == *$ONLY* ]]; then
    (cd "$WORK" && sysbench $FIO prepare >/dev/null)
    cmp "fileio rndrw 256M reads/s" rd 0.90-1.10 - "$FIO --time=$T"
    (cd "$WORK" && sysbench $FIO cleanup >/dev/null)
fi

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "rtlab's own modes beside the drop-in (not sysbench's work; for information):"
for size in 1K 64M; do
    printf '  memory %-3s seq write, --mode bandwidth: %s MiB/s\n' "$size" "$(
        $PIN "$RTLAB" bench memory --block-size "$size" --mode bandwidth --time "$T" --no-save --json |
            grep -o '"mib_per_s": [0-9.]*' | awk '{ printf "%.2f", $2 }'
    )"
done
echo
echo "rtlab's timing overhead per event (an empty event):"
for mode in sysbench bandwidth; do
    printf '  %-9s %s ns\n' "$mode" "$(
        "$RTLAB" bench memory --mode "$mode" --events 1 --no-save --json |
            grep -o '"timing_overhead_ns": [0-9.]*' | awk '{ printf "%.0f", $2 }'
    )"
done
