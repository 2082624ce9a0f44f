# Shared by the bench scripts: the median of a sample and an interval that
# holds it with at least 90% confidence, from the order statistics alone (no
# assumption on the distribution).
#
# median_interval(v, n) sorts v[1..n] in place and sets MED (the median), LO
# and HI (values k and n+1-k in order, k the largest with
# 2 P(Binomial(n, 1/2) < k) <= 0.10; with fewer than 5 values no k qualifies,
# and LO and HI are the extremes, which hold the median with less).
function median_interval(v, n,    i, j, x, k, c, cum) {
    for (i = 2; i <= n; i++) {
        x = v[i]
        for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]
        v[j + 1] = x
    }
    MED = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    k = 1; c = 1; cum = 0
    for (j = 0; j < n; j++) {
        if (j > 0) c = c * (n - j + 1) / j
        cum += c / 2 ^ n
        if (2 * cum > 0.10) break
        k = j + 1
    }
    LO = v[k]; HI = v[n + 1 - k]
}
