#include <max_rss/report/compare.hpp>
#include <max_rss/util/text.hpp>

#include <max_rss/report/json_text.hpp>
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

std::string format_change(double change) { return fmt::format("{:+.1f}%", change * 100.0); }

// A threshold as the user would have typed it: 0.05 -> "+5%", 0.005 -> "+0.5%".
std::string format_threshold(double threshold) {
    // Rounding to 1e-4 percent hides binary noise (0.07 * 100 = 7.000000000000001).
    return fmt::format("+{}%", std::round(threshold * 100.0 * 1e4) / 1e4);
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
    return lines;
}

CompareResult compare_reports(std::span<const MeasuredPeak> base, std::span<const MeasuredPeak> after,
                              double threshold) {
    constexpr size_t unpaired = std::numeric_limits<size_t>::max();
    std::vector<size_t> partner(base.size(), unpaired);  // index into after
    std::vector<bool> after_used(after.size(), false);

    // Commands first, over all entries, so a name match cannot take an entry
    // that a later command would have matched exactly.
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
    pair_by([](const MeasuredPeak& x, const MeasuredPeak& y) { return x.command == y.command; });
    pair_by([](const MeasuredPeak& x, const MeasuredPeak& y) { return !x.name.empty() && x.name == y.name; });

    CompareResult result;
    result.threshold = threshold;
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
        row.regression = row.change > threshold;
        result.any_regression = result.any_regression || row.regression;
        result.rows.push_back(std::move(row));
    }
    for (size_t a = 0; a < after.size(); ++a) {
        if (!after_used[a]) result.only_in_new.push_back(label_of(after[a]));
    }
    return result;
}

std::string format_compare_table(const CompareResult& result) {
    std::string out;
    if (!result.rows.empty()) {
        struct Cells {
            std::string label, before, after, change;
            bool regression;
        };
        std::vector<Cells> table = {{"Command", "Before", "After", "Change", false}};
        for (const CompareRow& row : result.rows) {
            table.push_back({row.label, format_bytes(row.before_bytes), format_bytes(row.after_bytes),
                             format_change(row.change), row.regression});
        }
        size_t label_width = 0, before_width = 0, after_width = 0, change_width = 0;
        for (const Cells& cells : table) {
            label_width = std::max(label_width, display_width(cells.label));
            before_width = std::max(before_width, display_width(cells.before));
            after_width = std::max(after_width, display_width(cells.after));
            change_width = std::max(change_width, display_width(cells.change));
        }
        for (const Cells& cells : table) {
            out += fmt::format("{}  {}  {}  {}{}\n", pad_right(cells.label, label_width),
                               pad_left(cells.before, before_width), pad_left(cells.after, after_width),
                               pad_left(cells.change, change_width), cells.regression ? "  regression" : "");
        }
        out += '\n';
    }

    const auto regressions = std::count_if(result.rows.begin(), result.rows.end(),
                                           [](const CompareRow& row) { return row.regression; });
    const std::string threshold = format_threshold(result.threshold);
    if (regressions == 0) {
        out += fmt::format("No regression above {}.\n", threshold);
    } else {
        out += fmt::format("{} regression{} above {}.\n", regressions, regressions == 1 ? "" : "s", threshold);
    }
    for (const std::string& label : result.only_in_base) out += fmt::format("Only in BASE: {}\n", label);
    for (const std::string& label : result.only_in_new) out += fmt::format("Only in NEW: {}\n", label);
    return out;
}

}  // namespace max_rss
