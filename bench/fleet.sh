#!/usr/bin/env bash
# bench/fleet.sh: a simulated fleet made from real runs, and how fast rtlab
# answers the questions a fleet asks of its store.
#
# 1. Real data, measured here: six short `rtlab latency` runs (under 1 s each:
#    1 or 2 threads, 200 us to 1 ms, idle or beside a cpu load) and a short
#    `rtlab monitor` session (1 ms on one CPU, 2-s windows, 7 s).
# 2. A generator (SQL run by the sqlite3 CLI on a copy of that store) replicates
#    them into HOSTS hosts (board-00, ...) over DAYS days: RUNS_PER_DAY runs a
#    host a day, each one a copy of a real run (its record, histograms and
#    series as measured; host, kernel, label, times and UUID changed; each
#    host and kernel draws from its own 3 of the 6, so that hosts differ), the
#    host's kernel changing every week among 4 releases; and WINDOWS monitor
#    windows spread evenly over hosts, 2 CPUs and the DAYS days, each one a
#    real window's row (histogram, percentiles, counts) with its host, CPU and
#    times changed.
# 3. Timed (best of 3, wall clock, the release binary): one host's last 100
#    runs (`results list --host H --limit 100`), two hosts compared over 30
#    days (`compare --host A --host B --by host --since 30d`), one host's
#    monitor series of the last day (`results windows --host H --since 1d`).
#    Goal: under 1 s each.
# 4. PostgreSQL: the fleet pushed into an empty database (`results push --to
#    postgres://...`, timed once), then the same queries against it. The
#    database is RTLAB_FLEET_PG when set (a postgres:// URL of an empty
#    database); otherwise a throw-away server made for this run: initdb and
#    pg_ctl of the newest /usr/lib/postgresql/*/bin (as `nobody` when run as
#    root) in a temporary directory, on a free port of 127.0.0.1, stopped and
#    removed at exit (Ctrl-C too).
# 5. `rtlab serve` over each store: GET /metrics, / (the fleet overview) and
#    /runs, best of 10 with curl; and / again from `serve --require drone`,
#    whose overview judges 7 budgets on every host's monitor rows and runs.
#
# Usage: bench/fleet.sh   (HOSTS=50 DAYS=30 RUNS_PER_DAY=4 WINDOWS=1000000;
#        KEEP=DIR keeps the fleet store in DIR instead of deleting it;
#        RTLAB_FLEET_PG=postgres://... uses that database instead of a
#        throw-away server)
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-50}
DAYS=${DAYS:-30}
RUNS_PER_DAY=${RUNS_PER_DAY:-4}
WINDOWS=${WINDOWS:-1000000}
if ! command -v sqlite3 >/dev/null; then
    apt-get install -y -qq sqlite3 >/dev/null || { echo "bench/fleet.sh: needs the sqlite3 CLI (apt-get install sqlite3)" >&2; exit 2; }
fi
cargo build --release -q 2>/dev/null || cargo build --release
R=${CARGO_TARGET_DIR:-$PWD/target}/release/rtlab
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
pids=()
pg_dir="" pg_bin=""
as_pg() { # as_pg PROGRAM ARGS...: a PostgreSQL program, as nobody when root
    local prog=$pg_bin/$1
    shift
    if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$prog" "$@"; else "$prog" "$@"; fi
}
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$pg_dir" ]; then
        as_pg pg_ctl -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$pg_dir"
    fi
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
# best CMD...: the best wall-clock time of 3 runs of CMD (stdout discarded), in s.
best() {
    local b="" t0 t1
    for _ in 1 2 3; do
        t0=$(now); "$@" >/dev/null; t1=$(now)
        b=$(awk -v a="$t0" -v z="$t1" -v b="$b" 'BEGIN { t = z - a; if (b == "" || t < b) b = t; printf "%.3f", b }')
    done
    echo "$b"
}

policy=fifo
[ "$(id -u)" -eq 0 ] || policy=other
cpu=$(( $(nproc) > 1 ? 1 : 0 ))
real=$work/real.db
rm -f "$real"*
echo "== real runs on $(uname -n) ($(uname -r)), policy $policy"
for args in "-t 2 -l 2000 -i 200us" "-a $cpu -l 1000 -i 1ms" "-a $cpu -l 2000 -i 500us" \
    "-t 2 -l 800 -i 1ms" "-a $cpu -l 3000 -i 200us --load cpu:1" "-a $cpu -l 1000 -i 500us --load cpu:1"; do
    # shellcheck disable=SC2086 # the options are words
    "$R" --db "$real" latency $args --policy "$policy" -q >/dev/null 2>&1
