#!/usr/bin/env bash
# rtlab prio vs chrt, side by side in one run.
#
# A target process with THREADS threads (rtlab latency, SCHED_OTHER threads that
# wake every 100 ms) gets SCHED_FIFO 50 for all its threads and is put back, ROUNDS
# times, alternating (the field report's "pgrep + chrt -p -f" promotion):
#   anchor: pgrep -x NAME | xargs -n1 chrt -a -f -p 50;  back: chrt -a -o -p 0 PID
#   rtlab:  rtlab prio set ^NAME$ --policy fifo -p 50 (records state, reads every
#           thread back);  back: rtlab prio restore
# Affinity is left out: moving threads between CPUs costs the same kernel
# migration for both tools and drowns the difference on a busy machine.
# Both sides are checked after every step from /proc/PID/task/*/stat: every thread
# must have the wanted policy and priority, else the run stops. Reported: median wall
# time per step (ms), and the ratio rtlab / anchor.
#
# Usage: bench/prio-vs-chrt.sh              (THREADS=200 ROUNDS=15; root)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-200}
ROUNDS=${ROUNDS:-15}
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in chrt pgrep; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install util-linux procps)"; exit 3; }
done
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
export XDG_STATE_HOME=$work/state
name=prioBench$$
name=${name:0:15}
ln -s "$RTLAB" "$work/$name"
"$work/$name" latency --policy other -p 0 -t "$THREADS" -i 100ms -D 600s --no-save -q \
    --dma-latency off >/dev/null 2>&1 &
child=$!
trap 'kill $child 2>/dev/null; wait $child 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    [ "$(ls /proc/$child/task | wc -l)" -gt "$THREADS" ] && break
    sleep 0.1
done
ntask=$(ls /proc/$child/task | wc -l)

# verify POLICY PRIO: every thread of the child has them (proc(5) fields 41, 40).
verify() {
    local bad
    bad=$(for s in /proc/$child/task/*/stat; do
        sed 's/.*) //' "$s" | awk -v p="$1" -v r="$2" '$39 != p || $38 != r { print "bad" }'
    done | wc -l)
    [ "$bad" = 0 ] || { echo "verification failed: $bad threads not at policy $1 prio $2"; exit 1; }
}
now() { date +%s%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$work/a_set"; : >"$work/a_back"; : >"$work/r_set"; : >"$work/r_back"
for _ in $(seq "$ROUNDS"); do
    t0=$(now)
    pgrep -x "$name" | xargs -n1 chrt -a -f -p 50 >/dev/null
    t1=$(now); verify 1 50
    chrt -a -o -p 0 "$child" >/dev/null
    t2=$(now); verify 0 0
    ms "$t0" "$t1" >>"$work/a_set"; ms "$t1" "$t2" >>"$work/a_back"

    t0=$(now)
    "$RTLAB" prio set "^$name\$" --policy fifo -p 50 >/dev/null
    t1=$(now); verify 1 50
    "$RTLAB" prio restore >/dev/null
    t2=$(now); verify 0 0
    ms "$t0" "$t1" >>"$work/r_set"; ms "$t1" "$t2" >>"$work/r_back"
done

echo "target: $ntask threads, $ROUNDS rounds, median wall time per step"
printf '%-34s %10s %10s %8s\n' step "anchor ms" "rtlab ms" ratio
for step in set back; do
    a=$(median <"$work/a_$step"); r=$(median <"$work/r_$step")
    label=$([ $step = set ] && echo "set fifo/50, all threads" || echo "put back (restore)")
    printf '%-34s %10s %10s %8s\n' "$label" "$a" "$r" "$(awk -v a="$a" -v r="$r" 'BEGIN { printf "%.2f", r / a }')"
done
