#include <max_rss/report/export.hpp>

#include <ostream>
#include <streambuf>

#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/json_text.hpp>
#include <max_rss/os/standard_fds.hpp>
#include <max_rss/bench/stats.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>


namespace max_rss {
namespace {

constexpr double bytes_per_mib = 1024.0 * 1024.0;

nlohmann::ordered_json summary_json(const Summary& summary) {
    nlohmann::ordered_json json;
    json["mean"] = summary.mean;
    json["stddev"] = summary.stddev;
    json["median"] = summary.median;
    json["min"] = summary.min;
    json["max"] = summary.max;
    return json;
}

// text as one CommonMark code span, on one line; in_table escapes '|' as GFM
// tables need. Markdown is for reading: bytes that are not UTF-8 become U+FFFD.
std::string markdown_code_span(std::string_view raw, bool in_table) {
    const std::string text = to_valid_utf8(raw);
    std::string content;
    size_t longest_backtick_run = 0;
    size_t run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest_backtick_run = std::max(longest_backtick_run, run);
        // A table row is one line; a command's line breaks cannot survive it.
        content += (c == '\n' || c == '\r') ? ' ' : c;
    }
    if (content.empty()) return {};
    // CommonMark strips one space from each end of a code span when both ends
    // have one, and a backtick at either end would merge with the fence.
    if (content.front() == '`' || content.back() == '`' ||
        (content.front() == ' ' && content.back() == ' ')) {
        content = ' ' + content + ' ';
    }
    const std::string fence(longest_backtick_run + 1, '`');
    std::string cell = fence;
    for (char c : content) {
        // GFM splits cells on '|' even inside code spans unless it is escaped.
        if (c == '|' && in_table) cell += '\\';
        cell += c;
    }
    return cell + fence;
}

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos &&
        (text.empty() || (text.front() != ' ' && text.back() != ' '))) {
        return std::string(text);
    }
    std::string field = "\"";
    for (char c : text) {
        if (c == '"') field += '"';
        field += c;
    }
    return field + '"';
}

std::string mib(double bytes) { return fmt::format("{:.1f}", bytes / bytes_per_mib); }


}  // namespace

std::string export_json(std::span<const BenchResult> results) {
    nlohmann::ordered_json root;
    root["schema_version"] = 1;
    root["kind"] = "bench";
    root["results"] = nlohmann::ordered_json::array();
    for (const BenchResult& result : results) {
        nlohmann::ordered_json entry;
        put_text(entry, "command", result.command);
        if (result.name.empty()) {
            entry["name"] = nullptr;
        } else {
            put_text(entry, "name", result.name);
        }
        entry["runs"] = nlohmann::ordered_json::array();
        for (const BenchRun& run : result.runs) {
            nlohmann::ordered_json run_json;
            run_json["peak_bytes"] = run.peak_bytes;
            run_json["ru_maxrss_bytes"] =
                run.ru_maxrss_bytes ? nlohmann::ordered_json(*run.ru_maxrss_bytes) : nlohmann::ordered_json();
            run_json["exit_code"] = run.exit_code;
            run_json["wall_seconds"] = run.wall_seconds;
            run_json["degraded"] = run.degraded;
            entry["runs"].push_back(std::move(run_json));
        }
        entry["peak_bytes"] = summary_json(summarize_peak_bytes(result));
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        entry["ru_maxrss_bytes"] = ru_maxrss ? summary_json(*ru_maxrss) : nlohmann::ordered_json();
        entry["degraded_runs"] = count_degraded_runs(result);
        entry["warnings"] = nlohmann::ordered_json::array();
        for (const std::string& warning : result.warnings) entry["warnings"].push_back(to_valid_utf8(warning));
        root["results"].push_back(std::move(entry));
    }
    return root.dump(2) + "\n";
}

std::string export_markdown(std::span<const BenchResult> results) {
    const auto [peaks, reference] = summarize_peaks(results);

    std::string out =
        "| Command | Peak mean ± σ [MiB] | Median [MiB] | Min [MiB] | Max [MiB] | ru_maxrss median [MiB] | Relative |\n"
        "|:---|---:|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < results.size(); ++i) {
        const Summary& peak = peaks[i];
        const auto ru_maxrss = summarize_ru_maxrss_bytes(results[i]);
        std::string relative = "1.00";
        if (i != reference) {
            const auto r = ratio(peak, peaks[reference]);
            relative = r ? fmt::format("{:.2f} ± {:.2f}", r->value, r->stddev) : "n/a";
        }
        out += fmt::format("| {} | {} ± {} | {} | {} | {} | {} | {} |\n",
                           markdown_code_span(display_name(results[i]), true), mib(peak.mean), mib(peak.stddev),
                           mib(peak.median), mib(peak.min), mib(peak.max),
                           ru_maxrss ? mib(ru_maxrss->median) : "n/a", relative);
    }
    std::string notes;
    for (const BenchResult& result : results) {
        const std::string name = markdown_code_span(display_name(result), false);
        if (const std::string degraded = describe_degraded_runs(result); !degraded.empty()) {
            notes += fmt::format("- {}: {}\n", name, degraded);
        }
        for (const std::string& warning : result.warnings) {
            std::string line = to_valid_utf8(warning);
            std::replace(line.begin(), line.end(), '\n', ' ');
            notes += fmt::format("- {}: {}\n", name, line);
        }
    }
    if (!notes.empty()) out += "\nWarnings:\n\n" + notes;
    return out;
}

std::string export_csv(std::span<const BenchResult> results) {
    std::string out =
        "command,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs,"
        "degraded_runs,warnings\n";
    for (const BenchResult& result : results) {
        const Summary peak = summarize_peak_bytes(result);
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        std::string warnings;
        for (const std::string& warning : result.warnings) warnings += (warnings.empty() ? "" : "\n") + warning;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_field(result.command), peak.mean, peak.stddev,
                           peak.median, peak.min, peak.max, ru_maxrss ? fmt::format("{}", ru_maxrss->median) : "",
                           result.runs.size(), count_degraded_runs(result), csv_field(warnings));
    }
    return out;
}

std::string export_results(ExportFormat format, std::span<const BenchResult> results) {
    switch (format) {
        case ExportFormat::Json: return export_json(results);
        case ExportFormat::Markdown: return export_markdown(results);
        case ExportFormat::Csv: return export_csv(results);
    }
    throw std::logic_error("export_results: unknown ExportFormat");
}

}  // namespace max_rss
