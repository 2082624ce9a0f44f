#!/usr/bin/env bash
# What rtlab decides, shown on four cases with known answers (docs/decisions.md):
#
# (a) five repeats of one latency run compared with each other, one column
#     each, and (a') the same runs as two groups of repeats: the same thing
#     measured five times, so no figure should be called better or worse;
# (b) idle against a SCHED_FIFO 95 hog on the measured CPU (busy 1 ms of every
#     10 ms, bounded by `timeout`; RT throttling stays on): worse, with the
#     intervals apart;
# (c) the drone workflow: four kernels' cyclictest histograms (the fixtures of
#     tests/fixtures/drone) against the drone's deadlines: the tier matrix;
# (d) the satellite preset run three times as image1, image2, image3 (the same
#     machine, so the honest answer is "cannot tell" unless the runs differ):
#     compared step by step, the most stable named or not.
#
# Needs root (SCHED_FIFO), perl, chrt and taskset. Usage: bench/decisions.sh
# (DURATION=3s per latency run, BENCH=2s per satellite step by default).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-3s}
BENCH=${BENCH:-2s}
for tool in perl chrt taskset timeout; do
    command -v "$tool" >/dev/null || { echo "bench/decisions.sh: $tool is missing" >&2; exit 2; }
done
cargo build --release -q 2>/dev/null || cargo build --release
R=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export RTLAB_DB=$work/store.db
cpu=$(( $(nproc) - 1 ))
probe=(latency -p 90 -i 200us -D "$DURATION" --cpus "$cpu" -q)

# id LABEL ARGS...: runs a probe, prints the id of the run it saved.
id() {
    local label=$1; shift
    "$R" "$@" --label "$label" --json | sed -n 's/^  "id": \([0-9]*\),$/\1/p'
}

echo "== (a) five repeats of one run: ${probe[*]}"
ids=()
for i in 1 2 3 4 5; do ids+=("$(id "same-$i" "${probe[@]}")"); done
"$R" compare "${ids[@]}" || true
echo "== (a') the same five runs as two groups of repeats (runs 1, 3, 5 against 2, 4)"
for i in 0 2 4; do "$R" results tag "${ids[$i]}" odd >/dev/null; done
for i in 1 3; do "$R" results tag "${ids[$i]}" even >/dev/null; done
"$R" compare "${ids[@]}" --by tag --baseline odd || true

echo "== (b) idle against a SCHED_FIFO 95 hog on CPU $cpu (1 ms of every 10 ms)"
idle=$(id idle "${probe[@]}")
# The hog: busy 1 ms, asleep 9 ms, for the run and a second more, then ended
# by timeout whatever happens.
secs=$(( ${DURATION%s} + 2 ))
timeout "$(( secs + 2 ))" chrt -f 95 taskset -c "$cpu" perl -MTime::HiRes=time,sleep -e \
    '$end = time + '"$secs"'; while (time < $end) { $t = time; 1 while time - $t < 0.001; sleep 0.009 }' &
hog=$!
sleep 0.5
hogged=$(id hog "${probe[@]}")
wait "$hog" || true
"$R" compare "$idle" "$hogged" || true

echo "== (c) the drone's four kernels against the drone deadlines"
for k in vanilla preempt preempt-rt xenomai; do
    "$R" results import "tests/fixtures/drone/$k.txt" --label "$k" >/dev/null
done
"$R" compare vanilla preempt preempt-rt xenomai --require drone | sed -n '/^decision:/,$p' || true

echo "== (d) the satellite preset on three images, $BENCH per step"
for i in 1 2 3; do
    "$R" run --preset satellite --duration "$BENCH" --label "image$i" -q >/dev/null || true
done
"$R" compare image1 image2 image3 | sed -n '/^decision:/,$p' || true
