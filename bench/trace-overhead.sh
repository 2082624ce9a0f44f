#!/usr/bin/env bash
# What `rtlab latency --trace` costs: the same latency run with and without
# tracing, side by side in one sitting, under a loopback UDP flood pinned to the
# measured CPU (so that there are spikes to explain).
#
# Three modes alternate with identical settings (-i INTERVAL, -D DURATION,
# SCHED_FIFO 90, one thread on CPU CPU): `off`, untraced; `events`, untraced
# while the same tracepoints write into a tracefs instance of this script's own
# that nobody reads (the kernel's share of the cost); `trace`, rtlab --trace.
# Printed per mode, averaged over the rounds: p50/p99/max latency (from --json),
# the CPU time of the rtlab process (user+sys, /usr/bin/time), the CPU time of its
# trace reader (threads or child processes whose name matches READER, sampled
# from /proc while it runs) and trace events per second (`events`: written into
# the instance's buffers; `trace`: why.events / duration), then the ratios to
# `off`.
#
# Usage: bench/trace-overhead.sh                          (root; builds --release)
#        RTLAB=target/debug/rtlab ROUNDS=2 bench/trace-overhead.sh
# Settings: INTERVAL=200us DURATION=2s CPU=1 ROUNDS=3 THRESHOLD=50us READER=trace
set -euo pipefail
cd "$(dirname "$0")/.."

INTERVAL=${INTERVAL:-200us}
DURATION=${DURATION:-2s}
CPU=${CPU:-1}
ROUNDS=${ROUNDS:-3}
THRESHOLD=${THRESHOLD:-50us}
READER=${READER:-trace}
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO, tracefs)"; exit 3; }
for t in jq /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install jq time)"; exit 3; }
done
if [ -z "${RTLAB:-}" ]; then
    cargo build --release -q
    RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
TRACEFS=/sys/kernel/tracing
[ -d "$TRACEFS/events" ] || mount -t tracefs nodev "$TRACEFS"
INSTANCE=$TRACEFS/instances/trace-overhead-$$
EVENTS="sched/sched_switch sched/sched_wakeup sched/sched_waking irq/irq_handler_entry
        irq/irq_handler_exit irq/softirq_entry irq/softirq_exit timer/hrtimer_expire_entry
        timer/hrtimer_expire_exit power/cpu_idle"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rmdir "$INSTANCE" 2>/dev/null || true; rm -rf "$work"' EXIT

# The events of --trace written into an instance of our own, not read: its
# buffers overwrite, and entries + overrun count every event written.
events_on() {
    mkdir "$INSTANCE"
    for e in $EVENTS; do
        [ -e "$INSTANCE/events/$e/enable" ] && echo 1 > "$INSTANCE/events/$e/enable"
    done
    echo 1 > "$INSTANCE/tracing_on"
}
events_off() { # prints the events written
    echo 0 > "$INSTANCE/tracing_on"
    cat "$INSTANCE"/per_cpu/cpu*/stats | awk '/^(entries|overrun):/ { n += $2 } END { print n + 0 }'
    rmdir "$INSTANCE"
}

