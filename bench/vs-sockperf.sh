#!/usr/bin/env bash
# Loopback UDP ping-pong, rtlab net ping/serve vs sockperf ping-pong/server, run
# side by side in one invocation: same message size on the wire, same message
# rate, same duration. Prints median and p99 round trip of each, the client's CPU
# time per message (user+sys of the client process from /usr/bin/time), and the
# ratios rtlab / sockperf. Both tools are run in alternation ROUNDS times, so load
# from elsewhere on the machine hits both alike; the figures are medians over the
# rounds.
#
# Usage: bench/vs-sockperf.sh [ROUNDS] [SECONDS_PER_RUN] [MESSAGE_BYTES] [MSGS_PER_S]
#   defaults: 5 rounds of 10 s each, 104-byte messages, 20000 messages/s
#   (about 2 minutes). Needs a release build (cargo build --release) and sockperf.
# Environment: RTLAB=path to the binary (default target/release/rtlab),
#   RTLAB_EXTRA="--busy-wait" to add client options (sockperf busy-waits between
#   messages; rtlab sleeps unless --busy-wait).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-5}
SECS=${2:-10}
BYTES=${3:-104}
MPS=${4:-20000}
RTLAB=${RTLAB:-target/release/rtlab}
EXTRA=${RTLAB_EXTRA:-}
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
echo "rtlab client options: --period ${PERIOD_NS}ns --round-trips 1 --payload $PAYLOAD ${EXTRA}"
for r in $(seq 1 "$ROUNDS"); do
    /usr/bin/time -f "%U %S" -o "$work/sp-time.$r" \
        sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" -m "$BYTES" -t "$SECS" --mps "$MPS" \
        --full-rtt >"$work/sp.$r" 2>&1
    # shellcheck disable=SC2086 # EXTRA holds separate options
    /usr/bin/time -f "%U %S" -o "$work/rt-time.$r" \
        "$RTLAB" net ping "127.0.0.1:$RT_PORT" --period "${PERIOD_NS}ns" --round-trips 1 \
        --payload "$PAYLOAD" --count "$COUNT" --timeout 1s --json --no-save --quiet $EXTRA \
        >"$work/rt.$r.json"
done

python3 - "$work" "$ROUNDS" <<'PY'
import json, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
sp, rt = [], []
for r in range(1, rounds + 1):
    text = open(f"{work}/sp.{r}").read()
    pct = {m[0]: float(m[1]) for m in re.findall(r"percentile (\d+\.\d+) =\s+([\d.]+)", text)}
    n = int(re.search(r"\[Valid Duration\].*ReceivedMessages=(\d+)", text).group(1))
    total = int(re.search(r"\[Total Run\].*SentMessages=(\d+)", text).group(1))
    u, s = map(float, open(f"{work}/sp-time.{r}").read().split()[-2:])
    sp.append((pct["50.000"], pct["99.000"], (u + s) * 1e6 / total, n))
    run = json.load(open(f"{work}/rt.{r}.json"))
    t = run["total"]["summary"]
    sent = run["metrics"]["messages_sent"]
    u, s = map(float, open(f"{work}/rt-time.{r}").read().split()[-2:])
    rt.append((t["p50_ns"] / 1e3, t["p99_ns"] / 1e3, (u + s) * 1e6 / sent, run["metrics"]["messages_lost"]))
    print(f"round {r}: sockperf p50 {sp[-1][0]:.2f} p99 {sp[-1][1]:.2f} us | "
          f"rtlab p50 {rt[-1][0]:.2f} p99 {rt[-1][1]:.2f} us, lost {int(rt[-1][3])}")
med = lambda rows, i: statistics.median(x[i] for x in rows)
print()
print(f"{'':24}{'sockperf':>10}{'rtlab':>10}{'ratio':>8}")
for name, i in [("median round trip (us)", 0), ("p99 round trip (us)", 1), ("client CPU/msg (us)", 2)]:
    a, b = med(sp, i), med(rt, i)
    print(f"{name:24}{a:10.2f}{b:10.2f}{b / a:8.2f}")
PY
