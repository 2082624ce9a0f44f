#!/usr/bin/env bash
# rtlab bench vs sysbench, side by side in one run with the same parameters.
#
# Each pair runs three times in alternating order (sysbench first, then rtlab
# first, then sysbench first) so that drift on a shared machine hits both tools
# alike; each tool's figure is its best round (highest rate, lowest time), the
# usual estimator when other load can only slow a run down. Prints one line per comparison with the ratio rtlab/sysbench
# and the target, then rtlab's measured timing overhead per event.
#
# Usage: bench/vs-sysbench.sh [SECONDS_PER_RUN] [DIR_FOR_FILEIO]
#   defaults: 2 seconds, a fresh directory under /tmp. About 3 minutes in all.
# On a machine others are using, bench/vs-sysbench-work.sh compares the CPU time
# (and instructions) per event instead, which their work does not inflate.
set -euo pipefail
cd "$(dirname "$0")/.."

T=${1:-2}
DIR=${2:-}
command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 2; }
cargo build --release --quiet 2>/dev/null || cargo build --release
RTLAB=$PWD/target/release/rtlab
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -n "$DIR" ] || DIR=$WORK/files
mkdir -p "$DIR"

# metric NAME < rtlab JSON: the value of one metrics entry.
metric() { grep -o "\"$1\": [-0-9.e+]*" | head -1 | awk '{print $2}'; }
# after PATTERN < sysbench output: the first number following PATTERN.
after() {
    awk -v pat="$1" '$0 ~ pat { sub(".*" pat, ""); match($0, /[0-9.]+/); print substr($0, RSTART, RLENGTH); exit }'
}
# best max|min VALUES...: the highest or lowest value.
best() {
    local how=$1
    shift
    printf '%s\n' "$@" | sort -g | { if [ "$how" = max ]; then tail -1; else head -1; fi; } |
        awk '{ printf "%.2f", $1 }'
}

declare -a OVERHEAD=()
echo "sysbench $(sysbench --version | awk '{print $2}'), $($RTLAB --version); $(nproc) CPUs;" \
    "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); ${T}s per run, best of 3"
printf '%-36s %14s %14s %7s  %s\n' "comparison" "sysbench" "rtlab" "ratio" "target"

# runs "SYSBENCH ARGS" "RTLAB ARGS" ["SYSBENCH PREPARE ARGS"]: three rounds in
# alternating order; the outputs go to $WORK/{sb,rt}{1,2,3}. With the third
# argument sysbench prepares fresh files before each run and removes them after,
# as rtlab does within its own run (neither tool times its preparing).
runs() {
    local sbargs=$1 rtargs=$2 prep=${3:-} round tool
    for round in 1 2 3; do
        if [ "$round" = 2 ]; then order="rt sb"; else order="sb rt"; fi
        for tool in $order; do
            if [ "$tool" = sb ]; then
                [ -z "$prep" ] || (cd "$DIR" && sysbench $prep prepare >/dev/null)
                (cd "$DIR" && eval "sysbench $sbargs run") >"$WORK/sb$round"
                [ -z "$prep" ] || (cd "$DIR" && sysbench $prep cleanup >/dev/null)
            else
                eval "$RTLAB bench $rtargs --no-save --json" >"$WORK/rt$round"
            fi
        done
    done
    OVERHEAD+=("${rtargs%% *}: $(metric timing_overhead_ns <"$WORK/rt1" | awk '{printf "%.0f", $1}')ns")
}

# row NAME TARGET SYSBENCH_PATTERN RTLAB_METRIC max|min: one line from the last
# runs (max for rates, min for times).
row() {
    local name=$1 target=$2 pat=$3 met=$4 how=$5 s r
    s=$(best "$how" "$(after "$pat" <"$WORK/sb1")" "$(after "$pat" <"$WORK/sb2")" \
        "$(after "$pat" <"$WORK/sb3")")
    r=$(best "$how" "$(metric "$met" <"$WORK/rt1")" "$(metric "$met" <"$WORK/rt2")" \
        "$(metric "$met" <"$WORK/rt3")")
    printf '%-36s %14s %14s %7s  %s\n' "$name" "$s" "$r" \
        "$(awk -v a="$r" -v b="$s" 'BEGIN { printf "%.3f", a / b }')" "$target"
}

runs "cpu --cpu-max-prime=2000 --threads=1 --time=$T" "cpu --max-prime 2000 --threads 1 --time $T"
row "cpu events/s, max prime 2000" "0.97-1.03" "events per second:" events_per_s max
runs "cpu --cpu-max-prime=20000 --threads=1 --time=$T" "cpu --max-prime 20000 --threads 1 --time $T"
row "cpu events/s, max prime 20000" "0.97-1.03" "events per second:" events_per_s max
runs "cpu --cpu-max-prime=10000 --threads=1 --time=$T" "cpu --max-prime 10000 --threads 1 --time $T"
row "cpu events/s, 1 thread" "0.90-1.10" "events per second:" events_per_s max
runs "cpu --cpu-max-prime=10000 --threads=2 --time=$T" "cpu --max-prime 10000 --threads 2 --time $T"
row "cpu events/s, 2 threads" "0.90-1.10" "events per second:" events_per_s max
runs "memory --time=$T" "memory --time $T"
row "memory MiB/s, 1K block (default)" ">= 1" "MiB transferred [(]" mib_per_s max
runs "memory --memory-block-size=64M --time=$T" "memory --block-size 64M --time $T"
row "memory MiB/s, 64M block" "0.97-1.03" "MiB transferred [(]" mib_per_s max

runs "fileio --file-total-size=256M --file-test-mode=rndrw --time=$T" \
    "fileio --dir '$DIR' --total-size 256M --mode rndrw --time $T" "fileio --file-total-size=256M"
row "fileio rndrw 256M reads/s" "0.80-1.20" "reads/s:" reads_per_s max
row "fileio rndrw 256M writes/s" "0.80-1.20" "writes/s:" writes_per_s max
row "fileio rndrw 256M fsyncs/s" "(info)" "fsyncs/s:" fsyncs_per_s max

runs "threads --threads=4 --events=500 --time=0" "threads --threads 4 --events 500"
row "threads total time (s), 4 threads" "lower is better" "total time:" total_time_s min
runs "mutex --threads=4" "mutex --threads 4"
row "mutex total time (s), 4 threads" "lower is better" "total time:" total_time_s min

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "rtlab timing overhead per event (clock read + histogram + live counters):"
printf '  %s\n' "${OVERHEAD[@]}" | sort -u