done
"$R" --db "$real" monitor -a "$cpu" -i 1ms --policy "$policy" --window 2s --duration 7s -q >/dev/null
"$R" --db "$real" results list
sqlite3 "$real" "SELECT count(*) || ' real monitor windows, ' || sum(samples) || ' wake-ups' FROM windows"

echo
echo "== generating $HOSTS hosts x $DAYS days x $RUNS_PER_DAY runs, $WINDOWS windows"
fleet=$work/fleet.db
rm -f "$fleet"*
"$R" --db "$real" results list >/dev/null # checkpoints the WAL into the file
cp "$real" "$fleet"
per=$(( (WINDOWS + HOSTS * 2 - 1) / (HOSTS * 2) )) # windows per host and CPU
t0=$(now)
sqlite3 "$fleet" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
BEGIN;
CREATE TEMP TABLE src AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, id FROM runs;
CREATE TEMP TABLE kernels (k INTEGER PRIMARY KEY, release TEXT);
INSERT INTO kernels VALUES (0, '6.1.112-rt43'), (1, '6.6.58-rt45'), (2, '6.12.8-rt'),
    (3, (SELECT kernel_release FROM runs ORDER BY id LIMIT 1));
CREATE TEMP TABLE n (i INTEGER PRIMARY KEY);
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < max($HOSTS, $DAYS, $RUNS_PER_DAY, $per) - 1)
INSERT INTO n SELECT i FROM s;
-- One row per generated run: its id, the real run it copies, host, kernel, start.
CREATE TEMP TABLE plan AS
SELECT (SELECT max(id) FROM runs) + row_number() OVER (ORDER BY d.i, s.i, h.i) AS id,
       (SELECT id FROM src WHERE k = (h.i + (h.i + d.i / 7) % 4 + (d.i * $RUNS_PER_DAY + s.i) % 3)
           % (SELECT count(*) FROM src)) AS src_id,
       printf('board-%02d', h.i) AS host,
       (SELECT release FROM kernels WHERE k = (h.i + d.i / 7) % 4) AS kernel,
       CAST(strftime('%s', 'now') AS INTEGER) - ($DAYS - d.i) * 86400
           + s.i * (86400 / $RUNS_PER_DAY) + h.i * 60 AS t
FROM n h, n d, n s
WHERE h.i < $HOSTS AND d.i < $DAYS AND s.i < $RUNS_PER_DAY;
INSERT INTO runs (id, kind, label, status, exit_code, campaign, started_at, ended_at, duration_ns,
    kernel_release, preempt, hostname, samples, p99_ns, max_ns, misses, record, metrics, uuid)
SELECT p.id, r.kind, p.kernel || ' ' || r.preempt, r.status, r.exit_code, NULL,
    strftime('%Y-%m-%dT%H:%M:%S', p.t, 'unixepoch') || '.000000Z',
    strftime('%Y-%m-%dT%H:%M:%S', p.t + 1 + r.duration_ns / 1000000000, 'unixepoch') || '.000000Z',
    r.duration_ns, p.kernel, r.preempt, p.host, r.samples, r.p99_ns, r.max_ns, r.misses,
    json_set(r.record, '$.fingerprint.hostname', p.host, '$.fingerprint.kernel_release', p.kernel,
        '$.label', p.kernel || ' ' || r.preempt,
        '$.started_at', strftime('%Y-%m-%dT%H:%M:%S', p.t, 'unixepoch') || '.000000Z',
        '$.ended_at', strftime('%Y-%m-%dT%H:%M:%S', p.t + 1 + r.duration_ns / 1000000000, 'unixepoch') || '.000000Z'),
    r.metrics,
    lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
        || substr(lower(hex(randomblob(2))), 2) || '-'
        || substr('89ab', 1 + abs(random() % 4), 1) || substr(lower(hex(randomblob(2))), 2)
        || '-' || lower(hex(randomblob(6)))
FROM plan p JOIN runs r ON r.id = p.src_id;
INSERT INTO series SELECT p.id, s.idx, s.name, s.samples, s.overruns, s.misses, s.overflows,
    s.min_ns, s.mean_ns, s.stddev_ns, s.p50_ns, s.p90_ns, s.p95_ns, s.p99_ns, s.p999_ns,
    s.p9999_ns, s.max_ns, s.data
