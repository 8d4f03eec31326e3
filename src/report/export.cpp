// The table exports (Markdown, AsciiDoc, CSV) and the dispatch; the JSON
// ones are in export_json.cpp.
#include <max_rss/report/export.hpp>

#include <max_rss/bench/provenance.hpp>
#include <max_rss/bench/stats.hpp>
#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/markdown.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace max_rss {
namespace {

constexpr double bytes_per_mib = 1024.0 * 1024.0;

// text as AsciiDoc literal monospace in a table cell.
std::string asciidoc_literal(std::string_view raw) {
    std::string cell = "`+";
    for (char c : to_valid_utf8(raw)) {
        if (c == '|') cell += '\\';
        cell += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return cell + "+`";
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

std::string seconds(double value) { return fmt::format("{:.3f}", value); }

// The cells of one table row, shared by Markdown and AsciiDoc (the command
// cell is each format's own).
std::vector<std::string> figure_cells(const BenchReport& report, const PeakSummaries& peaks, size_t i) {
    const BenchResult& result = report.results[i];
    const Summary& peak = peaks.peaks[i];
    const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
    const Summary wall = summarize_wall_seconds(result);
    std::string relative = "1.00";
    if (i != peaks.reference) {
        const auto r = ratio(peak, peaks.peaks[peaks.reference]);
        relative = r ? fmt::format("{:.2f} ± {:.2f}", r->value, r->stddev) : "n/a";
    }
    return {fmt::format("{} ± {}", mib(peak.mean), mib(peak.stddev)),
            mib(peak.median),
            mib(peak.min),
            mib(peak.max),
            ru_maxrss ? mib(ru_maxrss->median) : "n/a",
            fmt::format("{} ± {}", seconds(wall.mean), seconds(wall.stddev)),
            relative};
}

const std::vector<std::string> kHeaders = {"Command",        "Peak mean ± σ [MiB]",    "Median [MiB]",
                                           "Min [MiB]",      "Max [MiB]",              "ru_maxrss median [MiB]",
                                           "Wall mean ± σ [s]", "Relative"};

}  // namespace

std::string export_markdown(const BenchReport& report) {
    const std::vector<BenchResult>& results = report.results;
    const PeakSummaries peaks = summarize_peaks(results);

    std::string out = "|";
    std::string rule = "|";
    for (size_t column = 0; column < kHeaders.size(); ++column) {
        out += fmt::format(" {} |", kHeaders[column]);
        rule += column == 0 ? ":---|" : "---:|";
    }
    out += "\n" + rule + "\n";
    for (const size_t i : result_order(results, report.sort, false)) {
        out += fmt::format("| {} |", markdown_code_span(display_name(results[i]), true));
        for (const std::string& cell : figure_cells(report, peaks, i)) out += fmt::format(" {} |", cell);
        out += '\n';
    }
    out += fmt::format("\n_Measured with {}._\n", describe_provenance(report.provenance));
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

std::string export_asciidoc(const BenchReport& report) {
    const std::vector<BenchResult>& results = report.results;
    const PeakSummaries peaks = summarize_peaks(results);
    std::string out = "[cols=\"<";
    for (size_t column = 1; column < kHeaders.size(); ++column) out += ",>";
    out += "\"]\n|===\n";
    for (const std::string& header : kHeaders) out += fmt::format("| {}\n", header);
    for (const size_t i : result_order(results, report.sort, false)) {
        out += fmt::format("\n| {}\n", asciidoc_literal(display_name(results[i])));
        for (const std::string& cell : figure_cells(report, peaks, i)) out += fmt::format("| {}\n", cell);
    }
    out += "|===\n";
    out += fmt::format("\nMeasured with {}.\n", describe_provenance(report.provenance));
    return out;
}

std::string export_csv(const BenchReport& report) {
    std::vector<std::string> parameter_names;
    for (const BenchResult& result : report.results) {
        for (const auto& [name, value] : result.parameters) {
            if (std::find(parameter_names.begin(), parameter_names.end(), name) == parameter_names.end())
                parameter_names.push_back(name);
        }
    }
    std::string out =
        "command,name,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs,"
        "degraded_runs,wall_mean_seconds,wall_stddev_seconds,wall_median_seconds,user_mean_seconds,"
        "system_mean_seconds,";
    for (const std::string& name : parameter_names) out += csv_field("parameter_" + name) + ",";
    out += "max_rss_version,date,kernel,machine,cpu_count,warmup,backend,warnings\n";
    const Provenance& p = report.provenance;
    const std::string provenance = fmt::format("{},{},{},{},{},{},{}", csv_field(p.max_rss_version),
                                               csv_field(p.date), csv_field(p.kernel), csv_field(p.machine),
                                               p.cpu_count, p.warmup, csv_field(p.backend));
    for (const size_t i : result_order(report.results, report.sort, false)) {
        const BenchResult& result = report.results[i];
        const Summary peak = summarize_peak_bytes(result);
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        const Summary wall = summarize_wall_seconds(result);
        std::string warnings;
        for (const std::string& warning : result.warnings) warnings += (warnings.empty() ? "" : "\n") + warning;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", csv_field(result.command),
                           csv_field(result.name), peak.mean, peak.stddev, peak.median, peak.min, peak.max,
                           ru_maxrss ? fmt::format("{}", ru_maxrss->median) : "", result.runs.size(),
                           count_degraded_runs(result), wall.mean, wall.stddev, wall.median,
                           summarize_user_seconds(result).mean, summarize_system_seconds(result).mean);
        for (const std::string& name : parameter_names) {
            const auto it = std::find_if(result.parameters.begin(), result.parameters.end(),
                                         [&](const BenchParameter& parameter) { return parameter.first == name; });
            out += (it == result.parameters.end() ? std::string() : csv_field(it->second)) + ",";
        }
        out += fmt::format("{},{}\n", provenance, csv_field(warnings));
    }
    return out;
}

std::string export_results(ExportFormat format, const BenchReport& report) {
    switch (format) {
        case ExportFormat::Json: return export_json(report);
        case ExportFormat::Markdown: return export_markdown(report);
        case ExportFormat::Csv: return export_csv(report);
        case ExportFormat::Asciidoc: return export_asciidoc(report);
        case ExportFormat::GithubBenchmark: return export_github_benchmark(report);
        case ExportFormat::Bencher: return export_bencher(report);
    }
    throw std::logic_error("export_results: unknown ExportFormat");
}

}  // namespace max_rss
