# Each comparison of bench/vs-sysbench.sh across many runs: reads the outputs
# of several runs (or a part of bench/RESULTS.md holding them) and prints, per
# comparison, the runs, the median of the runs' median ratios, their range,
# how many medians lie within the target, and how many runs decided ok or OFF.
# A row whose median of medians lies outside the target across many runs is
# off for a reason; one that is off in a run or two is the machine's noise.
#
# Usage: awk -f bench/rows.awk OUTPUT...
#        sed -n '/^### A/,/^### B/p' bench/RESULTS.md | awk -f bench/rows.awk

# A comparison line: name, sysbench, rtlab, ratio, lo-hi, n, target, verdict
# (the control's three columns may follow).
/^(memory|cpu|threads|mutex|fileio) / {
    for (i = 2; i <= NF; i++)
        if ($i ~ /^[0-9.]+-[0-9.]+$/ && $(i + 1) ~ /^[0-9]+$/ && $(i + 2) ~ /^[0-9.]+-[0-9.]+$/)
            break
    if (i > NF) next
    name = $1
    for (j = 2; j <= i - 4; j++) name = name " " $j
    if (!(name in runs)) order[++rows] = name
    n = ++runs[name]
    ratio[name, n] = $(i - 1)
    split($(i + 2), t, "-")
    lo[name] = t[1]; hi[name] = t[2]
    verdict[name, $(i + 3)]++
}

function median(name, n,    a, i, j, x) {
    for (i = 1; i <= n; i++) a[i] = ratio[name, i]
    for (i = 2; i <= n; i++) {
        x = a[i]
        for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

END {
    printf "%-38s %4s %7s %11s %7s %3s %3s\n", "comparison", "runs", "median", "range", "within", "ok", "OFF"
    for (r = 1; r <= rows; r++) {
        name = order[r]; n = runs[name]
        min = max = ratio[name, 1]; within = 0
        for (i = 1; i <= n; i++) {
            x = ratio[name, i]
            if (x < min) min = x
            if (x > max) max = x
            if (x >= lo[name] && x <= hi[name]) within++
        }
        printf "%-38s %4d %7.3f %11s %3d/%-3d %3d %3d\n", name, n, median(name, n), sprintf("%.3f-%.3f", min, max),
            within, n, verdict[name, "ok"], verdict[name, "OFF"]
    }
}
