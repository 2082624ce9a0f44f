#!/usr/bin/env bash
# rtlab perf vs perf stat, side by side in one run.
#
# Each command runs PAIRS times under `perf stat` and under `rtlab perf`,
# alternating; the software counters of both (task-clock, context-switches,
# cpu-migrations, page-faults, minor-faults, major-faults) are taken as the
# median over the pairs and printed with their ratio rtlab / perf. The commands
# do a known kind of work: touch pages, sleep (switch contexts), fork and
# exec, copy; each runs as `sh -c COMMAND` under both.
#
# Usage: bench/vs-perf-stat.sh             (PAIRS=5; perf from Debian's linux-perf)
set -euo pipefail
cd "$(dirname "$0")/.."

for t in perf jq perl; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install linux-perf jq perl)"; exit 3; }
done
PAIRS=${PAIRS:-5}
EVENTS=task-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each runs as `sh -c COMMAND` under both tools.
commands=(
    "perl -e 'my @a; push @a, q(x) x (1 << 20) for 1 .. 64'"
    'for i in $(seq 200); do sleep 0.001; done'
    'for i in $(seq 300); do /bin/true; done'
    'dd if=/dev/zero of=/dev/null bs=1M count=2000 2>/dev/null'
)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "rtlab perf vs perf stat ($(perf --version)), $PAIRS pairs each, medians; $(uname -r)"
printf "%-44s %-17s %14s %14s %7s\n" command counter "perf stat" "rtlab perf" ratio
for c in "${commands[@]}"; do
    argv=(sh -c "$c")
    : >"$work/perf" && : >"$work/rtlab"
    for _ in $(seq 1 "$PAIRS"); do
        # perf stat -x, prints "value,unit,event,..." lines on stderr; task-clock in ms.
        perf stat -x, -e "$EVENTS" -- "${argv[@]}" 2>"$work/p" >/dev/null
        awk -F, '$3 != "" { v = ($3 == "task-clock") ? $1 * 1e6 : $1; print $3, v }' "$work/p" >>"$work/perf"
        "$RTLAB" perf --json --no-save -- "${argv[@]}" 2>/dev/null |
            jq -r '.perf.total[] | select(.value != null) | "\(.event) \(.value)"' >>"$work/rtlab"
    done
    for e in ${EVENTS//,/ }; do
        p=$(awk -v e="$e" '$1 == e { print $2 }' "$work/perf" | median)
        r=$(awk -v e="$e" '$1 == e { print $2 }' "$work/rtlab" | median)
        awk -v c="${c:0:44}" -v e="$e" -v p="$p" -v r="$r" 'BEGIN {
            ratio = (p > 0) ? sprintf("%.3f", r / p) : (r == 0 ? "=" : "-")
            if (e == "task-clock") { p /= 1e6; r /= 1e6; e = "task-clock (ms)" }
            printf "%-44s %-17s %14.2f %14.2f %7s\n", c, e, p, r, ratio }'
    done
done
