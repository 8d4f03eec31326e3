#include <max_rss/bench/stats.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace max_rss {

Summary summarize(std::span<const double> values) {
    Summary summary;
    const size_t count = values.size();
    if (count == 0) return summary;

    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    summary.min = sorted.front();
    summary.max = sorted.back();
    summary.median = count % 2 == 1 ? sorted[count / 2]
                                    : (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0;
    summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(count);
    if (count >= 2) {
        double squares = 0;
        for (double value : sorted) squares += (value - summary.mean) * (value - summary.mean);
        summary.stddev = std::sqrt(squares / static_cast<double>(count - 1));
    }
    return summary;
}

Summary summarize_peak_bytes(const BenchResult& result) {
    std::vector<double> values;
    values.reserve(result.runs.size());
    for (const BenchRun& run : result.runs) values.push_back(static_cast<double>(run.peak_bytes));
    return summarize(values);
}

namespace {

template <typename Field>
Summary summarize_runs(const BenchResult& result, Field field) {
    std::vector<double> values;
    values.reserve(result.runs.size());
    for (const BenchRun& run : result.runs) values.push_back(field(run));
    return summarize(values);
}

}  // namespace

Summary summarize_wall_seconds(const BenchResult& result) {
    return summarize_runs(result, [](const BenchRun& run) { return run.wall_seconds; });
}

Summary summarize_user_seconds(const BenchResult& result) {
    return summarize_runs(result, [](const BenchRun& run) { return run.user_seconds; });
}

Summary summarize_system_seconds(const BenchResult& result) {
    return summarize_runs(result, [](const BenchRun& run) { return run.system_seconds; });
}

size_t count_degraded_runs(const BenchResult& result) {
    return static_cast<size_t>(
        std::count_if(result.runs.begin(), result.runs.end(), [](const BenchRun& run) { return run.degraded; }));
}

std::optional<Summary> summarize_ru_maxrss_bytes(const BenchResult& result) {
    std::vector<double> values;
    for (const BenchRun& run : result.runs) {
        if (run.ru_maxrss_bytes) values.push_back(static_cast<double>(*run.ru_maxrss_bytes));
    }
    if (values.empty()) return std::nullopt;
    return summarize(values);
}

namespace {

double relative_error(const Summary& summary) {
    return summary.mean == 0 ? 0.0 : summary.stddev / summary.mean;
}

}  // namespace

std::optional<Ratio> ratio(const Summary& numerator, const Summary& denominator) {
    if (denominator.mean == 0) return std::nullopt;
    Ratio result;
    result.value = numerator.mean / denominator.mean;
    result.stddev = result.value * std::hypot(relative_error(numerator), relative_error(denominator));
    return result;
}

PeakSummaries summarize_peaks(std::span<const BenchResult> results) {
    PeakSummaries out;
    out.peaks.reserve(results.size());
    for (const BenchResult& result : results) out.peaks.push_back(summarize_peak_bytes(result));
    for (size_t i = 1; i < out.peaks.size(); ++i) {
        if (out.peaks[i].mean < out.peaks[out.reference].mean) out.reference = i;
    }
    for (size_t i = 0; i < results.size(); ++i) {
        if (results[i].reference) {
            out.reference = i;
            break;
        }
    }
    return out;
}

std::vector<size_t> result_order(std::span<const BenchResult> results, BenchSort sort, bool for_summary) {
    std::vector<size_t> order(results.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (sort == BenchSort::Command || (sort == BenchSort::Auto && !for_summary)) return order;
    std::vector<double> keys;
    for (const BenchResult& result : results) {
        keys.push_back(sort == BenchSort::MeanTime ? summarize_wall_seconds(result).mean
                                                   : summarize_peak_bytes(result).mean);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    return order;
}

}  // namespace max_rss
