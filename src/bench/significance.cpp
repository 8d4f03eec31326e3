#include <max_rss/bench/significance.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace max_rss {
namespace {

// C(n, k) as a double (exact well beyond the sizes enumerated).
double binomial(size_t n, size_t k) {
    k = std::min(k, n - k);
    double result = 1;
    for (size_t i = 1; i <= k; ++i) result = result * static_cast<double>(n - k + i) / static_cast<double>(i);
    return result;
}

// Mid-ranks (1-based) of values, in their order.
std::vector<double> mid_ranks(const std::vector<double>& values) {
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> ranks(values.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
        const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
        for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
        i = j + 1;
    }
    return ranks;
}

// Counts the splits of ranks into a group of size m whose rank sum is at
// least observed (with a little slack for the halves of mid-ranks).
void count_splits(const std::vector<double>& ranks, size_t start, size_t left, double sum, double observed,
                  double& at_least, double& total) {
    if (left == 0) {
        total += 1;
        if (sum >= observed - 1e-9) at_least += 1;
        return;
    }
    for (size_t i = start; i + left <= ranks.size(); ++i) {
        count_splits(ranks, i + 1, left - 1, sum + ranks[i], observed, at_least, total);
    }
}

}  // namespace

double mann_whitney_smallest_p(size_t before_count, size_t after_count) {
    if (before_count == 0 || after_count == 0) return 1.0;
    return 1.0 / binomial(before_count + after_count, after_count);
}

std::optional<double> mann_whitney_p_greater(std::span<const double> before, std::span<const double> after) {
    const size_t m = after.size();
    const size_t n = before.size();
    if (m == 0 || n == 0) return std::nullopt;
    std::vector<double> pooled(after.begin(), after.end());
    pooled.insert(pooled.end(), before.begin(), before.end());
    const std::vector<double> ranks = mid_ranks(pooled);
    const double rank_sum = std::accumulate(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(m), 0.0);

    if (binomial(m + n, m) <= kExactSplits) {
        double at_least = 0;
        double total = 0;
        count_splits(ranks, 0, m, 0.0, rank_sum, at_least, total);
        return at_least / total;
    }
    // Normal approximation of U = R - m(m+1)/2, with the tie correction of
    // its variance and a continuity correction of 0.5.
    const double mm = static_cast<double>(m);
    const double nn = static_cast<double>(n);
    const double big_n = mm + nn;
    const double u = rank_sum - mm * (mm + 1) / 2;
    const double mean = mm * nn / 2;
    std::vector<double> sorted = pooled;
    std::sort(sorted.begin(), sorted.end());
    double ties = 0;
    for (size_t i = 0; i < sorted.size();) {
        size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
        const double t = static_cast<double>(j - i);
        ties += t * t * t - t;
        i = j;
    }
    const double variance = mm * nn / 12 * ((big_n + 1) - ties / (big_n * (big_n - 1)));
    if (variance <= 0) return 1.0;  // every value equal: any split gives this U
    const double z = (u - mean - 0.5) / std::sqrt(variance);
    return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace max_rss
