// Descriptive statistics over repeated measurements, and ratios between them.
// Pure functions.
#pragma once

#include <max_rss/bench/model.hpp>

#include <optional>
#include <span>
#include <vector>

namespace max_rss {

struct Summary {
    double mean = 0;
    double stddev = 0;  // sample standard deviation (n - 1); 0 when n < 2
    double median = 0;  // for an even count, the mean of the middle two
    double min = 0;
    double max = 0;
};

// Summarizes values (in any order). An empty span gives all zeros.
Summary summarize(std::span<const double> values);

// The peak_bytes of every run of result (all zeros when it has no runs).
Summary summarize_peak_bytes(const BenchResult& result);

// How many runs of result were degraded (BenchRun::degraded).
size_t count_degraded_runs(const BenchResult& result);

// The ru_maxrss_bytes of the runs that have one; nullopt when none has.
std::optional<Summary> summarize_ru_maxrss_bytes(const BenchResult& result);

// The wall_seconds, user_seconds and system_seconds of every run of result.
Summary summarize_wall_seconds(const BenchResult& result);
Summary summarize_user_seconds(const BenchResult& result);
Summary summarize_system_seconds(const BenchResult& result);

// summarize_peak_bytes() of each result, and the index of the reference that
// "times more memory" is relative to: the --reference result when there is
// one, else the one with the smallest mean (the first of equals; 0 for no
// results).
struct PeakSummaries {
    std::vector<Summary> peaks;
    size_t reference = 0;
};
PeakSummaries summarize_peaks(std::span<const BenchResult> results);

// Where each result goes (indexes into results) in a table (for_summary
// false) or in the closing summary (true), under sort. Stable: equals keep
// the order the commands were given.
std::vector<size_t> result_order(std::span<const BenchResult> results, BenchSort sort, bool for_summary);

// "A used value ± stddev times the memory of B".
struct Ratio {
    double value = 0;
    double stddev = 0;
};

// numerator.mean / denominator.mean, with the uncertainty propagated from the
// relative errors as hyperfine does for speed-ups:
//   stddev = value * sqrt((σa/a)² + (σb/b)²)
// A zero mean contributes no relative error (its stddev is 0 too for the
// non-negative quantities measured here). nullopt when denominator.mean is 0.
std::optional<Ratio> ratio(const Summary& numerator, const Summary& denominator);

}  // namespace max_rss