# Last CPU time (ns, from schedstat: the ticks of stat are too coarse for a
# thread that runs in short bursts) of every thread of PID and of its children,
# as "comm ns" lines in FILE, rewritten every 50 ms until PID is gone.
sample() {
    local pid=$1 file=$2 p t comm ns
    while kill -0 "$pid" 2>/dev/null; do
        {
            for p in "$pid" $(pgrep -P "$pid" || true); do
                for t in /proc/"$p"/task/*; do
                    comm=$(cat "$t/comm" 2>/dev/null) || continue
                    { read -r ns _ < "$t/schedstat"; } 2>/dev/null || continue
                    echo "$comm $ns"
                done
            done
        } > "$file.new"
        [ -s "$file.new" ] && mv "$file.new" "$file"
        sleep 0.05
    done
}

# run_one MODE N: one latency run; appends "mode p50 p99 max cpu_ms reader_ms events_per_s".
run_one() {
    local mode=$1 i=$2 out=$work/$1-$2 extra=()
    [ "$mode" = trace ] && extra=(--trace --trace-threshold "$THRESHOLD")
    [ "$mode" = events ] && events_on
    /usr/bin/time -f "%U %S" -o "$out.time" "$RTLAB" latency -q -p 90 -i "$INTERVAL" \
        -D "$DURATION" --cpus "$CPU" --json --no-save "${extra[@]}" > "$out.json" 2> "$out.err" &
    local timer=$!
    local pid=""
    for _ in $(seq 100); do
        pid=$(pgrep -P "$timer" || true)
        [ -n "$pid" ] && break
        sleep 0.01
    done
    local sampler=""
    if [ -n "$pid" ]; then
        sample "$pid" "$out.threads" &
        sampler=$!
    fi
    local code=0
    wait "$timer" || code=$?
    [ -n "$sampler" ] && wait "$sampler"
    local written=""
    [ "$mode" = events ] && written=$(events_off)
    if [ "$code" != 0 ]; then
        echo "$mode run $i: rtlab exited $code: $(grep -m1 . "$out.err")" >&2
        return 1
    fi
    local cpu_ms reader_ms events
    cpu_ms=$(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$out.time")
    reader_ms=$(awk -v re="$READER" '$0 ~ re { t += $NF } END { printf "%.0f", t / 1e6 }' \
        "$out.threads" 2>/dev/null || echo 0)
    events=$(jq -r --arg w "$written" 'if $w != "" then (($w | tonumber) / (.duration_ns / 1e9))
        elif .why then (.why.events / (.duration_ns / 1e9)) else "-" end' "$out.json")
    jq -r --arg m "$mode" --arg c "$cpu_ms" --arg r "$reader_ms" --arg e "$events" \
        '[$m, .total.summary.p50_ns / 1000, .total.summary.p99_ns / 1000,
          .total.summary.max_ns / 1000, $c, $r, $e] | @tsv' "$out.json" >> "$work/results"
}

# The flood: one UDP sender and receiver over loopback on the measured CPU.
"$RTLAB" load net --load-cpus "$CPU" -q --no-save > /dev/null 2>&1 &
sleep 1

traced=yes
for i in $(seq 1 "$ROUNDS"); do
    run_one off "$i"
    run_one events "$i"
    if [ "$traced" = yes ] && ! run_one trace "$i"; then
        traced=no
    fi
done

echo "rtlab latency -i $INTERVAL -D $DURATION -p 90 --cpus $CPU: off, events (tracepoints on," \
     "not read), trace (--trace --trace-threshold $THRESHOLD); $ROUNDS round(s)"
echo "load: rtlab load net (UDP flood over loopback) on CPU $CPU; kernel $(uname -r)"
echo
awk -F'\t' -v traced="$traced" '
    { n[$1]++; p50[$1] += $2; p99[$1] += $3; max[$1] += $4; cpu[$1] += $5; rd[$1] += $6
      if ($7 == "-") ev[$1] = "-"; else if (ev[$1] != "-") ev[$1] += $7 }
    END {
        printf "%-10s %9s %9s %9s %9s %14s %10s\n", "mode", "p50_us", "p99_us", "max_us",
            "cpu_ms", "reader_cpu_ms", "events/s"
        split("off events trace", modes, " ")
        for (m = 1; m <= 3; m++) {
            k = modes[m]
            if (!n[k]) continue
            a[k, 1] = p50[k] / n[k]; a[k, 2] = p99[k] / n[k]; a[k, 3] = max[k] / n[k]
            a[k, 4] = cpu[k] / n[k]; a[k, 5] = rd[k] / n[k]
            e = ev[k] == "-" ? "-" : sprintf("%.0f", ev[k] / n[k])
            printf "%-10s %9.1f %9.1f %9.1f %9.0f %14.0f %10s\n", k, a[k, 1], a[k, 2], a[k, 3],
                a[k, 4], a[k, 5], e
        }
        for (m = 2; m <= 3; m++) {
            k = modes[m]
            if (!n[k] || !n["off"]) continue
            printf "%-10s", k "/off"
            for (c = 1; c <= 4; c++)
                printf " %8.2fx", a["off", c] ? a[k, c] / a["off", c] : 0
            printf "\n"
        }
        if (traced == "no")
            print "\n--trace was refused (see above): no trace row"
    }' "$work/results"
