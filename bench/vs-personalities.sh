#!/usr/bin/env bash
# The drop-in personalities next to the tools they stand in for: each command line
# below runs once with the real tool and once with rtlab invoked through a symlink of
# the same name (made by `rtlab install-links`), with the same arguments. The
# numbers differ; the layout must not. Both outputs are reduced to their shape
# (every number becomes #, runs of blanks one blank, pids and paths dropped) and
# compared line by line. Runs of lines of one shape (histogram rows, one line
# per thread) count once, and so do lists of numbers on one line (the cycles
# of histogram overflows), since how many there are depends on the numbers.
# rtlab's own notes (`rtlab: note: …`, on stderr) and the version in sysbench's
# banner ("using system LuaJIT …" / "using rtlab …") are left out of the shapes.
# Where the tool itself refuses a command line that rtlab accepts (the field
# reports' `cyclictest -n`, which rt-tests 2.x no longer takes), the row says so.
#
# Prints one row per command line: the lines of each side, how many of rtlab's
# shapes match the tool's line at the same place, and "same" when all do. A line
# whose shapes differ is shown (first difference only) below the table.
#
# Usage: bench/vs-personalities.sh [TOOL...]   (default: cyclictest sysbench stress stress-ng)
# Needs: a build of rtlab (RTLAB=path, default target/release/rtlab), the tools
# (Debian: rt-tests sysbench stress stress-ng), root for cyclictest's priorities.
set -uo pipefail
cd "$(dirname "$0")/.."

RTLAB=${RTLAB:-target/release/rtlab}
[[ -x $RTLAB ]] || { echo "no rtlab at $RTLAB (cargo build --release, or RTLAB=…)" >&2; exit 2; }
TOOLS=("$@")
[[ ${#TOOLS[@]} -gt 0 ]] || TOOLS=(cyclictest sysbench stress stress-ng)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/links" "$TMP/work"
"$RTLAB" install-links "$TMP/links" >/dev/null
export RTLAB_NO_STORE=1

# Command lines from the tools' man pages, their own help and common guides,
# kept short (each runs for a second or two).
cyclictest=(
    "-l1000 -m -n -a0 -t1 -p99 -i400 -h1000 -q"
    "-p 30 -t -n -l 1000 -H 1000 --histfile hist"
    "-l1000 -q"
    "-t1 -p80 -i1000 -l500 -q"
    "-S -p90 -i500 -l500 -q"
    "-t2 -p80 -i200 -d100 -l1000 -q"
    "-m -p95 -i100 -l2000 -h200 -q"
    "-p90 -i1000 -D 2s -q"
    "-t1 -p80 -i500 -l500 -N -q"
    "-a -t -p80 -l500 -q"
    "-p80 -l1000 -q --json=out.json"
)
sysbench=(
    "cpu --cpu-max-prime=2000 --time=1 run"
    "cpu --threads=2 --time=1 run"
    "cpu --cpu-max-prime=20000 --events=200 --time=0 run"
    "memory --memory-block-size=1M --memory-total-size=1G --time=1 run"
    "memory --memory-oper=read --memory-access-mode=rnd --time=1 run"
    "threads --threads=4 --thread-yields=100 --thread-locks=2 --time=1 run"
    "mutex --threads=2 --mutex-num=1024 --mutex-locks=1000 --mutex-loops=100 run"
    "cpu --time=2 --report-interval=1 run"
    "cpu --time=1 --histogram run"
    "--test=cpu --cpu-max-prime=2000 --max-time=1 run"
    "--test=threads --num-threads=2 --max-time=1 run"
)
stress=(
    "--cpu 2 --timeout 2s"
    "--cpu 1 --vm 1 --vm-bytes 64M --timeout 2s"
    "-c 2 -t 2"
    "--io 1 --timeout 2s"
    "--cpu 2 --vm 1 --vm-bytes 32M --vm-keep --timeout 2s"
)
stress_ng=(
    "--cpu 2 --timeout 2s"
    "--cpu 2 --timeout 2s --metrics-brief"
    "--cpu 1 --cpu-method int64 --timeout 2s --metrics-brief"
    "--vm 1 --vm-bytes 64M --timeout 2s --metrics-brief"
    "--cpu 2 --cpu-load 50 --timeout 2s"
    "--fork 1 --timeout 2s --metrics-brief"
    "--timer 1 --timeout 2s --metrics-brief"
)

# The shape of a line: numbers, pids and paths dropped, blanks squeezed.
shape() {
    grep -v '^rtlab: note:' | sed -E -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r//g' \
        -e 's/\(using [^)]*\)/(using X)/' -e 's/\( +/(/g' \
        -e 's#/[^ ]*#P#g' -e 's/\[[0-9]+\]/[#]/g' -e 's/\( *[0-9]+\)/(#)/g' \
        -e 's/[-+]?[0-9]+([.,:][0-9]+)*(e[-+]?[0-9]+)?/#/g' -e 's/[[:space:]]+/ /g' -e 's/ $//' |
        sed -E -e 's/\|\**/|*/' -e 's/: (# )*#$/: #/' | uniq
}

printf "%-11s %-62s %6s %6s %6s  %s\n" tool "arguments" "tool" "rtlab" "same" ""
diffs=()
total=0
alike=0
refused=0
for tool in "${TOOLS[@]}"; do
    command -v "$tool" >/dev/null || { echo "$tool: not installed, skipped" >&2; continue; }
    var=${tool//-/_}[@]
    for args in "${!var}"; do
        total=$((total + 1))
        # shellcheck disable=SC2086
        (cd "$TMP/work" && timeout 60 "$tool" $args >"$TMP/a.out" 2>&1)
        ca=$?
        (cd "$TMP/work" && timeout 60 "$TMP/links/$tool" $args >"$TMP/b.out" 2>&1)
        cb=$?
        shape <"$TMP/a.out" | grep -v '^$' >"$TMP/a.shape"
        shape <"$TMP/b.out" | grep -v '^$' >"$TMP/b.shape"
        na=$(wc -l <"$TMP/a.shape")
        nb=$(wc -l <"$TMP/b.shape")
        same=$(paste -d '\n' "$TMP/a.shape" "$TMP/b.shape" | awk 'NR % 2 { a = $0; next } a == $0 { n++ } END { print n + 0 }')
        verdict=""
        if [[ $cb -eq 0 ]] && { [[ $ca -ne 0 ]] || grep -qE 'invalid option|unrecognized option' "$TMP/a.out"; }; then
            verdict="tool refuses (exit $ca); rtlab runs it"
            refused=$((refused + 1))
        elif [[ $na -eq $nb && $same -eq $na ]]; then
            verdict=same
            alike=$((alike + 1))
        else
            first=$(diff "$TMP/a.shape" "$TMP/b.shape" | head -4 | tr '\n' '|')
            diffs+=("$tool $args: $first")
        fi
        printf "%-11s %-62.62s %6d %6d %6d  %s\n" "$tool" "$args" "$na" "$nb" "$same" "$verdict"
        rm -f "$TMP/work/"*
    done
done
echo
echo "$alike of $total command lines print the same layout; $refused the tool itself refuses"
for d in "${diffs[@]}"; do
    echo "  $d"
done
