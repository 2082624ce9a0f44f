#!/usr/bin/env bash
# Runs the test suite (./test.sh, i.e. cargo test --workspace) N times in a row and
# says how often it passed: the check that the suite never flakes.
#
#   bench/test-loop.sh [-n N] [--stress] [--timeout SECS] [-- TEST.SH ARGS...]
#
#   -n N           iterations (default 20)
#   --stress       run `stress-ng --cpu 2 --vm 1 --vm-bytes 256M` beside the tests
#                  for the whole loop (stopped on exit, also on Ctrl-C)
#   --timeout S    an iteration taking longer than S seconds counts as failed
#                  (default 1200: a hang, not a slow machine)
#   TEST.SH ARGS   passed to ./test.sh after --no-fail-fast, e.g.
#                  -- -- --include-ignored   (root: the root-only tests too)
#
# Builds the tests once first, so every iteration's time is the suite's alone.
# Prints one line per iteration (pass/FAIL, duration, failing tests), then
# "N passed, M failed". Logs of failing iterations stay in a temporary directory
# whose path is printed. Exits 0 when every iteration passed, 1 otherwise, 2 on a
# usage or build error.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20 stress=0 limit=1200
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
        -n | --runs) runs=${2:-}; shift 2 || usage ;;
        --stress) stress=1; shift ;;
        --timeout) limit=${2:-}; shift 2 || usage ;;
        -h | --help) usage ;;
        --) shift; break ;;
        *) break ;;
    esac
done
case $runs$limit in *[!0-9]* | '') usage ;; esac
[ "$runs" -gt 0 ] && [ "$limit" -gt 0 ] || usage

logs=$(mktemp -d "${TMPDIR:-/tmp}/rtlab-test-loop.XXXXXX")
stress_pid= test_pid=
cleanup() {
    if [ -n "$test_pid" ]; then
        # timeout passes the signal on to the whole test run's process group.
        kill -TERM "$test_pid" 2>/dev/null || true
        wait "$test_pid" 2>/dev/null || true
        test_pid=
    fi
    if [ -n "$stress_pid" ]; then
        # stress-ng runs in its own process group: stop it and its workers.
        kill -TERM -- "-$stress_pid" 2>/dev/null || true
        wait "$stress_pid" 2>/dev/null || true
        stress_pid=
    fi
}
trap cleanup EXIT
trap 'echo; echo "interrupted; logs in $logs"; exit 130' INT TERM

echo "building the tests once (log: $logs/build.log)"
if ! ./test.sh --no-run "$@" >"$logs/build.log" 2>&1; then
    tail -n 30 "$logs/build.log" >&2
    echo "the tests do not build; log kept in $logs/build.log" >&2
    exit 2
fi
rm -f "$logs/build.log"

if [ "$stress" = 1 ]; then
    command -v stress-ng >/dev/null || { echo "--stress needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
    setsid stress-ng --cpu 2 --vm 1 --vm-bytes 256M >"$logs/stress-ng.log" 2>&1 &
    stress_pid=$!
    sleep 1
    kill -0 "$stress_pid" 2>/dev/null || { cat "$logs/stress-ng.log" >&2; echo "stress-ng did not start" >&2; exit 2; }
    echo "stress-ng --cpu 2 --vm 1 --vm-bytes 256M running beside the tests (pid $stress_pid)"
fi
echo "$runs iteration(s) of ./test.sh --no-fail-fast $*; failing logs go to $logs"

passed=0 failed=0
for i in $(seq 1 "$runs"); do
    log="$logs/iteration-$i.log"
    start=$(date +%s%N)
    # In the background so that Ctrl-C (the trap) is handled while it runs.
    timeout -k 30 "$limit" ./test.sh --no-fail-fast "$@" >"$log" 2>&1 &
    test_pid=$!
    rc=0
    wait "$test_pid" || rc=$?
    test_pid=
    ms=$((($(date +%s%N) - start) / 1000000))
    secs=$((ms / 1000)).$((ms % 1000 / 100))
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1))
        printf '%3d/%d  pass  %6ss\n' "$i" "$runs" "$secs"
        rm -f "$log"
    else
        failed=$((failed + 1))
        why=$(grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u | paste -sd' ' - || true)
        [ "$rc" = 124 ] && why="timed out after ${limit}s${why:+; $why}"
        printf '%3d/%d  FAIL  %6ss  exit %s  %s  (%s)\n' "$i" "$runs" "$secs" "$rc" "${why:-see log}" "$log"
    fi
done

cleanup
echo "$passed passed, $failed failed"
if [ "$failed" -gt 0 ]; then
    echo "failing tests, with how many iterations each failed in:"
    grep -hE '^test .* \.\.\. FAILED$' "$logs"/iteration-*.log 2>/dev/null \
        | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort | uniq -c | sort -rn || true
    echo "logs of the failing iterations: $logs"
    exit 1
fi
rm -rf "$logs"
