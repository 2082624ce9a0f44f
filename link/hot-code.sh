#!/usr/bin/env bash
# Regenerates link/hot-code.ld: the functions `rtlab latency` runs, in one block.
#
# The kernel maps a file's pages 64 KiB at a time around each page fault
# ("fault-around"), and a probe locks what is mapped. Spread over the 3 MB of
# code, the few hundred KB a latency run executes would map most of the binary;
# gathered into one block they map little more than themselves. build.rs hands
# the linker script to the linker in release builds.
#
# How: the release build is linked once more without the block
# (RTLAB_NO_HOT_CODE=1; the profiler attributes code outside .text to no file)
# and with a link map, which names the input section at every address; the code
# is the release build's own, since `cargo rustc` flags change no symbol. It runs
# under callgrind, first `rtlab latency` as bench/vs-cyclictest.sh runs it (the
# measurement, then the histogram file and the table), then a campaign step that
# saves its run and prints JSON. Every function section that executed is named
# twice: as this build names it, each run's together (precise: other instances
# of a generic function stay out), and then without what changes between builds
# (the hash of a legacy symbol, the crate disambiguators of a v0 one, the .N or
# .llvm.N that LTO appends to local names), which still gathers the code after
# edits, dependency and toolchain updates have renamed it. A function missing
# from both still links, only outside the block. Regenerate after changes to
# what `latency` runs; bench/vs-cyclictest.sh shows the effect (rss ratio).
#
# Usage: link/hot-code.sh   (root: the probe runs at SCHED_FIFO; needs valgrind
#                             and python3 on the development machine, and the
#                             default linker, LLD, whose map it reads)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "needs root (SCHED_FIFO)"; exit 3; }
for t in valgrind python3; do
    command -v "$t" >/dev/null || { echo "missing $t"; exit 3; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR=$PWD/target/hot-code RTLAB_NO_HOT_CODE=1
cargo rustc --release --bin rtlab -q -- -C "link-arg=-Wl,-Map=$work/rtlab.map"
BIN=$CARGO_TARGET_DIR/release/rtlab

profile() { # NAME ARGS...
    local name=$1; shift
    valgrind -q --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$work/$name.cg" "$BIN" "$@" >/dev/null
}
profile 1-latency latency -q -p 90 -i 1ms -l 300 --cpus 0 --histogram-max 10000us \
    --histfile "$work/hist" --no-save
profile 2-step --db "$work/runs.db" __step \
    --params '{"probe": "latency", "interval": "1ms", "loops": 300, "cpus": "0"}' \
    --json --quiet --label hot-code

python3 - "$work" "$BIN" > "$work/hot-code.ld" <<'EOF'
import bisect, glob, os, re, sys

work, binary = sys.argv[1], sys.argv[2]
# Input sections of the link, from LLD's map: "VMA LMA Size Align  file:(section)".
# A function has its own section (.text.NAME); the start-up files (crt1.o, ...)
# have one .text each, named here by their file.
sections = []
for line in open(os.path.join(work, "rtlab.map")):
    m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(\S.*):\((\.text\S*)\)$", line)
    if m and int(m.group(2), 16):
        name = m.group(4)
        if name == ".text":
            name = "*" + os.path.basename(m.group(3)) + "(.text)"
        sections.append((int(m.group(1), 16), int(m.group(2), 16), name))
if not sections:
    sys.exit("no function sections in the link map: is the linker LLD?")
sections.sort()
starts = [s[0] for s in sections]


def executed(profile):
    """The function sections that ran, in address order."""
    ran, obj = set(), None
    for line in open(profile):
        if line.startswith("ob="):
            obj = line[3:].strip()
        elif obj == binary and line.startswith("0x"):
            addr = int(line.split()[0], 16)
            i = bisect.bisect_right(starts, addr) - 1
            if i >= 0 and addr < sections[i][0] + sections[i][1]:
                ran.add(i)
    return [sections[i][2] for i in sorted(ran)]


def exact(section):
    """The pattern of this very function (only the .N that LTO appends to local
    names differs between links of one build)."""
    if section.endswith("(.text)"):
        return section
    name, renamed = re.subn(r"(\.llvm)?\.\d+$", "", section)
    return f"*({name}*)" if renamed else f"*({name})"


def general(section):
    """The pattern of the function in any build: without the hash of a legacy
    symbol or the crate disambiguators of a v0 one (it then also takes the
    function's other instances)."""
    if section.endswith("(.text)"):
        return section
    name = re.sub(r"(\.llvm)?\.\d+$", "*", section)
    name = re.sub(r"17h[0-9a-f]{16}E(\*?)$", "17h*", name)
    return "*(" + re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name) + ")"


# Code a profile can miss: crc32fast (the gzip check of /proc/config.gz) takes an
# AVX2 or AVX-512 path that callgrind's CPU lacks, and a mutex waits only when
# contended.
NATIVE_ONLY = [
    "*(.text._ZN9crc32fast11specialized*)",
    "*(.text.unlikely._RNvMNtNtNtNtCs*_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended)",
]

runs = [(os.path.basename(p)[:-3], executed(p)) for p in sorted(glob.glob(os.path.join(work, "*.cg")))]
seen, blocks = set(), []
for kind, make in (("this build", exact), ("any build", general)):
    for i, (name, sections) in enumerate(runs):
        extra = NATIVE_ONLY if i == 0 and kind == "this build" else []
        lines = [p for p in dict.fromkeys([make(s) for s in sections] + extra) if p not in seen]
        seen.update(lines)
        blocks.append((f"{name}, {kind}", lines))

print("/* The code `rtlab latency` runs, in one block: generated by link/hot-code.sh")
print("   (which says why and how); build.rs passes it to the linker in release")
print("   builds. Do not edit by hand. The functions as this build names them come")
print("   first, each run's together; the same by names that hold in any build")
print("   follow, for the functions that have changed since. */")
print("SECTIONS {")
print("  .text.latency : {")
for name, lines in blocks:
    print(f"    /* {name}: {len(lines)} */")
    for line in lines:
        print(f"    {line}")
print("  }")
print("} INSERT BEFORE .text;")
EOF
mv "$work/hot-code.ld" link/hot-code.ld
echo "link/hot-code.ld: $(grep -c '^    \*' link/hot-code.ld) patterns"
