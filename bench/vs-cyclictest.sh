#!/usr/bin/env bash
# rtlab latency vs cyclictest, side by side in one run.
#
# Both tools alternate with identical settings (-i 200us, -l LOOPS, SCHED_FIFO 90,
# mlockall, one thread pinned to CPU 0, cpu_dma_latency 0), first on an idle
# machine, then under `stress-ng --cpu 2`. rtlab runs with its defaults: the run
# is saved (to a store of its own here). Percentiles of both are computed the
# same way, from each tool's 1-µs histogram file (cyclictest -h / rtlab
# --histfile), so the comparison does not depend on either tool's own
# arithmetic. Memory: peak RSS (GNU time), and VmRSS while measuring (the
# largest of /proc/PID/status read every 50 ms over the middle half of the
# run), both binaries read from the disk (see below). CPU: task-clock (`perf
# stat`, a second run of each, interleaved; also of a 10-wake-up run, to show
# the fixed part apart from the wake-ups; with TASK_CLOCK=together, the two
# tools of a pair run at once instead, one on each of CPUs 0 and 1, swapped
# from pair to pair, so that what the host does to the machine meanwhile
# falls on both alike),
# and per sample (user+sys)/samples from GNU time. Page faults: those of the
# whole process (start-up included, GNU time's minor + major), and for rtlab
# those its measuring threads took while measuring (the run's "page faults
# while measuring"), which must be 0; cyclictest does not report its own.
#
# Usage: bench/vs-cyclictest.sh            (LOOPS=100000 PAIRS=3 by default; root)
#        LOOPS=20000 PAIRS=5 bench/vs-cyclictest.sh
#        RTLAB=/path/to/rtlab bench/vs-cyclictest.sh   (another build, e.g. an older one)
#        TASK_CLOCK=together LOOPS=20000 PAIRS=30 bench/vs-cyclictest.sh
#                                      (task-clock of both tools at once; 2 CPUs or more)
set -euo pipefail
cd "$(dirname "$0")/.."

LOOPS=${LOOPS:-100000}
PAIRS=${PAIRS:-3}
HIST_US=10000
FIXED=10
TASK_CLOCK=${TASK_CLOCK:-alternate}
[[ $LOOPS =~ ^[0-9]+$ && $PAIRS =~ ^[1-9][0-9]*$ ]] && [ "$LOOPS" -gt "$FIXED" ] ||
    { echo "LOOPS takes a number of wake-ups above $FIXED, PAIRS a number of pairs: e.g. LOOPS=20000 PAIRS=10" >&2; exit 2; }
case $TASK_CLOCK in
    alternate) ;;
    together)
        [ "$(nproc)" -ge 2 ] || { echo "TASK_CLOCK=together runs the tools on CPUs 0 and 1: this machine has $(nproc) CPU" >&2; exit 2; } ;;
    *) echo "TASK_CLOCK is alternate (one tool after the other, the default) or together (both at once, one per CPU), not '$TASK_CLOCK'" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in cyclictest stress-ng /usr/bin/time perf; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests stress-ng time linux-perf)"; exit 3; }
done
if [ -z "${RTLAB:-}" ]; then
    cargo build --release -q
    RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
# Both programs as installed ones are: their files read from the disk, not
# left in the page cache as the linker wrote them. The same bytes just written
# measure about 0.2 MB more RSS while measuring and 0.4 MB more at the peak
# (bench/RESULTS.md), until the file is read again.
sync
for f in "$RTLAB" "$(command -v cyclictest)"; do
    dd if="$f" iflag=nocache count=0 status=none
done
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

# cmdline TOOL HIST [CPU]: the command line of TOOL writing its histogram to
# HIST, its thread on CPU (0 unless given).
cmdline() {
    local cpu=${3:-0}
    if [ "$1" = cyclictest ]; then
        echo cyclictest -q -m -p 90 -i 200 -l "$LOOPS" -t 1 -a "$cpu" -h "$HIST_US" --histfile="$2"
    else
        echo "$RTLAB" --db "$work/runs.db" latency -q -p 90 -i 200us -l "$LOOPS" --cpus "$cpu" \
            --histogram-max "${HIST_US}us" --histfile "$2"
    fi
}

# while_measuring PID: the largest VmRSS (kB) of PID over the middle half of
# its run (LOOPS periods of 200 µs), read every 50 ms.
while_measuring() {
    local pid=$1 ms=$((LOOPS / 5)) t=0 most=0 kb
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$t" -ge $((ms / 4)) ] && [ "$t" -le $((ms * 3 / 4)) ]; then
            kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
            [ "${kb:-0}" -gt "$most" ] && most=$kb
        fi
        sleep 0.05
        t=$((t + 50))
    done
    echo "$most"
}