FROM plan p JOIN series s ON s.run_id = p.src_id;
-- Windows: host h, CPU c, window i of $per over the $DAYS days, copying a real one.
CREATE TEMP TABLE wsrc AS SELECT row_number() OVER (ORDER BY id) - 1 AS k, * FROM windows;
INSERT INTO windows (level, session, host, kernel, cpu, start_ns, end_ns, partial, windows,
    samples, overruns, misses, min_ns, p50_ns, p99_ns, p999_ns, max_ns, max_at_ns, hist)
SELECT 'window', printf('fleet-%02d', h.i), printf('board-%02d', h.i),
    (SELECT release FROM kernels WHERE k = (h.i + (i.i * $DAYS / $per) / 7) % 4), c.i,
    b.t0 + i.i * b.len, b.t0 + (i.i + 1) * b.len, 0, 1, w.samples, w.overruns, w.misses,
    w.min_ns, w.p50_ns, w.p99_ns, w.p999_ns, w.max_ns,
    b.t0 + i.i * b.len + (w.max_at_ns - w.start_ns) * b.len / max(w.end_ns - w.start_ns, 1), w.hist
FROM n i, n h, (SELECT 0 AS i UNION ALL SELECT 1) c,
    (SELECT (CAST(strftime('%s', 'now') AS INTEGER) - $DAYS * 86400) * 1000000000 AS t0,
            $DAYS * 86400 * 1000000000 / $per AS len) b,
    wsrc w
WHERE i.i < $per AND h.i < $HOSTS
  AND w.k = (h.i + c.i + i.i) % (SELECT count(*) FROM wsrc)
  AND (i.i * $HOSTS + h.i) * 2 + c.i < $WINDOWS;
