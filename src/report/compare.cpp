#include <max_rss/report/compare.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/bench/significance.hpp>

#include <max_rss/report/json_text.hpp>
#include <max_rss/report/labels.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/os/standard_fds.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include <fcntl.h>
#include <unistd.h>
#include <functional>
#include <istream>
#include <optional>
#include <utility>
#include <streambuf>

namespace max_rss {
namespace {
const std::string& label_of(const MeasuredPeak& measured) {
    return measured.name.empty() ? measured.command : measured.name;
}

double relative_change(uint64_t before, uint64_t after) {
    if (before == 0) return after == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(before);
}

std::string pad_right(std::string_view text, size_t width) {
    const size_t used = display_width(text);
    return std::string(text) + std::string(width > used ? width - used : 0, ' ');
}

std::string pad_left(std::string_view text, size_t width) {
    const size_t used = display_width(text);
    return std::string(width > used ? width - used : 0, ' ') + std::string(text);
}

// A threshold as the user would have typed it: 0.05 -> "5%", 0.005 -> "0.5%".
std::string format_threshold(double threshold) {
    // Rounding to 1e-4 percent hides binary noise (0.07 * 100 = 7.000000000000001).
    return fmt::format("{}%", std::round(threshold * 100.0 * 1e4) / 1e4);
}

// Judges one pair (see compare_reports()).
void judge(CompareRow& row, const MeasuredPeak& before, const MeasuredPeak& after, const CompareSettings& settings) {
    row.delta_bytes = static_cast<int64_t>(row.after_bytes) - static_cast<int64_t>(row.before_bytes);
    row.before_runs = before.run_peaks_bytes.size();
    row.after_runs = after.run_peaks_bytes.size();
    const bool grew = row.delta_bytes >= 0;
    if (mann_whitney_smallest_p(row.before_runs, row.after_runs) <= settings.significance) {
        row.p_value = grew ? mann_whitney_p_greater(before.run_peaks_bytes, after.run_peaks_bytes)
                           : mann_whitney_p_greater(after.run_peaks_bytes, before.run_peaks_bytes);
    }
    const uint64_t magnitude = static_cast<uint64_t>(grew ? row.delta_bytes : -row.delta_bytes);
    const bool beyond = std::fabs(row.change) > settings.threshold && magnitude >= settings.min_change_bytes &&
                        magnitude > 0;
    if (!beyond) {
        row.verdict = Verdict::Unchanged;
    } else if (row.p_value && *row.p_value > settings.significance) {
        row.verdict = Verdict::Noise;
    } else {
        row.verdict = grew ? Verdict::Regression : Verdict::Improvement;
    }
}

}  // namespace

std::vector<std::string> degraded_warnings(std::span<const MeasuredPeak> peaks, std::string_view source) {
    std::vector<std::string> lines;
    for (const MeasuredPeak& peak : peaks) {
        if (peak.degraded_runs == 0) continue;
        const std::string what = peak.runs > 1 || peak.degraded_runs > 1
                                     ? fmt::format("{} of {} runs degraded", peak.degraded_runs, peak.runs)
                                     : "a degraded run";
        lines.push_back(fmt::format("{}: {}: {} (sampled, not traced): its peak may be low", source,
                                    label_of(peak), what));
    }
    for (const MeasuredPeak& peak : peaks) {
        if (peak.failed_runs == 0) continue;
        const std::string what = peak.runs > 1 || peak.failed_runs > 1
                                     ? fmt::format("{} of {} runs failed", peak.failed_runs, peak.runs)
                                     : "the run failed";
        lines.push_back(fmt::format("{}: {}: {} (exit code not 0): its peak is not that of a program that did its work",
                                    source, label_of(peak), what));
    }
    return lines;
}

std::optional<std::string> backend_warning(std::span<const MeasuredPeak> base, std::string_view base_source,
                                           std::span<const MeasuredPeak> after, std::string_view after_source) {
    // A report is measured by one backend: its first entry's names it.
    const auto backend_of = [](std::span<const MeasuredPeak> peaks) {
        return peaks.empty() ? std::string_view{} : std::string_view(peaks.front().backend);
    };
    const std::string_view before = backend_of(base);
    const std::string_view now = backend_of(after);
    if (before.empty() || now.empty() || before == now) return std::nullopt;
    return fmt::format("{} was measured with --backend {}, {} with --backend {}: the backends measure differently "
                       "(docs/backends.md), so a change may be the backend's, not the program's",
                       base_source, before, after_source, now);
}

std::string_view verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::Unchanged: return "unchanged";
        case Verdict::Regression: return "regression";
        case Verdict::Improvement: return "improvement";
        case Verdict::Noise: return "noise";
    }
    return "unchanged";
}

std::string describe_compare_settings(const CompareSettings& settings) {
    return fmt::format("change above {} and at least {}, p <= {}", format_threshold(settings.threshold),
                       format_bytes(settings.min_change_bytes), settings.significance);
}

