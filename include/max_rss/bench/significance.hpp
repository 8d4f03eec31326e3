// Whether two samples differ by more than their spread explains: the
// Mann-Whitney U test (Wilcoxon rank-sum), one-sided. Pure functions.
//
// Chosen over Welch's t-test because per-run peaks are not normal: most runs
// of a deterministic program agree to the page, and an outlier (a late
// page-in, a concurrent child a little early) would inflate a t-test's
// variance. U depends only on the ranks.
#pragma once

#include <optional>
#include <span>

namespace max_rss {

// The one-sided p-value that `after` is stochastically larger than `before`
// (swap the arguments for "smaller"): the probability, were both samples from
// one distribution, of a U statistic at least as large as the one seen.
// Ties get mid-ranks. Exact (every split of the pooled values enumerated)
// while there are at most kExactSplits splits, else the normal approximation
// with tie and continuity corrections. nullopt when a sample is empty.
std::optional<double> mann_whitney_p_greater(std::span<const double> before, std::span<const double> after);

// The smallest p-value mann_whitney_p_greater can give for samples of these
// sizes (1 / C(m + n, m), complete separation). When it is above the
// significance level, no difference can be significant: too few runs.
double mann_whitney_smallest_p(size_t before_count, size_t after_count);

inline constexpr double kExactSplits = 2e5;

}  // namespace max_rss