COMMIT;
SQL
t1=$(now)
gen=$(awk -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f", z - a }')
runs=$(sqlite3 "$fleet" "SELECT count(*) FROM runs")
wins=$(sqlite3 "$fleet" "SELECT count(*) FROM windows")
size=$(( $(stat -c %s "$fleet") + $(stat -c %s "$fleet-wal" 2>/dev/null || echo 0) ))
echo "generated in ${gen}s: $runs runs, $wins windows, $((size / 1048576)) MB"
"$R" --db "$fleet" results list >/dev/null # opens (migrates, checkpoints) as rtlab

a=board-03
b=board-17
list=("$R" results list --host "$a" --limit 100)
cmp=("$R" compare --host "$a" --host "$b" --by host --since 30d)
win=("$R" results windows --host "$a" --since 1d)
shown=$("${list[@]}" --db "$fleet" | tail -1)
echo
echo "== the queries"
echo "\$ rtlab results list --host $a --limit 100   # $shown"
echo "\$ rtlab compare --host $a --host $b --by host --since 30d"
"${cmp[@]}" --db "$fleet" | head -24
echo "\$ rtlab results windows --host $a --since 1d   # $("${win[@]}" --db "$fleet" | grep -c . || true) lines"

sq_list=$(best "${list[@]}" --db "$fleet")
sq_cmp=$(best "${cmp[@]}" --db "$fleet")
sq_win=$(best "${win[@]}" --db "$fleet")

# ---- PostgreSQL: RTLAB_FLEET_PG, or a throw-away server of our own. ----
pg_push="skipped" pg_list="-" pg_cmp="-" pg_win="-" pg_why="" pg=${RTLAB_FLEET_PG:-}
if [ -z "$pg" ]; then
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
        pg_why="no PostgreSQL server programs (apt-get install postgresql) and RTLAB_FLEET_PG is not set"
    else
        pg_dir=$(mktemp -d /tmp/rtlab-fleet-pg.XXXXXX)
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        pw=fleet-$RANDOM$RANDOM
        echo "$pw" >"$pg_dir/pw"
        [ "$(id -u)" -ne 0 ] || chown -R nobody:nogroup "$pg_dir"
        as_pg initdb -D "$pg_dir/data" -U postgres --pwfile "$pg_dir/pw" --auth-local=trust \
            --auth-host=scram-sha-256 -E UTF8 >"$pg_dir/initdb.log" 2>&1
        as_pg pg_ctl -D "$pg_dir/data" -l "$pg_dir/log" -w \
            -o "-p $port -k $pg_dir -c listen_addresses=127.0.0.1" start >/dev/null
        as_pg psql -h "$pg_dir" -p "$port" -U postgres -qc "CREATE DATABASE fleet" postgres
        pg=postgres://postgres:$pw@127.0.0.1:$port/fleet
        echo
        echo "== a throw-away PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($pg_dir)"
    fi
fi
if [ -n "$pg" ]; then
    t0=$(now)
    rc=0
    out=$("$R" --db "$fleet" results push --to "$pg" 2>&1) || rc=$?
    [ "$rc" -ne 130 ] || exit 130 # Ctrl-C
    if [ "$rc" -eq 0 ]; then
        t1=$(now)
        pg_push=$(awk -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1fs", z - a }')
        echo "push (${pg_push}): ${out//$pg/postgres://...}"
        pg_list=$(best "${list[@]}" --db "$pg")
        pg_cmp=$(best "${cmp[@]}" --db "$pg")
        pg_win=$(best "${win[@]}" --db "$pg")
    else
        pg_why="the push failed: ${out##*error: }"
    fi
fi

# ---- rtlab serve: GET PATH, best of 10, for each page. ----
pages=(/metrics / /runs)
serve_times() { # serve_times DB [ARGS]: the best of 10 GETs of each of ${pages[@]}, in s
    local db=$1 port=$((20000 + RANDOM % 20000)) p t i path out=()
    shift
    "$R" --db "$db" serve --listen "127.0.0.1:$port" "$@" >/dev/null 2>&1 &
    p=$!; pids+=("$p")
    for i in $(seq 100); do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break; sleep 0.1; done
    for path in "${pages[@]}"; do
        t=""
        for i in $(seq 10); do
            s=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")
            t=$(awk -v s="$s" -v t="$t" 'BEGIN { if (t == "" || s < t) t = s; printf "%.3f", t }')
        done
        out+=("$t")
    done
    kill "$p"; wait "$p" 2>/dev/null || true
    echo "${out[@]}"
}
read -r sq_met sq_root sq_runs <<<"$(serve_times "$fleet")"
pg_met="-" pg_root="-" pg_runs="-" pg_judged="-"
[ "$pg_list" = "-" ] || read -r pg_met pg_root pg_runs <<<"$(serve_times "$pg")"
pages=(/)
sq_judged=$(serve_times "$fleet" --require drone)
[ "$pg_list" = "-" ] || pg_judged=$(serve_times "$pg" --require drone)

echo
echo "== fleet: $HOSTS hosts, $runs runs over $DAYS days, $wins monitor windows ($((size / 1048576)) MB SQLite)"
printf '%-58s %10s %10s\n' "operation (best of 3; pages best of 10)" SQLite PostgreSQL
printf '%-58s %10s %10s\n' "push the fleet (results push --to postgres://...)" "-" "$pg_push"
sec() { if [ "$1" = "-" ]; then echo "-"; else echo "${1}s"; fi; }
printf '%-58s %9ss %10s\n' "results list --host $a --limit 100" "$sq_list" "$(sec "$pg_list")"
printf '%-58s %9ss %10s\n' "compare --host $a --host $b --by host --since 30d" "$sq_cmp" "$(sec "$pg_cmp")"
printf '%-58s %9ss %10s\n' "results windows --host $a --since 1d" "$sq_win" "$(sec "$pg_win")"
printf '%-58s %9ss %10s\n' "GET /metrics (rtlab serve)" "$sq_met" "$(sec "$pg_met")"
printf '%-58s %9ss %10s\n' "GET / (rtlab serve: the fleet overview)" "$sq_root" "$(sec "$pg_root")"
printf '%-58s %9ss %10s\n' "GET /runs (rtlab serve)" "$sq_runs" "$(sec "$pg_runs")"
printf '%-58s %9ss %10s\n' "GET / (serve --require drone: 7 verdicts a host)" "$sq_judged" "$(sec "$pg_judged")"
[ -z "$pg_why" ] || echo "PostgreSQL skipped: $pg_why"
missed=""
for pair in "results list:$sq_list" "compare:$sq_cmp" "results windows:$sq_win" "/metrics:$sq_met" \
    "/:$sq_root" "/runs:$sq_runs" "/ judged:$sq_judged" "PostgreSQL results list:$pg_list" \
    "PostgreSQL compare:$pg_cmp" "PostgreSQL results windows:$pg_win" "PostgreSQL /metrics:$pg_met" \
    "PostgreSQL /:$pg_root" "PostgreSQL /runs:$pg_runs" "PostgreSQL / judged:$pg_judged"; do
    t=${pair##*:}
    [ "$t" != "-" ] || continue
    awk -v t="$t" 'BEGIN { exit !(t < 1.0) }' || missed="$missed ${pair%:*} (${t} s);"
done
if [ -z "$missed" ]; then
    echo "goal (every query < 1 s): met"
else
    echo "goal (every query < 1 s): MISSED by$missed"
fi
