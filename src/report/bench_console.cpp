// The human output of `max_rss bench`, as strings.
#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/labels.hpp>

#include <max_rss/util/size.hpp>
#include <max_rss/bench/stats.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace max_rss {
namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kBoldGreen = "\x1b[1;32m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kCyan = "\x1b[36m";
constexpr std::string_view kMagenta = "\x1b[35m";
constexpr std::string_view kDim = "\x1b[2m";

// text in an ANSI colour; pad before colouring, the codes have no width.
std::string paint(std::string_view text, std::string_view colour, bool color) {
    if (!color || text.empty()) return std::string(text);
    return fmt::format("{}{}{}", colour, text, kReset);
}


// Right-aligns a figure in the statistics columns.
std::string column(double bytes, const ByteUnit& unit) { return fmt::format("{:>10}", format_in_unit(bytes, unit)); }

std::string hms(double seconds) {
    const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    return fmt::format("{:02}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

}  // namespace

std::optional<BenchStyle> parse_bench_style(std::string_view text) {
    if (text == "auto") return BenchStyle::Auto;
    if (text == "basic") return BenchStyle::Basic;
    if (text == "full") return BenchStyle::Full;
    if (text == "nocolor") return BenchStyle::NoColor;
    if (text == "color") return BenchStyle::Color;
    if (text == "none") return BenchStyle::None;
    return std::nullopt;
}

OutputStyle resolve_style(BenchStyle style, bool stderr_is_terminal, bool no_color_set) {
    switch (style) {
        case BenchStyle::Auto:
            if (!stderr_is_terminal) return {true, false, false};
            return {true, true, !no_color_set};
        case BenchStyle::Basic: return {true, false, false};
        case BenchStyle::Full: return {true, true, true};
        case BenchStyle::NoColor: return {true, true, false};
        case BenchStyle::Color: return {true, false, true};
        case BenchStyle::None: return {false, false, false};
    }
    return {};
}

std::string format_bench_header(size_t number, const BenchResult& result, bool color) {
    return fmt::format("{} {}\n", paint(fmt::format("Benchmark {}:", number), kBold, color), one_line(display_name(result)));
}

std::string format_bench_statistics(const BenchResult& result, bool color) {
    if (result.runs.empty()) return {};
    const Summary peak = summarize_peak_bytes(result);
    const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
    const ByteUnit unit = unit_for_bytes(peak.mean);
    const std::string bracket =
        ru_maxrss ? fmt::format("    [ru_maxrss: {}]", paint(format_in_unit(ru_maxrss->mean, unit), kDim, color)) : "";

    const Summary wall = summarize_wall_seconds(result);
    const std::string cpu = paint(fmt::format("[User: {:.3f} s, System: {:.3f} s]", summarize_user_seconds(result).mean,
                                              summarize_system_seconds(result).mean),
                                  kDim, color);
    const auto secs = [](double value) { return fmt::format("{:>10}", fmt::format("{:.3f} s", value)); };
    if (result.runs.size() == 1) {
        return fmt::format("  Peak (abs ≡):      {}{}\n", paint(column(peak.mean, unit), kBoldGreen, color), bracket) +
               fmt::format("  Time (abs ≡):      {}    {}\n", paint(secs(wall.mean), kBoldGreen, color), cpu);
    }
    std::string out;
    out += fmt::format("  Peak ({} ± {}):   {} ± {}{}\n", paint("mean", kBoldGreen, color), paint("σ", kGreen, color),
                       paint(column(peak.mean, unit), kBoldGreen, color), paint(column(peak.stddev, unit), kGreen, color),
                       bracket);
    out += fmt::format("  Range ({} … {}): {} … {}    {}\n", paint("min", kCyan, color), paint("max", kMagenta, color),
                       paint(column(peak.min, unit), kCyan, color), paint(column(peak.max, unit), kMagenta, color),
                       paint(fmt::format("{} runs", result.runs.size()), kDim, color));
    out += fmt::format("  Time ({} ± {}):   {} ± {}    {}\n", paint("mean", kBoldGreen, color), paint("σ", kGreen, color),
                       paint(secs(wall.mean), kBoldGreen, color), paint(secs(wall.stddev), kGreen, color), cpu);
    return out;
}

std::string describe_degraded_runs(const BenchResult& result) {
    const size_t degraded = count_degraded_runs(result);
    if (degraded == 0) return {};
    return fmt::format("{} of {} runs degraded (sampled, not traced: peaks may be low)", degraded,
                       result.runs.size());
}

std::string format_bench_warnings(const BenchResult& result, unsigned failed_runs) {
    std::string out;
    if (const std::string degraded = describe_degraded_runs(result); !degraded.empty()) {
        out += fmt::format("  Warning: {}\n", degraded);
    }
    if (failed_runs > 0) {
        out += fmt::format("  Warning: {} of {} runs exited with a non-zero code (ignored: -i)\n", failed_runs,
                           result.runs.size());
    }
    for (const std::string& warning : result.warnings) out += fmt::format("  Warning: {}\n", warning);
    return out;
}

std::string format_bench_summary(std::span<const BenchResult> results, BenchSort sort, bool color) {
    if (results.size() < 2) return {};
    const auto [peaks, reference] = summarize_peaks(results);
    const std::string reference_name = paint(one_line(display_name(results[reference])), kCyan, color);

    std::string out = paint("Summary", kBold, color) + "\n";
    if (peaks[reference].mean == 0) {
        return out + fmt::format("  no ratios: {}'s peak is 0 B\n", reference_name);
    }
    for (const size_t i : result_order(results, sort, true)) {
        if (i == reference) continue;
        const auto r = ratio(peaks[i], peaks[reference]);
        // Below the reference (only a --reference can be above another), the
        // inverse reads better: "5.02 times less", as hyperfine's "slower".
        const bool less = r->value < 1 && r->value > 0;
        const double value = less ? 1 / r->value : r->value;
        const double stddev = less ? r->stddev / (r->value * r->value) : r->stddev;
        out += fmt::format("  {} used {} ± {} times {} memory than {}\n", paint(one_line(display_name(results[i])), kCyan, color),
                           paint(fmt::format("{:.2f}", value), kBoldGreen, color),
                           paint(fmt::format("{:.2f}", stddev), kGreen, color), less ? "less" : "more",
                           reference_name);
    }
    return out;
}

std::string format_progress_line(const BenchProgress& progress, bool color) {
    constexpr unsigned bar_width = 20;
    const unsigned filled =
        progress.total == 0 ? bar_width : std::min(bar_width, progress.done * bar_width / progress.total);
    std::string bar;
    for (unsigned i = 0; i < filled; ++i) bar += "█";
    std::string rest;
    for (unsigned i = filled; i < bar_width; ++i) rest += "░";

    std::string eta = "--:--:--";
    if (progress.runs_finished > 0) {
        const double per_run = progress.elapsed_seconds / progress.runs_finished;
        eta = hms(per_run * (progress.runs_planned - std::min(progress.runs_planned, progress.runs_finished)));
    }
    std::string line = fmt::format("{:<9} {:>7}  {}{}  ETA {}", progress.warmup ? "Warmup" : "Measuring",
                                   fmt::format("{}/{}", progress.done, progress.total), paint(bar, kCyan, color),
                                   paint(rest, kDim, color), eta);
    if (!progress.warmup && progress.result != nullptr && !progress.result->runs.empty()) {
        line += fmt::format("  estimate: {}", format_bytes(static_cast<uint64_t>(
                                                  std::llround(summarize_peak_bytes(*progress.result).mean))));
    }
    return line;
}

std::string format_budget_violations(std::span<const BenchResult> results) {
    std::string out;
    for (const BenchResult& result : results) {
        if (!result.budget_bytes) continue;
        const uint64_t budget_bytes = *result.budget_bytes;
        const double median = summarize_peak_bytes(result).median;
        if (median <= static_cast<double>(budget_bytes)) continue;
        out += fmt::format("max_rss: over budget: {}: median peak {} exceeds --budget {}\n", one_line(display_name(result)),
                           format_bytes(static_cast<uint64_t>(std::llround(median))), format_bytes(budget_bytes));
    }
    return out;
}

}  // namespace max_rss
