#!/usr/bin/env bash
# rtlab bench vs sysbench by the work per event, for a machine others are using:
# CPU time per event (perf stat's task-clock, which time spent waiting for the
# CPU does not inflate) and, with --callgrind, instructions per event.
#
# Each figure is the difference between a run of N events and a run of 1 event
# (so that start-up, rtlab's timing-overhead measurement and sysbench's Lua
# start are left out), divided by N - 1 (mutex: per lock, its one event per
# thread taking N locks). cpu runs `rtlab bench`; the others run both tools
# through the same sysbench command line (`rtlab sysbench`). CPU times are the best of ROUNDS rounds,
# the tools alternating; instruction counts are exact and taken once.
#
# Usage: [RTLAB=BINARY] bench/vs-sysbench-work.sh [ROUNDS] [--callgrind]
#   defaults: 5 rounds, no callgrind, the release build of this tree (RTLAB:
#   another rtlab binary, e.g. an older build). About 10 minutes (15 more with
#   --callgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=5
CALLGRIND=
for a in "$@"; do
    case $a in
    --callgrind) CALLGRIND=1 ;;
    *) ROUNDS=$a ;;
    esac
done
for tool in sysbench perf; do
    command -v $tool >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done
[ -z "$CALLGRIND" ] || command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
if [ -z "${RTLAB:-}" ]; then
    cargo build --release --quiet 2>/dev/null || cargo build --release
    RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# msec CMD...: the task-clock of one run (ms).
msec() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
# instr CMD...: the instructions of one run.
instr() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
# min VALUES...
min() { printf '%s\n' "$@" | sort -g | head -1; }

# compare NAME N SYSBENCH_1 SYSBENCH_N RTLAB_1 RTLAB_N: one line; the commands
# are strings, run with eval.
compare() {
    local name=$1 n=$2 s1=() sn=() r1=() rn=() round
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) = 1 ]; then
            s1+=("$(eval msec "$3")") sn+=("$(eval msec "$4")")
            r1+=("$(eval msec "$5")") rn+=("$(eval msec "$6")")
        else
            r1+=("$(eval msec "$5")") rn+=("$(eval msec "$6")")
            s1+=("$(eval msec "$3")") sn+=("$(eval msec "$4")")
        fi
    done
    local s r si ri
    s=$(awk -v a="$(min "${s1[@]}")" -v b="$(min "${sn[@]}")" -v n="$n" 'BEGIN { print (b - a) / (n - 1) }')
    r=$(awk -v a="$(min "${r1[@]}")" -v b="$(min "${rn[@]}")" -v n="$n" 'BEGIN { print (b - a) / (n - 1) }')
    if [ -n "$CALLGRIND" ]; then
        si=$(awk -v a="$(eval instr "$3")" -v b="$(eval instr "$4")" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / (n - 1) }')
        ri=$(awk -v a="$(eval instr "$5")" -v b="$(eval instr "$6")" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / (n - 1) }')
    else
        si=- ri=-
    fi
    printf '%-30s %12.4f %12.4f %7.3f %12s %12s\n' "$name" "$s" "$r" \
        "$(awk -v a="$s" -v b="$r" 'BEGIN { print a / b }')" "$si" "$ri"
}

echo "sysbench $(sysbench --version | awk '{print $2}'), $($RTLAB --version); $(nproc) CPUs;" \
    "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); best of $ROUNDS rounds"
printf '%-30s %12s %12s %7s %12s %12s\n' "per event" "sysbench ms" "rtlab ms" "speed" \
    "sysbench ins" "rtlab ins"
cpu() {
    local mp=$1 n=$2
    compare "cpu, max prime $mp" "$n" \
        "sysbench cpu --cpu-max-prime=$mp --events=1 --time=0 run" \
        "sysbench cpu --cpu-max-prime=$mp --events=$n --time=0 run" \
        "$RTLAB bench cpu --max-prime $mp --events 1 --no-save" \
        "$RTLAB bench cpu --max-prime $mp --events $n --no-save"
}
# memory BLOCK KIB OPER ACCESS N: both tools through the same sysbench command
# line (rtlab's personality), with a time limit that does not end the run, so
# that both check it before every event as a timed run does.
memory() {
    local block=$1 kib=$2 oper=$3 access=$4 n=$5 args
    args="memory --memory-block-size=$block --memory-oper=$oper --memory-access-mode=$access --time=100000"
    compare "memory $access $oper, $block block" "$n" \
        "sysbench $args --memory-total-size=${kib}K run" \
        "sysbench $args --memory-total-size=$((kib * n))K run" \
        "$RTLAB sysbench $args --memory-total-size=${kib}K run" \
        "$RTLAB sysbench $args --memory-total-size=$((kib * n))K run"
}
# same NAME N ARGS_1 ARGS_N: `sysbench ARGS run` against `rtlab sysbench ARGS run`.
same() {
    compare "$1" "$2" "sysbench $3 run" "sysbench $4 run" "$RTLAB sysbench $3 run" "$RTLAB sysbench $4 run"
}
export RTLAB_NO_STORE=1
cpu 2000 4000
cpu 20000 300
for oper in write read; do
    for access in seq rnd; do
        memory 1K 1 "$oper" "$access" 400000
        memory 1M 1024 "$oper" "$access" 300
    done
    memory 64M 65536 "$oper" seq 20
done
memory 1K 1 none seq 400000
same "threads, yields 1, 1 lock" 200000 "threads --thread-yields=1 --thread-locks=1 --events=1 --time=0" \
    "threads --thread-yields=1 --thread-locks=1 --events=200000 --time=0"
same "mutex, loops 0 (per lock)" 2000000 "mutex --mutex-loops=0 --mutex-locks=1" \
    "mutex --mutex-loops=0 --mutex-locks=2000000"
same "mutex, loops 100 (per lock)" 200000 "mutex --mutex-loops=100 --mutex-locks=1" \
    "mutex --mutex-loops=100 --mutex-locks=200000"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "speed: sysbench's CPU time per event / rtlab's (above 1: rtlab does an event in less CPU time)"
