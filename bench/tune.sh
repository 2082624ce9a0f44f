#!/usr/bin/env bash
# rtlab tune on this machine: every candidate under a CPU load, short steps.
#
# Runs `rtlab tune --try all --load cpu` with STEP-long runs, REPEAT of each
# arm (baseline, changed) interleaved, in a store of its own, and prints what it
# found (the table, the HTML report's path), how long it took, and the values
# it read back at the end. The machine is left as it was (said at the end).
#
# Needs root (SCHED_FIFO, sysfs). Usage: bench/tune.sh   (STEP=2s REPEAT=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${STEP:-2s}
REPEAT=${REPEAT:-3}
cargo build --release -q 2>/dev/null || cargo build --release
R=$PWD/target/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export RTLAB_DB=$work/store.db

echo "## $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo "\$ rtlab tune --try all --load cpu -D $STEP --repeat $REPEAT --html tune.html"
t0=$(date +%s)
set +e
"$R" tune --try all --load cpu -D "$STEP" --repeat "$REPEAT" --html "$work/tune.html" -q
code=$?
set -e
t1=$(date +%s)
echo "exit $code, $((t1 - t0)) s in all"
echo "HTML: $(wc -c < "$work/tune.html") bytes, $(grep -c '<svg' "$work/tune.html") plot(s)"
"$R" results list | tail -n +2 | wc -l | xargs echo "runs stored:"
