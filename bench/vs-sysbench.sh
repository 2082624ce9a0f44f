#!/usr/bin/env bash
# rtlab's sysbench against the real sysbench: the same command line to both
# (`sysbench ARGS run` and `rtlab sysbench ARGS run`), the same parser on both
# outputs, and one line per comparison with the ratio rtlab/sysbench of the
# rate (MiB/s, events/s, operations/s; for mutex, 1 / total time), higher meaning rtlab did
# more.
#
# Each comparison runs rounds; a round runs both tools back to back,
# sysbench first in odd rounds and rtlab first in even ones, so that drift
# hits both alike, and gives one ratio. The line shows each tool's median
# rate, the median ratio, an interval that holds the median ratio with at
# least 90% confidence (from the order statistics of the rounds' ratios, no
# assumption on their distribution; with fewer than 5 rounds it is the range
# of the rounds, which holds less), the rounds run, and the verdict: "ok"
# when the whole interval is within the target, "OFF" when it is wholly
# outside, "undecided" when it straddles a bound. An undecided comparison
# runs two more rounds at a time, up to MAX rounds, so that a noisy machine
# gives a longer run, not a wrong verdict. Single-thread runs are pinned to
# one CPU (the last one) for both tools.
#
# Before measuring it waits (up to 5 minutes) for the 1-minute load average
# to drop below 0.3 per CPU and says so if it did not: figures from a busy
# machine are printed but marked. At the end: the count of each verdict, the
# load average, and rtlab's timing overhead per event.
#
# With -a every round also runs sysbench a second time, the control: the
# ratio of sysbench's second run to its first, with its interval and its
# verdict against the same target, in three more columns. Where sysbench
# does not hold within the target against itself, the target is finer than
# the anchor's own repeatability on this machine, and neither tool's figure
# can be told from the other's at that precision. The orders alternate as
# "sysbench rtlab sysbench" and "rtlab sysbench sysbench", so that each
# ratio has its divisor run first in one round and later in the next.
#
# Usage: bench/vs-sysbench.sh [-r ROUNDS] [-m MAX] [-t SECONDS] [-k PATTERN] [-n] [-a]
#   -r  rounds per comparison before deciding (default 5)
#   -m  rounds at most for an undecided comparison (default 15)
#   -t  seconds per run (default 2)
#   -k  only the comparisons whose name contains PATTERN
#   -n  do not wait for a quiet machine
#   -a  run the control too (sysbench against itself; half as long again)
# About 15 minutes with the defaults on a quiet machine, longer on a noisy
# one. RTLAB=BINARY: another rtlab build.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=5 MAX=15 T=2 ONLY= WAIT=1 SELF=
while getopts "r:m:t:k:na" o; do
    case $o in
    r) ROUNDS=$OPTARG ;;
    m) MAX=$OPTARG ;;
    t) T=$OPTARG ;;
    k) ONLY=$OPTARG ;;
    n) WAIT= ;;
    a) SELF=1 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $MAX =~ ^[1-9][0-9]*$ ]] ||
    { echo "-r and -m take a number of rounds (at least 1), e.g. -r 5 -m 15" >&2; exit 2; }
[ "$MAX" -ge "$ROUNDS" ] || MAX=$ROUNDS
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
# stats VALUES...: "MEDIAN LO HI", the median and its 90% interval
# (bench/interval.awk).
stats() {
    printf '%s\n' "$@" | awk -f bench/interval.awk \
        -f <(echo '{ v[NR] = $1 } END { median_interval(v, NR); print MED, LO, HI }')
}
median() { stats "$@" | cut -d' ' -f1; }

# verdict LO HI TARGET: ok, OFF or undecided (TARGET is "A-B").
verdict() {
    awk -v lo="$1" -v hi="$2" -v t="$3" 'BEGIN {
        split(t, b, "-")
        if (lo >= b[1] && hi <= b[2]) print "ok"
        else if (hi < b[1] || lo > b[2]) print "OFF"
        else print "undecided" }'
}

echo "sysbench $(sysbench --version | awk '{print $2}'), $($RTLAB --version); $CPUS CPUs;" \
    "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)$BUSY"
