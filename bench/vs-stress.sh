#!/usr/bin/env bash
# rtlab's load generators side by side with the tools they replace, same worker
# counts and durations, one after the other in one run:
#   rtlab load cpu     vs  stress-ng --cpu    (ops/s per worker, CPU use per worker)
#   rtlab load vm      vs  stress --vm        (minor page faults/s)
#   rtlab load fswalk  vs  ls -lR             (entries/s)
#   rtlab load msg     vs  hackbench          (messages/s)
# and the peak RSS of every load. Ratios are rtlab / anchor: intensity ≥ 0.9 is
# the target. CPU use, page faults and RSS of both sides come from the same
# place (GNU time, i.e. wait4's rusage of the whole process tree).
#
# Usage: bench/vs-stress.sh [-w WORKERS] [-d SECONDS] [-r WALK_ROOT] [-l HACKBENCH_LOOPS]
# Needs: a release build (cargo build --release), stress-ng, stress, hackbench
# (rt-tests), GNU time (/usr/bin/time), jq.
set -euo pipefail
cd "$(dirname "$0")/.."

WORKERS=2
SECS=10
ROOT=/usr
LOOPS=3000
while getopts "w:d:r:l:" o; do
    case $o in
    w) WORKERS=$OPTARG ;;
    d) SECS=$OPTARG ;;
    r) ROOT=$OPTARG ;;
    l) LOOPS=$OPTARG ;;
    *) echo "usage: $0 [-w WORKERS] [-d SECONDS] [-r WALK_ROOT] [-l HACKBENCH_LOOPS]" >&2; exit 2 ;;
    esac
done