run_one() { # tool condition pair
    local tool=$1 cond=$2 i=$3 hist=$work/$1-$2-$3.hist tm=$work/$1-$2-$3.time out=$work/$1-$2-$3.out
    local window=- pid measuring
    # shellcheck disable=SC2046 # the command is words.
    /usr/bin/time -f "%U %S %M %R %F" -o "$tm" $(cmdline "$tool" "$hist") >"$out" 2>/dev/null &
    pid=$!
    # GNU time's child, the tool.
    while kill -0 "$pid" 2>/dev/null && ! pgrep -P "$pid" >/dev/null; do sleep 0.001; done
    measuring=$(while_measuring "$(pgrep -P "$pid" | head -1)")
    wait "$pid"
    [ "$tool" = rtlab ] && window=$(awk '/^page faults while measuring:/ { print $5 }' "$out")
    read -r user sys rss minflt majflt < "$tm"
    printf '%s %s %s %s %s %s %s %s %s %s %s\n' "$tool" "$cond" "$(footer "$hist" "Min Latencies")" \
        "$(pct "$hist" 0.5)" "$(pct "$hist" 0.99)" "$(footer "$hist" "Max Latencies")" \
        "$(awk -v u="$user" -v s="$sys" -v n="$LOOPS" 'BEGIN { printf "%.0f", (u + s) * 1e9 / n }')" "$rss" \
        "$((minflt + majflt))" "${window:-?}" "$measuring" >> "$work/results"
}

# counted TOOL CONDITION PAIR PART [CPU]: perf stat of one run of TOOL (PART
# whole: LOOPS wake-ups; fixed: FIXED), its thread on CPU, into a file of its
# own.
counted() {
    local loops=$LOOPS
    [ "$4" = fixed ] && loops=$FIXED
    # shellcheck disable=SC2046
    perf stat -x, -e task-clock -o "$work/$1-$2-$3.$4.tc" \
        $(LOOPS=$loops cmdline "$1" "$work/$1.tc.hist" "${5:-0}") >/dev/null 2>&1
}

# recorded TOOL CONDITION PAIR: the task-clock (ms) of TOOL's two runs of the
# pair, whole and fixed, as a line of the task-clock file; "-" for a reading
# perf did not give, which the report leaves out.
recorded() {
    local whole fixed
    whole=$(awk -F, '/task-clock/ { print $1 }' "$work/$1-$2-$3.whole.tc" 2>/dev/null)
    fixed=$(awk -F, '/task-clock/ { print $1 }' "$work/$1-$2-$3.fixed.tc" 2>/dev/null)
    echo "$1 $2 $3 ${whole:--} ${fixed:--}" >> "$work/task-clock"
}

# task_clock TOOL CONDITION PAIR: task-clock (ms) of a second run of TOOL,
# and of a run of FIXED wake-ups with the same options: what the tool spends
# apart from waking up (start-up, its records, exit).
task_clock() {
    counted "$1" "$2" "$3" whole
    counted "$1" "$2" "$3" fixed
    recorded "$1" "$2" "$3"
}

# task_clock_together CONDITION PAIR: as task_clock, both tools at once, one
# on CPU 0 and the other on CPU 1, which one where changing with the pair.
task_clock_together() {
    local a=0 b=1 part r c
    [ $(($2 % 2)) = 0 ] && { a=1; b=0; }
    for part in whole fixed; do
        counted rtlab "$1" "$2" "$part" "$a" &
        r=$!
        counted cyclictest "$1" "$2" "$part" "$b" &
        c=$!
        # Not a bare wait: stress-ng runs in the background too.
        wait "$r" "$c"
    done
    recorded rtlab "$1" "$2"
    recorded cyclictest "$1" "$2"
}

for cond in idle stress; do
    if [ "$cond" = stress ]; then
        stress-ng --cpu 2 --timeout 0 >/dev/null 2>&1 &
        sleep 1
    fi
    for i in $(seq 1 "$PAIRS"); do
        # Each tool goes first in every other pair: neither always runs right
        # after the other.
        if [ $((i % 2)) = 1 ]; then order="cyclictest rtlab"; else order="rtlab cyclictest"; fi
        for tool in $order; do run_one "$tool" "$cond" "$i"; done
        if [ "$TASK_CLOCK" = together ]; then
            task_clock_together "$cond" "$i"
        else
            for tool in $order; do task_clock "$tool" "$cond" "$i"; done
        fi
    done
    [ "$cond" = stress ] && { kill %1; wait %1 2>/dev/null || true; }
done

echo "rtlab vs cyclictest: -i 200us -l $LOOPS -p 90 -m, 1 thread on CPU 0, $PAIRS pairs per condition"
[ "$TASK_CLOCK" = together ] && echo "task-clock: both tools at once, one on each of CPUs 0 and 1, swapped from pair to pair"
echo "kernel: $(uname -r) $(uname -v)"
echo
awk -f bench/interval.awk -f bench/cyclictest-report.awk -v loops="$LOOPS" -v fixed="$FIXED" \
    -v together="$([ "$TASK_CLOCK" = together ] && echo 1)" "$work/task-clock" "$work/results"