echo "${T}s per run, $ROUNDS rounds (up to $MAX while undecided) in alternating order"
echo "ratio = rtlab / sysbench of the rate; interval: the median ratio's, 90% confidence"
[ -z "$SELF" ] || echo "self = sysbench's second run / its first in the same rounds (the control)," \
    "with its interval and its verdict against the same target"
printf "%-34s %12s %12s %7s %13s %3s  %-9s %${SELF:+-9}s" comparison sysbench rtlab ratio interval n \
    target verdict
[ -z "$SELF" ] && echo || printf '   %6s %13s  %s\n' self interval verdict
COUNTS=$WORK/verdicts SELFCOUNTS=$WORK/self-verdicts

# cmp NAME KIND TARGET PIN|- ARGS: rounds of `sysbench ARGS run` and
# `rtlab sysbench ARGS run` until decided (see the top); KIND is the rate
# (mib, ops, eps, evt, rd, inv).
cmp() {
    local name=$1 kind=$2 target=$3 pin=$4 args=$5 s=() r=() q=() c=() round=0 tool out a b
    [[ -z $ONLY || $name == *$ONLY* ]] || return 0
    [ "$pin" = - ] && pin= || pin=$PIN
    local m lo hi v=undecided order
    while [ "$v" = undecided ] && [ "$round" -lt "$MAX" ]; do
        round=$((round + 1))
        if [ -n "$SELF" ]; then
            [ $((round % 2)) = 1 ] && order="sb rt s2" || order="rt s2 sb"
        else
            [ $((round % 2)) = 1 ] && order="sb rt" || order="rt sb"
        fi
        for tool in $order; do
            out=$WORK/$tool
            if [ "$tool" = rt ]; then
                (cd "$WORK" && $pin "$RTLAB" sysbench $args run) >"$out"
            else
                (cd "$WORK" && $pin sysbench $args run) >"$out"
            fi
        done
        a=$(rate "$kind" <"$WORK/sb") b=$(rate "$kind" <"$WORK/rt")
        s+=("$a") r+=("$b") q+=("$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')")
        [ -z "$SELF" ] || c+=("$(awk -v a="$a" -v b="$(rate "$kind" <"$WORK/s2")" 'BEGIN { print b / a }')")
        # Decide after the first ROUNDS rounds, then after every second one.
        if [ "$round" -ge "$ROUNDS" ] && [ $(((round - ROUNDS) % 2)) = 0 ]; then
            read -r m lo hi < <(stats "${q[@]}")
            v=$(verdict "$lo" "$hi" "$target")
        fi
    done
    read -r m lo hi < <(stats "${q[@]}")
    v=$(verdict "$lo" "$hi" "$target")
    echo "$v $(awk -v m="$m" -v t="$target" 'BEGIN {
        split(t, b, "-"); print (m >= b[1] && m <= b[2]) ? "in" : "out" }')" >>"$COUNTS"
    printf "%-34s %12.2f %12.2f %7.3f %6.3f-%-6.3f %3d  %s %${SELF:+-9}s" "$name" \
        "$(median "${s[@]}")" "$(median "${r[@]}")" "$m" "$lo" "$hi" "$round" "$target" "$v"
    if [ -z "$SELF" ]; then
        echo
        return
    fi
    read -r m lo hi < <(stats "${c[@]}")
    v=$(verdict "$lo" "$hi" "$target")
    echo "$v" >>"$SELFCOUNTS"
    printf '   %6.3f %6.3f-%-6.3f  %s\n' "$m" "$lo" "$hi" "$v"
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

if [ -s "$COUNTS" ]; then
    echo "verdicts: $(grep -c '^ok ' "$COUNTS") ok, $(grep -c '^OFF ' "$COUNTS") OFF," \
        "$(grep -c '^undecided ' "$COUNTS") undecided, of $(wc -l <"$COUNTS");" \
        "medians within target: $(grep -c ' in$' "$COUNTS")"
fi
if [ -s "$SELFCOUNTS" ]; then
    echo "sysbench against itself: $(grep -c '^ok' "$SELFCOUNTS") ok, $(grep -c '^OFF' "$SELFCOUNTS") OFF," \
        "$(grep -c '^undecided' "$SELFCOUNTS") undecided, of $(wc -l <"$SELFCOUNTS")"
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
