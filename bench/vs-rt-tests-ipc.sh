#!/usr/bin/env bash
# rtlab ipc vs pmqtest, ptsematest, sigwaittest and svsematest, side by side in one run.
#
# Each anchor and the matching rtlab mechanism run with the same settings, one
# after the other, REPS times: one pair, both threads pinned to CPU $CPU (the
# anchors' -a CPU, rtlab's --placement same -a CPU), SCHED_FIFO $PRIO, the
# receiver woken every $INTERVAL_US µs, $LOOPS wake-ups, mlockall. The anchors
# report min/avg/max in whole µs (avg to 0.01 µs) through --json; rtlab's run
# gives the same in ns. The table shows, per tool, the median over the
# repetitions of each run's average and maximum, the spread of the averages
# (min-max over the repetitions: the noise), and rtlab ÷ anchor.
#
# Usage: bench/vs-rt-tests-ipc.sh            (LOOPS=4000 INTERVAL_US=500 PRIO=80 CPU=1 REPS=5; root)
#        LOOPS=10000 REPS=3 CPU=0 bench/vs-rt-tests-ipc.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LOOPS=${LOOPS:-4000}
INTERVAL_US=${INTERVAL_US:-500}
PRIO=${PRIO:-80}
CPU=${CPU:-1}
REPS=${REPS:-5}
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in pmqtest ptsematest sigwaittest svsematest jq; do
    command -v "$t" >/dev/null || { echo "missing $t (apt-get install rt-tests jq)"; exit 3; }
done
cargo build --release -q
RTLAB=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

PAIRS="pmqtest:mqueue ptsematest:mutex sigwaittest:signal svsematest:sem"

# One line per run: tool mechanism avg_us max_us.
for rep in $(seq 1 "$REPS"); do
    for pair in $PAIRS; do
        tool=${pair%%:*} mech=${pair##*:}
        "$tool" -q -a "$CPU" -p "$PRIO" -i "$INTERVAL_US" -l "$LOOPS" --json="$work/a.json" >/dev/null
        jq -r --arg t "$tool" --arg m "$mech" \
            '.thread["0"].receiver | "\($t) \($m) \(.avg) \(.max)"' "$work/a.json" >> "$work/results"
        "$RTLAB" ipc -q -M "$mech" --placement same -a "$CPU" -p "$PRIO" -i "${INTERVAL_US}us" \
            -l "$LOOPS" --json --no-save > "$work/r.json"
        jq -r --arg m "$mech" \
            '.series[0].summary | "rtlab \($m) \(.mean_ns / 1000) \(.max_ns / 1000)"' \
            "$work/r.json" >> "$work/results"
    done
done

echo "rtlab ipc vs rt-tests: 1 pair on CPU $CPU, SCHED_FIFO $PRIO, -i ${INTERVAL_US}us -l $LOOPS, $REPS repetitions"
echo "kernel: $(uname -r) $(uname -v)"
echo
# median of a space-separated list
awk '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function lo(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
    function hi(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
    {
        side = ($1 == "rtlab") ? "rtlab" : "anchor"
        avg[$2, side] = avg[$2, side] " " $3; max[$2, side] = max[$2, side] " " $4
        if (side == "anchor") tool[$2] = $1
    }
    END {
        printf "%-9s %-12s %9s %14s %9s | %9s %14s %9s | %9s %9s\n", "mechanism", "anchor",
            "avg_us", "avg spread", "max_us", "rtlab avg", "avg spread", "max_us", "avg ratio", "max ratio"
        split("mqueue mutex signal sem", mechs, " ")
        for (i = 1; i <= 4; i++) {
            m = mechs[i]
            aa = median(avg[m, "anchor"]); am = median(max[m, "anchor"])
            ra = median(avg[m, "rtlab"]); rm = median(max[m, "rtlab"])
            printf "%-9s %-12s %9.2f %6.2f-%-7.2f %9.1f | %9.2f %6.2f-%-7.2f %9.1f | %9.2f %9.2f\n", m, tool[m],
                aa, lo(avg[m, "anchor"]), hi(avg[m, "anchor"]), am,
                ra, lo(avg[m, "rtlab"]), hi(avg[m, "rtlab"]), rm, ra / aa, rm / am
        }
    }' "$work/results"
