#!/usr/bin/env bash
# rtlab tune on this machine: every candidate under a CPU load, short steps.
#
# 1. Runs `rtlab tune --try all --load cpu` with STEP-long runs, REPEAT of each
#    arm (baseline, changed) interleaved, in a store of its own, and prints what
#    it found, how long it took, and the values it read back at the end. The
#    machine is left as it was (said at the end).
# 2. The same for app_priority alone, with a stand-in application (a copy of
#    sleep named ctrl-loop at SCHED_OTHER): the measuring threads run as its
#    threads do now, then at fifo:80, under the same load: the field report's
#    "promotion to RT priority gave most of the gain", measured.
#
# Needs root (SCHED_FIFO, sysfs). Usage: bench/tune.sh   (STEP=2s REPEAT=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
STEP=${STEP:-2s}
REPEAT=${REPEAT:-3}
cargo build --release -q 2>/dev/null || cargo build --release
R=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
app=
trap '[[ -n $app ]] && kill "$app"; rm -rf "$work"' EXIT
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
echo "runs stored: $("$R" results list --json | grep -c '"id"')"

echo
echo "\$ rtlab tune --try app_priority --app ctrl-loop --load cpu -D $STEP --repeat $REPEAT --html app.html"
cp "$(command -v sleep)" "$work/ctrl-loop"
"$work/ctrl-loop" 600 &
app=$!
t0=$(date +%s)
set +e
"$R" tune --try app_priority --app '^ctrl-loop$' --load cpu -D "$STEP" --repeat "$REPEAT" --html "$work/app.html" -q
code=$?
set -e
t1=$(date +%s)
echo "exit $code, $((t1 - t0)) s in all"
echo "HTML: $(wc -c < "$work/app.html") bytes, $(grep -c '<svg' "$work/app.html") plot(s)"
echo "ctrl-loop after: $(chrt -p "$app" | head -1)"