RTLAB=${RTLAB:-target/release/rtlab}
for t in "$RTLAB" stress-ng stress hackbench /usr/bin/time jq; do
    command -v "$t" >/dev/null || { echo "missing: $t" >&2; exit 2; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# timed FILE CMD...: runs CMD under GNU time; FILE gets "elapsed user sys minflt maxrss_kib".
timed() {
    local f=$1
    shift
    /usr/bin/time -o "$f" -f "%e %U %S %R %M" "$@"
}
field() { awk -v n="$2" '{print $n}' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
cpu_pct() { awk -v e="$(field "$1" 1)" -v u="$(field "$1" 2)" -v s="$(field "$1" 3)" -v w="$2" \
    'BEGIN { printf "%.1f", (u + s) / e / w * 100 }'; }
per_s() { awk -v n="$1" -v e="$2" 'BEGIN { printf "%.0f", n / e }'; }

echo "rtlab load vs stress-ng / stress / ls -lR / hackbench: $WORKERS worker(s), ${SECS}s each, $(nproc) CPUs, $(uname -r)"
echo

# --- cpu ---------------------------------------------------------------------
timed "$TMP/sng.t" stress-ng --cpu "$WORKERS" --timeout "${SECS}s" --metrics-brief >"$TMP/sng.out" 2>&1
SNG_OPS=$(awk '/stress-ng.*cpu / && $0 !~ /stressor/ {print $(NF-1); exit}' "$TMP/sng.out")
SNG_OPS_W=$(awk -v o="$SNG_OPS" -v w="$WORKERS" 'BEGIN { printf "%.0f", o / w }')
timed "$TMP/rc.t" "$RTLAB" load cpu:"$WORKERS" -D "${SECS}s" --json --no-save >"$TMP/rc.json"
RC_OPS_W=$(jq '.loads[0].achieved.ops_per_s_per_worker | floor' "$TMP/rc.json")
RC_CPU=$(cpu_pct "$TMP/rc.t" "$WORKERS")
SNG_CPU=$(cpu_pct "$TMP/sng.t" "$WORKERS")
RC_RSS=$(jq '[.loads[0].per_worker[].max_rss_kib] | max' "$TMP/rc.json")
echo "cpu      rtlab: ${RC_OPS_W} ops/s/worker (4096-round blocks, mix), ${RC_CPU}% of a core per worker, worker RSS ${RC_RSS} KiB"
echo "         stress-ng --cpu: ${SNG_OPS_W} bogo-ops/s/worker (method all), ${SNG_CPU}% of a core per worker, RSS $(field "$TMP/sng.t" 5) KiB"
echo "         CPU use ratio: $(ratio "$RC_CPU" "$SNG_CPU")  (ops are different units: not a ratio)"
echo

# --- vm ----------------------------------------------------------------------
timed "$TMP/st.t" stress --vm "$WORKERS" --vm-bytes 256M --timeout "${SECS}s" >/dev/null 2>&1 || true
ST_FLT=$(per_s "$(field "$TMP/st.t" 4)" "$(field "$TMP/st.t" 1)")
timed "$TMP/rv.t" "$RTLAB" load vm:"$WORKERS":256M -D "${SECS}s" --json --no-save >"$TMP/rv.json"
RV_FLT=$(per_s "$(field "$TMP/rv.t" 4)" "$(field "$TMP/rv.t" 1)")
RV_RSS=$(jq '[.loads[0].per_worker[].max_rss_kib] | max' "$TMP/rv.json")
echo "vm       rtlab: ${RV_FLT} minor faults/s (256M per worker), worker RSS ${RV_RSS} KiB"
echo "         stress --vm --vm-bytes 256M: ${ST_FLT} minor faults/s, RSS $(field "$TMP/st.t" 5) KiB"
echo "         ratio: $(ratio "$RV_FLT" "$ST_FLT")"
echo

# --- fswalk ------------------------------------------------------------------
ENTRIES=$(find "$ROOT" -xdev -mindepth 1 2>/dev/null | wc -l)
ls -lR "$ROOT" >/dev/null 2>&1 || true # warm the caches for both sides
timed "$TMP/ls.t" bash -c "end=\$(( \$(date +%s) + $SECS )); n=0; while [ \$(date +%s) -lt \$end ]; do ls -lR '$ROOT' >/dev/null 2>&1; n=\$((n+1)); done; echo \$n >'$TMP/ls.n'"
PASSES=$(cat "$TMP/ls.n")
LS_EPS=$(per_s "$((PASSES * ENTRIES))" "$(field "$TMP/ls.t" 1)")
timed "$TMP/rf.t" "$RTLAB" load fswalk root="$ROOT" -D "${SECS}s" --json --no-save >"$TMP/rf.json"
RF_EPS=$(jq '.loads[0].achieved.entries_per_s | floor' "$TMP/rf.json")
RF_RSS=$(jq '.loads[0].per_worker[0].max_rss_kib' "$TMP/rf.json")
echo "fswalk   rtlab: ${RF_EPS} entries/s ($ROOT, 1 worker), worker RSS ${RF_RSS} KiB"
echo "         ls -lR $ROOT: ${LS_EPS} entries/s ($PASSES passes of $ENTRIES entries), RSS $(field "$TMP/ls.t" 5) KiB"
echo "         ratio: $(ratio "$RF_EPS" "$LS_EPS")"
echo

# --- msg ---------------------------------------------------------------------
HB=$(hackbench -g "$WORKERS" -l "$LOOPS" 2>&1)
HB_T=$(awk '/^Time:/ {print $2}' <<<"$HB")
HB_MPS=$(per_s "$((WORKERS * 20 * 20 * LOOPS))" "$HB_T")
timed "$TMP/rm.t" "$RTLAB" load msg:"$WORKERS" -D "${SECS}s" --json --no-save >"$TMP/rm.json"
RM_MPS=$(jq '.loads[0].achieved.messages_per_s | floor' "$TMP/rm.json")
RM_RSS=$(jq '[.loads[0].per_worker[].max_rss_kib] | max' "$TMP/rm.json")
echo "msg      rtlab: ${RM_MPS} messages/s ($WORKERS group(s) of 20+20 processes, 100 B, sockets), worker RSS ${RM_RSS} KiB"
echo "         hackbench -g $WORKERS -l $LOOPS: ${HB_MPS} messages/s (${HB_T} s)"
echo "         ratio: $(ratio "$RM_MPS" "$HB_MPS")"
echo
echo "start/stop of the rtlab loads (ms): cpu $(jq '.loads[0] | "\(.start_ms)/\(.stop_ms)"' "$TMP/rc.json"), vm $(jq '.loads[0] | "\(.start_ms)/\(.stop_ms)"' "$TMP/rv.json"), fswalk $(jq '.loads[0] | "\(.start_ms)/\(.stop_ms)"' "$TMP/rf.json"), msg $(jq '.loads[0] | "\(.start_ms)/\(.stop_ms)"' "$TMP/rm.json")"
