// The JSON exports: bench's own (a superset of hyperfine's), and the inputs
// of github-action-benchmark and Bencher.
#include <max_rss/report/export.hpp>

#include <max_rss/bench/provenance.hpp>
#include <max_rss/bench/stats.hpp>
#include <max_rss/report/json_text.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace max_rss {
namespace {

using Json = nlohmann::ordered_json;

Json summary_json(const Summary& summary) {
    Json json;
    json["mean"] = summary.mean;
    json["stddev"] = summary.stddev;
    json["median"] = summary.median;
    json["min"] = summary.min;
    json["max"] = summary.max;
    return json;
}

Json provenance_json(const Provenance& p) {
    Json json;
    json["max_rss_version"] = p.max_rss_version;
    json["date"] = p.date;
    json["kernel"] = to_valid_utf8(p.kernel);
    json["machine"] = to_valid_utf8(p.machine);
    json["cpu_count"] = p.cpu_count;
    json["runs"] = p.runs != 0 ? Json(p.runs) : Json();
    json["min_runs"] = p.min_runs;
    json["max_runs"] = p.max_runs;
    json["warmup"] = p.warmup;
    json["backend"] = p.backend;
    return json;
}

// hyperfine's fields of one result, in its order.
void put_hyperfine_fields(Json& entry, const BenchResult& result) {
    const Summary wall = summarize_wall_seconds(result);
    entry["mean"] = wall.mean;
    entry["stddev"] = result.runs.size() > 1 ? Json(wall.stddev) : Json();
    entry["median"] = wall.median;
    entry["user"] = summarize_user_seconds(result).mean;
    entry["system"] = summarize_system_seconds(result).mean;
    entry["min"] = wall.min;
    entry["max"] = wall.max;
    entry["times"] = Json::array();
    entry["memory_usage_byte"] = Json::array();
    entry["exit_codes"] = Json::array();
    for (const BenchRun& run : result.runs) {
        entry["times"].push_back(run.wall_seconds);
        entry["memory_usage_byte"].push_back(run.peak_bytes);
        entry["exit_codes"].push_back(run.exit_code);
    }
    entry["parameters"] = Json::object();
    for (const auto& [name, value] : result.parameters) entry["parameters"][to_valid_utf8(name)] = to_valid_utf8(value);
}

Json run_json(const BenchRun& run) {
    Json json;
    json["peak_bytes"] = run.peak_bytes;
    json["ru_maxrss_bytes"] = run.ru_maxrss_bytes ? Json(*run.ru_maxrss_bytes) : Json();
    json["exit_code"] = run.exit_code;
    json["wall_seconds"] = run.wall_seconds;
    json["user_seconds"] = run.user_seconds;
    json["system_seconds"] = run.system_seconds;
    json["degraded"] = run.degraded;
    return json;
}

// A figure as the shortest text that reads back exactly.
std::string figure(double value) { return fmt::format("{}", value); }

}  // namespace

std::string export_json(const BenchReport& report) {
    Json root;
    root["schema_version"] = kBenchSchemaVersion;
    root["kind"] = "bench";
    root["provenance"] = provenance_json(report.provenance);
    root["results"] = Json::array();
    for (const BenchResult& result : report.results) {
        Json entry;
        put_text(entry, "command", result.command);
        put_hyperfine_fields(entry, result);
        if (result.name.empty()) {
            entry["name"] = nullptr;
        } else {
            put_text(entry, "name", result.name);
        }
        entry["reference"] = result.reference;
        entry["budget_bytes"] = result.budget_bytes ? Json(*result.budget_bytes) : Json();
        entry["runs"] = Json::array();
        for (const BenchRun& run : result.runs) entry["runs"].push_back(run_json(run));
        entry["peak_bytes"] = summary_json(summarize_peak_bytes(result));
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        entry["ru_maxrss_bytes"] = ru_maxrss ? summary_json(*ru_maxrss) : Json();
        entry["degraded_runs"] = count_degraded_runs(result);
        entry["warnings"] = Json::array();
        for (const std::string& warning : result.warnings) entry["warnings"].push_back(to_valid_utf8(warning));
        root["results"].push_back(std::move(entry));
    }
    return root.dump(2) + "\n";
}

std::string export_github_benchmark(const BenchReport& report) {
    Json entries = Json::array();
    const std::string provenance = describe_provenance(report.provenance);
    for (const BenchResult& result : report.results) {
        const std::string name = to_valid_utf8(display_name(result));
        const Summary peak = summarize_peak_bytes(result);
        const Summary wall = summarize_wall_seconds(result);
        const std::string runs = fmt::format("{} run{}", result.runs.size(), result.runs.size() == 1 ? "" : "s");
        Json memory;
        memory["name"] = name + " peak memory";
        memory["unit"] = "bytes";
        memory["value"] = static_cast<uint64_t>(std::llround(peak.median));
        memory["range"] = "± " + figure(std::round(peak.stddev));
        memory["extra"] = fmt::format("median of {}, min {} … max {}; {}", runs,
                                      format_bytes(static_cast<uint64_t>(peak.min)),
                                      format_bytes(static_cast<uint64_t>(peak.max)), provenance);
        entries.push_back(std::move(memory));
        Json time;
        time["name"] = name + " wall time";
        time["unit"] = "s";
        time["value"] = wall.median;
        time["range"] = "± " + figure(wall.stddev);
        time["extra"] = fmt::format("median of {}, min {:.3f} s … max {:.3f} s; {}", runs, wall.min, wall.max,
                                    provenance);
        entries.push_back(std::move(time));
    }
    return entries.dump(2) + "\n";
}

std::string export_bencher(const BenchReport& report) {
    Json root = Json::object();
    for (const BenchResult& result : report.results) {
        // BMF is keyed by benchmark: a name or command line given twice (two
        // --prepare steps, a parameter left out of -n) gets " #2", " #3"...
        // rather than losing all but its first result.
        const std::string base_name = to_valid_utf8(display_name(result));
        std::string name = base_name;
        for (int n = 2; root.contains(name); ++n) name = base_name + " #" + std::to_string(n);
        const Summary peak = summarize_peak_bytes(result);
        const Summary wall = summarize_wall_seconds(result);
        Json measures;
        measures["peak-memory"] = {{"value", peak.median}, {"lower_value", peak.min}, {"upper_value", peak.max}};
        constexpr double ns = 1e9;
        measures["latency"] = {
            {"value", wall.median * ns}, {"lower_value", wall.min * ns}, {"upper_value", wall.max * ns}};
        root[name] = std::move(measures);
    }
    return root.dump(2) + "\n";
}

}  // namespace max_rss
