#!/usr/bin/env bash
# Planted links against the files rtlab writes: for each output, links are
# planted where another user of the directory could plant them (the output's
# own name and the temporary name older versions used, NAME.rtlab-tmp), each
# pointing at a "victim" file in a directory of its own; rtlab runs; the
# victims it overwrote are counted. Bundle import is tried with the names its
# private copy used to take in $TMPDIR (rtlab-bundle-PID-NAME.db) taken first
# for the next 3000 process ids. Run it with two binaries to compare:
#
#   bench/symlinks.sh [RTLAB]        # default target/release/rtlab
set -euo pipefail
cd "$(dirname "$0")/.."
RTLAB=$(realpath "${1:-target/release/rtlab}")
FIXTURE=$PWD/tests/fixtures/import/cyclictest-verbose.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
victims=$work/victims out=$work/out
mkdir -p "$victims" "$out/plots" "$out/man" "$out/tmp"
n=0
plant() { # plant NAME...: a link at each NAME to a new victim
    for name in "$@"; do
        n=$((n + 1))
        echo precious >"$victims/$n"
        ln -s "$victims/$n" "$name"
    done
}
overwritten() { # overwritten FIRST LAST: victims FIRST..LAST no longer intact
    local k c=0
    for k in $(seq "$1" "$2"); do
        [ "$(cat "$victims/$k")" = precious ] || c=$((c + 1))
    done
    echo "$c"
}
db=$out/r.db
"$RTLAB" --db "$db" results import "$FIXTURE" >/dev/null
case_() { # case_ WHAT COMMAND...: links already planted since $first
    local what=$1 code=0
    shift
    "$@" >/dev/null 2>&1 || code=$?
    printf '%-30s %7s %12s %6s\n' "$what" "$((n - first + 1))" "$(overwritten "$first" "$n")" "$code"
}
printf '%-30s %7s %12s %6s\n' output planted overwritten exit
first=$((n + 1)); plant "$out/report.rtlab-tmp" "$out/report.html"
case_ "report --html" "$RTLAB" --db "$db" report 1 --html "$out/report.html"
first=$((n + 1)); plant "$out/plots/histograms.rtlab-tmp" "$out/plots/histograms.svg"
case_ "report --plots" "$RTLAB" --db "$db" report 1 --plots "$out/plots"
first=$((n + 1)); plant "$out/run.rtlab-tmp" "$out/run.csv"
case_ "results export -o" "$RTLAB" --db "$db" results export 1 --format csv -o "$out/run.csv"
first=$((n + 1)); plant "$out/hist.rtlab-tmp" "$out/hist.txt"
case_ "latency --histfile" "$RTLAB" --db "$db" latency -l 20 --policy other -q --no-save --histfile "$out/hist.txt"
first=$((n + 1)); plant "$out/rtlab-monitor.service"
case_ "monitor --install-unit" "$RTLAB" --db "$db" monitor -a 0 --policy other --install-unit --unit-dir "$out"
first=$((n + 1)); plant "$out/man/rtlab.1"
case_ "man --dir" "$RTLAB" man --dir "$out/man"
first=$((n + 1)); plant "$out/b.rtlab.part-journal" "$out/b.rtlab.part-wal"
case_ "results export --bundle" "$RTLAB" --db "$db" results export --bundle "$out/b.rtlab"
# One seq and one mkdir: the next process ids are still ahead.
last=$(cat /proc/sys/kernel/ns_last_pid)
first=$((n + 1))
mkdir $(seq -f "$out/tmp/rtlab-bundle-%.0f-b.rtlab.db" $((last + 1)) $((last + 3000)))
case_ "results import --bundle" env TMPDIR="$out/tmp" "$RTLAB" --db "$out/other.db" results import --bundle "$out/b.rtlab"
