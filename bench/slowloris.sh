#!/usr/bin/env bash
# bench/slowloris.sh [SECONDS]: `rtlab serve` beside clients that hold
# connections, on loopback only. 200 slow clients each send a request head one
# byte a second (`GET / HTTP/1.1`, then header bytes that never end) and 32
# idle ones connect and send nothing; each one that the server closes connects
# again at once, so the pressure stays the same for SECONDS (default 30). All
# the while a normal client sends `GET /metrics` every 0.25 s on a new
# connection and times each answer (connect to the last byte). Prints the
# normal client's answers by status, their worst and median times, how many
# took over 1 s, the reconnections of the slow and idle clients, and the
# server's peak RSS (VmHWM). Goal: every normal request answered 200 within
# 1 s throughout.
#
# RTLAB_BIN=PATH measures that binary instead of a fresh release build (the
# figures before a change); SERVE_ARGS adds options to `rtlab serve`; SLOW
# and IDLE change the numbers of clients (200 and 32).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_RUN=${1:-30}
if [ -z "${RTLAB_BIN:-}" ]; then
    cargo build --release -q
    RTLAB_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
db=$tmp/s.db
"$RTLAB_BIN" --db "$db" results import tests/fixtures/golden/input/rtlab-latency.json \
    tests/fixtures/golden/input/cyclictest.json >/dev/null
# shellcheck disable=SC2086
"$RTLAB_BIN" --db "$db" serve --listen 127.0.0.1:0 ${SERVE_ARGS:-} 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do grep -q http:// "$tmp/serve.log" && break; sleep 0.1; done
addr=$(grep -o '127.0.0.1:[0-9]*' "$tmp/serve.log" | head -1)
echo "rtlab serve on $addr, ${SERVE_ARGS:-default options}; ${SLOW:-200} slow and ${IDLE:-32} idle clients for $SECONDS_RUN s"

python3 - "$addr" "$pid" "$SECONDS_RUN" "${SLOW:-200}" "${IDLE:-32}" <<'EOF'
import selectors, socket, statistics, sys, threading, time

host, port = sys.argv[1].rsplit(":", 1)
addr, pid, run = (host, int(port)), int(sys.argv[2]), float(sys.argv[3])
SLOW, IDLE = int(sys.argv[4]), int(sys.argv[5])
HEAD = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000
sel = selectors.DefaultSelector()
reconnects = {"slow": 0, "idle": 0}
stop = time.monotonic() + run
peak_rss = 0

def rss(field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

def connect(kind, i, first):
    """A bad client's connection, non-blocking once connected."""
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(addr)
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    if not first:
        reconnects[kind] += 1
    # slow: (kind, index, bytes sent, next send time)
    state = [kind, i, 0, time.monotonic() + (i % 10) / 10]
    sel.register(s, selectors.EVENT_READ, state)
    return s

socks = {}
t0 = time.monotonic()
for i in range(IDLE):
    socks[("idle", i)] = connect("idle", i, True)
for i in range(SLOW):
    socks[("slow", i)] = connect("slow", i, True)

print(f"{sum(s is not None for s in socks.values())} slow and idle clients connected in {time.monotonic() - t0:.1f} s")
stop = time.monotonic() + run
times, statuses = [], {}

def normal():
    while time.monotonic() < stop:
        t = time.monotonic()
        status = "no answer"
        try:
            c = socket.create_connection(addr, timeout=60)
            c.settimeout(60)
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += b
            c.close()
            if got.startswith(b"HTTP/1."):
                status = got.split(b" ", 2)[1].decode()
        except OSError as e:
            status = type(e).__name__
        times.append(time.monotonic() - t)
        statuses[status] = statuses.get(status, 0) + 1
        time.sleep(max(0.0, 0.25 - (time.monotonic() - t)))

th = threading.Thread(target=normal)
th.start()
while time.monotonic() < stop:
    now = time.monotonic()
    for key, s in list(socks.items()):
        if s is None:
            socks[key] = connect(key[0], key[1], False)
            continue
        st = sel.get_key(s).data
        if st[0] == "slow" and now >= st[3]:
            try:
                s.send(HEAD[st[2]:st[2] + 1])
                st[2] += 1
            except OSError:
                pass
            st[3] = now + 1.0
    for k, _ in sel.select(timeout=0.05):
        s = k.fileobj
        # Readable: the server answered (408, 503) or closed; either way
        # this client is done and connects again.
        try:
            s.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            pass
        sel.unregister(s)
        s.close()
        socks[(k.data[0], k.data[1])] = None
    peak_rss = max(peak_rss, rss("VmRSS:"))
th.join()
for s in socks.values():
    if s is not None:
        s.close()
times.sort()
over = sum(1 for t in times if t > 1.0)
print(f"normal client: {len(times)} GET /metrics, answers {dict(sorted(statuses.items()))}")
print(f"  worst {times[-1]:.3f} s, median {statistics.median(times):.3f} s, over 1 s: {over}")
print(f"slow and idle clients closed by the server and connected again: {reconnects['slow']} slow, {reconnects['idle']} idle")
print(f"server peak RSS: {rss('VmHWM:')} kB (VmHWM; largest VmRSS seen {peak_rss} kB)")
ok = over == 0 and set(statuses) == {"200"}
print("goal (every GET /metrics answered 200 within 1 s):", "met" if ok else "MISSED")
EOF
