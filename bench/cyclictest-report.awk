# The report of bench/vs-cyclictest.sh, from its two files of records
# (needs bench/interval.awk; -v loops=LOOPS -v fixed=FIXED; -v together=1
# when the two runs of each pair ran at once):
#   task-clock: TOOL CONDITION PAIR TASK_CLOCK_MS FIXED_MS, one line per run
#     of perf stat (FIXED_MS: the same options for FIXED wake-ups);
#   results: TOOL CONDITION MIN_US P50_US P99_US MAX_US CPU_NS_PER_SAMPLE
#     RSS_KB FAULTS FAULTS_WHILE_MEASURING MEASURING_KB, one line per run.
# The two runs of a pair are matched by the pair's number, whichever ran first
# (or whether they ran at once).
# The mean task-clock of a tool under a condition ("tool condition"); 0
# without a reading.
function mean_tc(key) { return tn[key] ? tc[key] / tn[key] : 0 }

FILENAME ~ /task-clock$/ {
    # tool condition pair task-clock fixed ($5: a run of FIXED wake-ups; "-"
    # for a reading perf did not give, which is left out)
    key = $1 " " $2
    if ($4 > 0) {
        tn[key]++; tc[key] += $4
        if (!(key in tmin) || $4 < tmin[key]) tmin[key] = $4
        if ($4 > tmax[key]) tmax[key] = $4
    }
    if ($5 > 0) fx[key, ++fn[key]] = $5
    # The two runs of each pair, whichever ran first: a ratio per pair of the
    # whole, and of the cost per wake-up beyond the fixed part.
    whole[$1, $2, $3] = $4
    if ($4 > 0 && $5 > 0) per[$1, $2, $3] = ($4 - $5) / (loops - fixed)
    if ($3 > pairs[$2]) pairs[$2] = $3
    next
}
{ key = $1 " " $2; n[key]++
  min[key] += $3; p50[key] += $4; p99[key] += $5; max[key] += $6; cpu[key] += $7; rss[key] += $8
  flt[key] += $9; meas[key] += $11
  if ($10 == "-") win[key] = "-"; else if (win[key] != "?") win[key] = ($10 == "?") ? "?" : win[key] + $10 }
END {
    # A pair missing a reading (or, per wake-up, with no time beyond the
    # fixed part) gives no ratio.
    for (c in pairs) for (k = 1; k <= pairs[c]; k++) {
        a = whole["cyclictest", c, k]; b = whole["rtlab", c, k]
        if (a > 0 && b > 0) pr[c, ++np[c]] = b / a
        a = per["cyclictest", c, k]; b = per["rtlab", c, k]
        if (a > 0 && b > 0) wr[c, ++nw[c]] = b / a
    }
    printf "%-11s %-7s %7s %7s %7s %8s %13s %7s %8s %11s %14s %11s %14s\n", "tool", "load", "min_us", "p50_us", "p99_us", "max_us", "cpu_ns/sample", "rss_kb", "meas_kb", "proc_faults", "faults_in_loop", "task_ms", "(min-max)"
    split("idle stress", conds, " ")
    for (c = 1; c <= 2; c++) for (t = 1; t <= 2; t++) {
        tool = (t == 1) ? "cyclictest" : "rtlab"; key = tool " " conds[c]
        if (!(key in n)) continue
        printf "%-11s %-7s %7.1f %7.1f %7.1f %8.1f %13.0f %7.0f %8.0f %11.0f %14s %11.1f %14s\n", tool, conds[c], min[key]/n[key], p50[key]/n[key], p99[key]/n[key], max[key]/n[key], cpu[key]/n[key], rss[key]/n[key], meas[key]/n[key], flt[key]/n[key], win[key], mean_tc(key), sprintf("%.1f-%.1f", tmin[key], tmax[key])
    }
    print ""
    printf "%-7s %9s %9s %9s %9s %10s %9s %10s %11s %16s\n", "load", "min", "p50", "p99", "max", "cpu/sample", "rss", "measuring", "task-clock", "(per pair)"
    for (c = 1; c <= 2; c++) {
        a = "cyclictest " conds[c]; b = "rtlab " conds[c]
        if (!(a in n) || !(b in n)) continue
        lo = hi = pr[conds[c], 1]
        for (k = 2; k <= np[conds[c]]; k++) { r = pr[conds[c], k]; if (r < lo) lo = r; if (r > hi) hi = r }
        printf "%-7s %9.2f %9.2f %9.2f %9.2f %10.2f %9.2f %10.2f %11.3f %16s\n", conds[c], min[b]/min[a], p50[b]/p50[a], p99[b]/p99[a], max[b]/max[a], cpu[b]/cpu[a], rss[b]/rss[a], meas[b]/meas[a], (mean_tc(a) > 0) ? mean_tc(b) / mean_tc(a) : 0, sprintf("%.3f-%.3f", lo, hi)
    }
    # The task-clock goal (rtlab at most 1.05x cyclictest), decided on the
    # pairs: the median of the per-pair ratios and its 90% interval
    # (bench/interval.awk).
    for (c = 1; c <= 2; c++) {
        m = np[conds[c]]
        if (m == 0) continue
        for (k = 1; k <= m; k++) v[k] = pr[conds[c], k]
        median_interval(v, m); med = MED; lo = LO; hi = HI
        verdict = (hi <= 1.05) ? "ok" : (lo > 1.05) ? "OFF" : "undecided"
        printf "task-clock %-7s median of %d pairs %.3f, interval %.3f-%.3f (%s): %s against <= 1.05\n", conds[c], m, med, lo, hi, (m >= 5) ? "90%" : "the range: under 5 pairs", verdict
    }
    # Where the task-clock goes: the fixed part of each tool and the ratio
    # per wake-up beyond it (for information; the goal is on the whole).
    for (c = 1; c <= 2; c++) {
        m = nw[conds[c]]
        if (m == 0) continue
        for (t = 1; t <= 2; t++) {
            key = ((t == 1) ? "cyclictest " : "rtlab ") conds[c]
            for (k = 1; k <= fn[key]; k++) v[k] = fx[key, k]
            median_interval(v, fn[key]); f[t] = MED
        }
        for (k = 1; k <= m; k++) v[k] = wr[conds[c], k]
        median_interval(v, m)
        printf "  %-7s fixed (a %d-wake-up run): rtlab %.1f ms, cyclictest %.1f ms; per wake-up beyond it: median %.3f, interval %.3f-%.3f\n", conds[c], fixed, f[2], f[1], MED, LO, HI
    }
    print "(means over the pairs; ratios rtlab / cyclictest, below 1 is better for rtlab; rss: peak;"
    print " meas_kb: VmRSS while measuring; task_ms: task-clock of another run of each, " (together ? "both at once," : "interleaved,")
    print " with its range; proc_faults: minor + major of the whole process; faults_in_loop: total"
    print " over the pairs of the faults the measuring threads took while measuring, as rtlab records them;"
    print " fixed: median task-clock of a " fixed "-wake-up run; per wake-up: (task-clock - fixed) / (loops - " fixed "),"
    print " rtlab / cyclictest per pair, with its 90% interval as above)"
}
