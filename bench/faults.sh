#!/usr/bin/env bash
# Tries every fault rtlab must survive and prints one table:
#   fault | tries | survived | data lost | leftovers | worst stop (ms)
#
#   bench/faults.sh [TRIES]        (default 10 tries per fault; run as root for
#                                   the prio fault, which is skipped otherwise)
#
# A try "survives" when rtlab neither hangs nor aborts (no exit 134/139, every
# process ends on its own or within 1 s of being told to), answers with the exit
# code it documents, and leaves the store readable. "Data lost" counts runs that
# rtlab said it saved but that are not in the store afterwards, and threads whose
# priority was not restored ("-" where a fault stores nothing). "Leftovers"
# counts temporary files, servers that outlived their stop, stores a refused
# scenario created, and campaigns left `running`. The network rows show the
# server's largest RSS growth (a try fails above 8 MiB). "Worst stop" is the longest time from SIGINT /
# SIGTERM / --duration to exit. Every number comes from this run; nothing is
# hard-coded. The script needs python3 (on the development machine, not the
# target) for the hostile network clients.
set -euo pipefail
cd "$(dirname "$0")/.."
TRIES=${1:-10}

cargo build --release --quiet
RTLAB="${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab"
WORK=$(mktemp -d /tmp/rtlab-faults.XXXXXX)
export XDG_STATE_HOME="$WORK/state" RTLAB_DB="$WORK/default.db"
trap 'pkill -KILL -f "$WORK" 2>/dev/null || true; rm -rf "$WORK"' EXIT

ROWS=()
row() { ROWS+=("$(printf '%-38s %6s %9s %10s %10s %12s' "$@")"); }
now_ms() { date +%s%3N; }
# Runs "$@" and prints its exit code (never trips errexit).
code_of() { "$@" >/dev/null 2>&1 && echo 0 || echo $?; }
# Sends SIGNAL to PID and prints the milliseconds until it exited (or 99999).
stop_ms() {
    local sig=$1 pid=$2 t0
    t0=$(now_ms)
    kill "-$sig" "$pid" 2>/dev/null || true
    for _ in $(seq 1 500); do
        kill -0 "$pid" 2>/dev/null || { echo $(($(now_ms) - t0)); return; }
        sleep 0.01
    done
    kill -KILL "$pid" 2>/dev/null || true
    echo 99999
}
max() { [ "$1" -gt "$2" ] && echo "$1" || echo "$2"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# Runs saved in DB (0 when the store cannot be read).
stored() { "$RTLAB" --db "$1" results list --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo 0; }
leftover_files() { find /tmp "$WORK" -maxdepth 2 -name 'rtlab-*' -newer "$WORK/.start" ! -path "$WORK" 2>/dev/null | grep -v "^$WORK\$" | grep -vc "rtlab-faults" || true; }
touch "$WORK/.start"

# A small cyclictest histogram to import: a write that touches every table.
HIST="$WORK/hist.txt"
{ echo "# Histogram"; for i in $(seq 0 49); do printf '%06d %06d\n' "$i" $((i * 3 + 1)); done
  echo "# Total: 000003725"; echo "# Min Latencies: 00000"; echo "# Avg Latencies: 00033"
  echo "# Max Latencies: 00049"; echo "# Histogram Overflows: 00000"; } > "$HIST"

# 1. Eight processes create one store at once.
fault_concurrent_store() {
    local ok=0 lost=0 t
    for t in $(seq "$TRIES"); do
        local db="$WORK/conc$t.db" pids=() fails=0
        for _ in $(seq 8); do "$RTLAB" --db "$db" results import "$HIST" >/dev/null 2>&1 & pids+=($!); done
        for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
        local n; n=$(stored "$db")
        lost=$((lost + 8 - fails - n))
        [ "$fails" -eq 0 ] && [ "$n" -eq 8 ] && ok=$((ok + 1))
    done
    row "8 processes create one store" "$TRIES" "$ok" "$lost" - -
}

# 2. SIGKILL in the middle of writes: what was reported saved is still there and
#    the store still opens.
fault_sigkill_writes() {
    local ok=0 lost=0 t db="$WORK/kill.db"
    for t in $(seq "$TRIES"); do
        local before after saved
        before=$(stored "$db")
        "$RTLAB" --db "$db" results import "$HIST" "$HIST" "$HIST" "$HIST" >"$WORK/kill.out" 2>&1 &
        local p=$!
        sleep "0.0$((RANDOM % 9 + 1))"
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
        saved=$(grep -c '^run ' "$WORK/kill.out" || true)
        after=$(stored "$db")
        [ "$after" -lt $((before + saved)) ] && lost=$((lost + before + saved - after))
        "$RTLAB" --db "$db" results list >/dev/null 2>&1 && ok=$((ok + 1))
    done
    row "SIGKILL during writes" "$TRIES" "$ok" "$lost" - -
}

# 3. Hostile UDP datagrams, then a real client; memory must stay flat (at most
#    8 MiB of growth) and the server must end within a second of SIGTERM.
fault_hostile_udp() {
    local ok=0 worst=0 grew=0 left=0 t port
    for t in $(seq "$TRIES"); do
        "$RTLAB" --db "$WORK/net.db" net serve --bind 127.0.0.1:0 2>"$WORK/udp.err" >/dev/null &
        local p=$!
        for _ in $(seq 100); do grep -q 'listening on' "$WORK/udp.err" && break; sleep 0.05; done
        port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$WORK/udp.err")
        local r0; r0=$(rss_kib "$p")
        python3 - "$port" <<'EOF'
import os, random, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20000):
    s.sendto(os.urandom(random.randint(0, 1500)), ("127.0.0.1", int(sys.argv[1])))
EOF
        local c; c=$(code_of "$RTLAB" net ping "127.0.0.1:$port" -n 20 --period 5ms --no-save -q)
        local g=$(($(rss_kib "$p") - r0)); grew=$(max "$grew" "$g")
        local s; s=$(stop_ms TERM "$p"); wait "$p" 2>/dev/null || true
        worst=$(max "$worst" "$s")
        [ "$s" -ge 99999 ] && left=$((left + 1))
        [ "$c" -le 1 ] && [ "$s" -lt 1000 ] && [ "$g" -lt 8192 ] && ok=$((ok + 1))
    done
    row "20 000 hostile UDP (RSS +${grew} KiB)" "$TRIES" "$ok" - "$left" "$worst"
}

