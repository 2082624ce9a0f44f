#!/usr/bin/env bash
# Loopback UDP ping-pong, rtlab net ping/serve vs sockperf ping-pong/server, run
# side by side in one invocation: same message size on the wire, same message
# rate, same duration. Prints median and p99 round trip of each, the client's CPU
# time per message (user+sys of the client process from /usr/bin/time), and the
# ratios rtlab / sockperf. rtlab runs twice per round: as it runs by default
# (sleeping until each message is due) and with --busy-wait (spinning until each
# message is due, as sockperf paces its messages). The tools run in alternation
# ROUNDS times, so load from elsewhere on the machine hits them alike; the figures
# are medians over the rounds.
#
# Usage: bench/vs-sockperf.sh [ROUNDS] [SECONDS_PER_RUN] [MESSAGE_BYTES] [MSGS_PER_S]
#   defaults: 5 rounds of 8 s per tool, 104-byte messages, 20000 messages/s
#   (about 2.5 minutes). Needs a release build (cargo build --release) and sockperf.
# Environment: RTLAB=path to the binary (default target/release/rtlab).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-5}
SECS=${2:-8}
BYTES=${3:-104}
MPS=${4:-20000}
RTLAB=${RTLAB:-target/release/rtlab}
HEADER=40 # rtlab's header; the rest of the message is payload

for tool in sockperf /usr/bin/time python3; do
    command -v "$tool" >/dev/null || { echo "vs-sockperf: $tool is not installed" >&2; exit 2; }
done
[ -x "$RTLAB" ] || { echo "vs-sockperf: $RTLAB missing; run cargo build --release" >&2; exit 2; }
[ "$BYTES" -ge "$HEADER" ] || { echo "vs-sockperf: MESSAGE_BYTES must be >= $HEADER" >&2; exit 2; }

PAYLOAD=$((BYTES - HEADER))
PERIOD_NS=$((1000000000 / MPS))
COUNT=$((SECS * MPS))
SP_PORT=17701
RT_PORT=17702
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

sockperf server -i 127.0.0.1 -p "$SP_PORT" >"$work/sp-server.log" 2>&1 &
pids+=($!)
"$RTLAB" net serve --bind "127.0.0.1:$RT_PORT" >"$work/rt-server.log" 2>&1 &
pids+=($!)
sleep 1

echo "loopback UDP ping-pong: $BYTES-byte messages, $MPS msg/s, ${SECS}s per run, $ROUNDS rounds"
echo "rtlab client: net ping --period ${PERIOD_NS}ns --round-trips 1 --payload $PAYLOAD [--busy-wait]"
for r in $(seq 1 "$ROUNDS"); do
    /usr/bin/time -f "%U %S" -o "$work/sp-time.$r" \
        sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" -m "$BYTES" -t "$SECS" --mps "$MPS" \
        --full-rtt >"$work/sp.$r" 2>&1
    for mode in sleep busy; do
        extra=()
        [ "$mode" = busy ] && extra=(--busy-wait)
        /usr/bin/time -f "%U %S" -o "$work/$mode-time.$r" \
            "$RTLAB" net ping "127.0.0.1:$RT_PORT" --period "${PERIOD_NS}ns" --round-trips 1 \
            --payload "$PAYLOAD" --count "$COUNT" --timeout 1s --json --no-save --quiet \
            "${extra[@]}" >"$work/$mode.$r.json"
    done
done

python3 - "$work" "$ROUNDS" <<'PY'
import json, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def cpu(path, messages):
    u, s = map(float, open(path).read().split()[-2:])
    return (u + s) * 1e6 / messages

rows = {"sockperf": [], "sleep": [], "busy": []}
for r in range(1, rounds + 1):
    text = open(f"{work}/sp.{r}").read()
    pct = {m[0]: float(m[1]) for m in re.findall(r"percentile (\d+\.\d+) =\s+([\d.]+)", text)}
    total = int(re.search(r"\[Total Run\].*SentMessages=(\d+)", text).group(1))
    rows["sockperf"].append((pct["50.000"], pct["99.000"], cpu(f"{work}/sp-time.{r}", total), 0))
    line = f"round {r}: sockperf p50 {pct['50.000']:.2f} p99 {pct['99.000']:.2f}"
    for mode in ("sleep", "busy"):
        run = json.load(open(f"{work}/{mode}.{r}.json"))
        t, m = run["total"]["summary"], run["metrics"]
        rows[mode].append((t["p50_ns"] / 1e3, t["p99_ns"] / 1e3,
                           cpu(f"{work}/{mode}-time.{r}", m["messages_sent"]), m["messages_lost"]))
        line += f" | rtlab {mode} p50 {t['p50_ns'] / 1e3:.2f} p99 {t['p99_ns'] / 1e3:.2f} lost {int(m['messages_lost'])}"
    print(line + " (us)")

med = lambda rows, i: statistics.median(x[i] for x in rows)
print()
print(f"{'':24}{'sockperf':>10}{'rtlab':>10}{'ratio':>7}{'rtlab --busy-wait':>19}{'ratio':>7}")
for name, i in [("median round trip (us)", 0), ("p99 round trip (us)", 1), ("client CPU/msg (us)", 2)]:
    a, b, c = med(rows["sockperf"], i), med(rows["sleep"], i), med(rows["busy"], i)
    print(f"{name:24}{a:10.2f}{b:10.2f}{b / a:7.2f}{c:19.2f}{c / a:7.2f}")
PY