CompareResult compare_reports(std::span<const MeasuredPeak> base, std::span<const MeasuredPeak> after,
                              const CompareSettings& settings) {
    constexpr size_t unpaired = std::numeric_limits<size_t>::max();
    std::vector<size_t> partner(base.size(), unpaired);  // index into after
    std::vector<bool> after_used(after.size(), false);

    // Command and name together first: one command benchmarked twice under
    // two names (two --prepare steps, a parameter) pairs by its names,
    // whatever their order. Then commands, over all entries, so a name match
    // cannot take an entry that a later command would have matched exactly;
    // then names.
    const auto pair_by = [&](auto&& same) {
        for (size_t b = 0; b < base.size(); ++b) {
            if (partner[b] != unpaired) continue;
            for (size_t a = 0; a < after.size(); ++a) {
                if (!after_used[a] && same(base[b], after[a])) {
                    partner[b] = a;
                    after_used[a] = true;
                    break;
                }
            }
        }
    };
    pair_by([](const MeasuredPeak& x, const MeasuredPeak& y) { return x.command == y.command && x.name == y.name; });
    pair_by([](const MeasuredPeak& x, const MeasuredPeak& y) { return x.command == y.command; });
    pair_by([](const MeasuredPeak& x, const MeasuredPeak& y) { return !x.name.empty() && x.name == y.name; });

    CompareResult result;
    result.settings = settings;
    for (size_t b = 0; b < base.size(); ++b) {
        if (partner[b] == unpaired) {
            result.only_in_base.push_back(label_of(base[b]));
            continue;
        }
        const MeasuredPeak& next = after[partner[b]];
        CompareRow row;
        row.label = label_of(base[b]);
        row.base_command = base[b].command;
        row.new_command = next.command;
        row.before_bytes = base[b].peak_bytes;
        row.after_bytes = next.peak_bytes;
        row.change = relative_change(row.before_bytes, row.after_bytes);
        judge(row, base[b], next, settings);
        if (row.verdict == Verdict::Regression) ++result.regressions;
        if (row.verdict == Verdict::Improvement) ++result.improvements;
        result.rows.push_back(std::move(row));
    }
    for (size_t a = 0; a < after.size(); ++a) {
        if (!after_used[a]) result.only_in_new.push_back(label_of(after[a]));
    }
    result.failed = result.regressions > 0 || (!settings.allow_missing && !result.only_in_base.empty());
    return result;
}

std::string format_change(double change) { return fmt::format("{:+.1f}%", change * 100.0); }

std::string format_delta_bytes(int64_t delta) {
    const uint64_t magnitude = delta < 0 ? static_cast<uint64_t>(-delta) : static_cast<uint64_t>(delta);
    return (delta < 0 ? "-" : "+") + format_bytes(magnitude);
}

std::string format_p_value(const std::optional<double>& p) { return p ? fmt::format("{:.3f}", *p) : "-"; }

std::string format_compare_verdict(const CompareResult& result) {
    const auto plural = [](size_t count, const char* word) {
        return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
    };
    std::string out;
    if (result.regressions == 0 && result.improvements == 0) {
        out = fmt::format("No regression ({}).", describe_compare_settings(result.settings));
    } else {
        out = fmt::format("{}, {} ({}).", plural(result.regressions, "regression"),
                          plural(result.improvements, "improvement"), describe_compare_settings(result.settings));
    }
    const auto noise = std::count_if(result.rows.begin(), result.rows.end(),
                                     [](const CompareRow& row) { return row.verdict == Verdict::Noise; });
    if (noise > 0) {
        out += fmt::format(" {} within the runs' spread (not significant).",
                           plural(static_cast<size_t>(noise), "change"));
    }
    return out;
}

std::string format_compare_table(const CompareResult& result) {
    std::string out;
    if (!result.rows.empty()) {
        struct Cells {
            std::string label, before, after, change, delta, p;
            std::string_view verdict;
        };
        std::vector<Cells> table = {{"Command", "Before", "After", "Change", "Δ", "p", ""}};
        for (const CompareRow& row : result.rows) {
            table.push_back({one_line(row.label), format_bytes(row.before_bytes), format_bytes(row.after_bytes),
                             format_change(row.change), format_delta_bytes(row.delta_bytes),
                             format_p_value(row.p_value),
                             row.verdict == Verdict::Unchanged ? "" : verdict_name(row.verdict)});
        }
        size_t widths[6] = {};
        for (const Cells& cells : table) {
            const std::string* texts[6] = {&cells.label, &cells.before, &cells.after, &cells.change, &cells.delta, &cells.p};
            for (size_t i = 0; i < 6; ++i) widths[i] = std::max(widths[i], display_width(*texts[i]));
        }
        for (const Cells& cells : table) {
            std::string line = fmt::format("{}  {}  {}  {}  {}  {}", pad_right(cells.label, widths[0]),
                                           pad_left(cells.before, widths[1]), pad_left(cells.after, widths[2]),
                                           pad_left(cells.change, widths[3]), pad_left(cells.delta, widths[4]),
                                           pad_left(cells.p, widths[5]));
            if (!cells.verdict.empty()) line += fmt::format("  {}", cells.verdict);
            out += line + "\n";
        }
        out += '\n';
    }
    out += format_compare_verdict(result) + "\n";
    for (const std::string& label : result.only_in_base) {
        out += fmt::format("Missing from NEW{}: {}\n", result.settings.allow_missing ? " (allowed)" : "", one_line(label));
    }
    for (const std::string& label : result.only_in_new) out += fmt::format("Only in NEW: {}\n", one_line(label));
    return out;
}

}  // namespace max_rss
