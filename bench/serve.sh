#!/usr/bin/env bash
# bench/serve.sh [HOSTS] [WINDOWS]: `rtlab serve` over a store with many monitor
# windows: HOSTS hosts (default 50) x 2 CPUs x WINDOWS windows of 5 minutes each
# (default 10000: 1,000,000 windows, 35 days without retention, the worst case:
# no window merged into hourly rows), written through the store API
# (Store::save_windows, by the test store::fleet::tests::many_windows_...), and
# 200 imported runs. Then the time of `/`, `/runs`, `/metrics` and one host's
# page, each fetched 5 times with curl from the release binary (median and
# largest). Goal: interactive, under 1 s.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-50}
WINDOWS=${2:-10000}
cargo build --release -q
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
db=$tmp/fleet.db

t0=$(date +%s.%N)
RTLAB_BENCH_DB=$db RTLAB_BENCH_HOSTS=$HOSTS RTLAB_BENCH_WINDOWS=$WINDOWS \
    cargo test -q --bin rtlab many_windows_keep_the_fleet_queries_right >/dev/null
t1=$(date +%s.%N)
files=()
for _ in $(seq 200); do files+=(tests/fixtures/golden/input/rtlab-latency.json); done
"$BIN" --db "$db" results import "${files[@]}" >/dev/null
rows=$(( HOSTS * 2 * WINDOWS ))
printf '%d windows (%d hosts x 2 CPUs x %d) written in %.1f s; store %d MB\n' \
    "$rows" "$HOSTS" "$WINDOWS" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" \
    "$(( $(stat -c %s "$db") / 1048576 ))"

"$BIN" --db "$db" serve --listen 127.0.0.1:0 2>"$tmp/serve.log" &
pid=$!
for _ in $(seq 100); do grep -q http:// "$tmp/serve.log" && break; sleep 0.1; done
addr=$(grep -o '127.0.0.1:[0-9]*' "$tmp/serve.log")
printf '%-22s %8s %8s %10s\n' page median max bytes
for page in / /runs /metrics /host/board007 "/runs?host=nowhere"; do
    times=()
    for _ in 1 2 3 4 5; do
        out=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "http://$addr$page")
        set -- $out
        [ "$1" = 200 ] || { echo "$page: HTTP $1" >&2; exit 1; }
        times+=("$2"); size=$3
    done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    printf '%-22s %7.3fs %7.3fs %10d\n' "$page" "$(sed -n 3p <<<"$sorted")" "$(sed -n 5p <<<"$sorted")" "$size"
done