# 4. TCP clients that send and never read, plus idle connections; a real client
#    must still be served and SIGTERM must end the server within a second.
fault_stalled_tcp() {
    local ok=0 worst=0 grew=0 left=0 t port
    for t in $(seq "$TRIES"); do
        "$RTLAB" --db "$WORK/net.db" net serve --tcp --bind 127.0.0.1:0 2>"$WORK/tcp.err" >/dev/null &
        local p=$!
        for _ in $(seq 100); do grep -q 'listening on' "$WORK/tcp.err" && break; sleep 0.05; done
        port=$(sed -n 's/.*listening on [^:]*:\([0-9]*\).*/\1/p' "$WORK/tcp.err")
        python3 - "$port" "$WORK/hostile.pid" <<'EOF' &
import os, socket, struct, sys, time
port = int(sys.argv[1])
open(sys.argv[2], "w").write(str(os.getpid()))
idle = []
for i in range(80):
    try:
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=1))
    except OSError:
        pass
stall = socket.create_connection(("127.0.0.1", port), timeout=1)
stall.setblocking(False)
end = time.time() + 20
while time.time() < end:
    try:
        stall.send(os.urandom(4096))
    except BlockingIOError:
        time.sleep(0.01)
    except OSError:
        break
time.sleep(20)
EOF
        local h=$! r0; r0=$(rss_kib "$p")
        sleep 1
        local c; c=$(code_of timeout 20 "$RTLAB" net ping --tcp "127.0.0.1:$port" -n 20 --period 5ms --no-save -q)
        local g=$(($(rss_kib "$p") - r0)); grew=$(max "$grew" "$g")
        local s; s=$(stop_ms TERM "$p"); wait "$p" 2>/dev/null || true
        [ "$s" -ge 99999 ] && left=$((left + 1))
        kill "$h" 2>/dev/null || true; wait "$h" 2>/dev/null || true
        worst=$(max "$worst" "$s")
        [ "$c" -le 1 ] && [ "$s" -lt 1000 ] && [ "$g" -lt 8192 ] && ok=$((ok + 1))
    done
    row "stalled TCP + 80 idle (RSS +${grew} KiB)" "$TRIES" "$ok" - "$left" "$worst"
}

# 5. A scenario that expands to millions of steps: refused (exit 2) up front.
fault_scenario_bomb() {
    local ok=0 worst=0 t
    local a; a=$(python3 -c 'print(", ".join(f"\"{i}us\"" for i in range(100, 1100)))')
    cat > "$WORK/bomb.toml" <<EOF
name = "bomb"
[[step]]
probe = "latency"
matrix.interval = [$a]
matrix.priority = [$(seq -s, 0 99)]
matrix.distance = [$(seq -s, 0 99)]
EOF
    for t in $(seq "$TRIES"); do
        local t0 c; t0=$(now_ms)
        c=$(code_of timeout 30 "$RTLAB" --db "$WORK/bomb.db" run "$WORK/bomb.toml" -q)
        local dt=$(($(now_ms) - t0)); worst=$(max "$worst" "$dt")
        [ "$c" -eq 2 ] && ok=$((ok + 1))
    done
    # Refused before anything runs: no store, no campaign.
    local left=0
    if [ -e "$WORK/bomb.db" ]; then left=1; fi
    row "10^7-step scenario (exit 2)" "$TRIES" "$ok" - "$left" "$worst"
}

# 6. Oversized inputs: refused with exit 2, never an abort.
fault_oversized() {
    local ok=0 n=0
    printf '# Histogram\n999999999999 000001\n# Total: 000000001\n' > "$WORK/huge.txt"
    local cases=(
        "results import $WORK/huge.txt"
        "latency -l 10 -p 0 --policy other --no-save -q --trace-points 99999999999"
        "bench memory --block-size 30G --no-save"
        "latency -l 10 -p 0 --policy other --no-save -q --cpus 0,,1"
        "latency -l 10 -p 0 --policy other --no-save -q --tag ''"
        "latency -l 10 -p 0 --policy other -q --histfile /nonexistent/dir/hist.txt"
    )
    for _ in $(seq "$TRIES"); do
        for c in "${cases[@]}"; do
            n=$((n + 1))
            [ "$(eval "code_of \"\$RTLAB\" --db \"\$WORK/big.db\" $c")" -eq 2 ] && ok=$((ok + 1))
        done
    done
    local left=0
    if [ -e /nonexistent ]; then left=1; fi
    row "oversized and malformed input" "$n" "$ok" - "$left" -
}

# 7. Ctrl-C at a random moment of a campaign: interrupted, resumable, nothing
#    left running.
fault_ctrl_c_campaign() {
    local ok=0 worst=0 left=0 t db="$WORK/camp.db"
    cat > "$WORK/camp.toml" <<'EOF'
name = "interrupt me"
[defaults]
duration = "300ms"
interval = "1ms"
priority = 0
[[step]]
probe = "latency"
matrix.load = ["none", "cpu:1", "vm:1:16M"]
EOF
    for t in $(seq "$TRIES"); do
        "$RTLAB" --db "$db" run "$WORK/camp.toml" -q >/dev/null 2>&1 &
        local p=$!
        sleep "0.$((RANDOM % 9))$((RANDOM % 10))"
        local s; s=$(stop_ms INT "$p")
        local c=0; wait "$p" || c=$?
        worst=$(max "$worst" "$s")
        pgrep -f "$WORK/camp.toml" >/dev/null && left=$((left + 1))
        local rc; rc=$(code_of timeout 60 "$RTLAB" --db "$db" run --resume -q)
        { [ "$c" -eq 130 ] || [ "$c" -le 1 ]; } && [ "$rc" -le 1 ] && ok=$((ok + 1))
    done
    local running
    running=$("$RTLAB" --db "$db" results list --json 2>/dev/null | grep -c '"running"' || true)
    row "Ctrl-C during a campaign" "$TRIES" "$ok" - $((left + running)) "$worst"
}

# 8. Concurrent `prio set` on one multi-threaded process, then one restore:
#    every thread back to its exact original setting.
fault_concurrent_prio() {
    if [ "$(id -u)" -ne 0 ]; then row "concurrent prio set (needs root)" 0 - - - -; return; fi
    local ok=0 lost=0 t name="rtlabflt$$"
    ln -sf "$RTLAB" "$WORK/$name"
    for t in $(seq "$TRIES"); do
        "$WORK/$name" latency --policy other -p 0 -t 3 -D 30s --no-save -q >/dev/null 2>&1 &
        local p=$!
        sleep 0.5
        local before; before=$(for d in /proc/$p/task/*; do chrt -p "${d##*/}" | tr '\n' ' '; taskset -p "${d##*/}"; done | sed 's/[0-9]*:/:/' | sort)
        for prio in 11 12 13 14; do "$RTLAB" prio set "$name" --policy fifo -p "$prio" >/dev/null 2>&1 & done
        wait $(jobs -p | grep -v "^$p\$") 2>/dev/null || true
        "$RTLAB" prio restore >/dev/null 2>&1 || true
        local after; after=$(for d in /proc/$p/task/*; do chrt -p "${d##*/}" | tr '\n' ' '; taskset -p "${d##*/}"; done | sed 's/[0-9]*:/:/' | sort)
        if [ "$before" = "$after" ]; then ok=$((ok + 1)); else lost=$((lost + 1)); fi
        kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true
    done
    row "4 concurrent prio set + restore" "$TRIES" "$ok" "$lost" - -
}

fault_concurrent_store
fault_sigkill_writes
fault_hostile_udp
fault_stalled_tcp
fault_scenario_bomb
fault_oversized
fault_ctrl_c_campaign
fault_concurrent_prio
left_files=$(leftover_files)

printf '%-38s %6s %9s %10s %10s %12s\n' fault tries survived "data lost" leftovers "worst stop ms"
printf '%s\n' "${ROWS[@]}"
echo "temporary files left in /tmp: $left_files"
