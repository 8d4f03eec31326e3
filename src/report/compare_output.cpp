// compare's outputs for machines and pull requests: Markdown and JSON.
#include <max_rss/report/compare.hpp>

#include <max_rss/report/json_text.hpp>
#include <max_rss/report/markdown.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace max_rss {
namespace {

// "+2,202,009 B": exact bytes, grouped for reading.
std::string exact_delta(int64_t delta) {
    const uint64_t magnitude = delta < 0 ? static_cast<uint64_t>(-delta) : static_cast<uint64_t>(delta);
    std::string digits = std::to_string(magnitude);
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    return fmt::format("{}{} B", delta < 0 ? "-" : "+", grouped);
}

std::string_view mark(Verdict verdict) {
    switch (verdict) {
        case Verdict::Regression: return "🔴 regression";
        case Verdict::Improvement: return "🟢 improvement";
        case Verdict::Noise: return "noise";
        case Verdict::Unchanged: return "";
    }
    return "";
}

}  // namespace

std::string format_compare_markdown(const CompareResult& result) {
    std::string out = "### max_rss: peak memory\n\n";
    if (!result.rows.empty()) {
        out += "| Benchmark | Before | After | Δ | Change | p | |\n|:---|---:|---:|---:|---:|---:|:---|\n";
        for (const CompareRow& row : result.rows) {
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_code_span(row.label, true),
                               format_bytes(row.before_bytes), format_bytes(row.after_bytes),
                               exact_delta(row.delta_bytes), format_change(row.change), format_p_value(row.p_value),
                               mark(row.verdict));
        }
        out += '\n';
    }
    std::string verdict = format_compare_verdict(result);
    if (result.regressions > 0) verdict = "**" + verdict + "**";
    out += verdict + "\n";
    if (!result.only_in_base.empty()) {
        out += fmt::format("\n{}:\n\n", result.settings.allow_missing ? "Missing from NEW (allowed)"
                                                                      : "**Missing from NEW** (fails; --allow-missing to accept)");
        for (const std::string& label : result.only_in_base) out += fmt::format("- {}\n", markdown_code_span(label, false));
    }
    if (!result.only_in_new.empty()) {
        out += "\nOnly in NEW:\n\n";
        for (const std::string& label : result.only_in_new) out += fmt::format("- {}\n", markdown_code_span(label, false));
    }
    return out;
}

std::string format_compare_json(const CompareResult& result) {
    using Json = nlohmann::ordered_json;
    Json root;
    root["schema_version"] = 1;
    root["kind"] = "compare";
    Json settings;
    settings["threshold"] = result.settings.threshold;
    settings["min_change_bytes"] = result.settings.min_change_bytes;
    settings["significance"] = result.settings.significance;
    settings["test"] = "mann-whitney-u";
    settings["allow_missing"] = result.settings.allow_missing;
    root["settings"] = std::move(settings);
    root["rows"] = Json::array();
    for (const CompareRow& row : result.rows) {
        Json entry;
        put_text(entry, "label", row.label);
        put_text(entry, "base_command", row.base_command);
        put_text(entry, "new_command", row.new_command);
        entry["before_bytes"] = row.before_bytes;
        entry["after_bytes"] = row.after_bytes;
        entry["delta_bytes"] = row.delta_bytes;
        entry["change"] = std::isfinite(row.change) ? Json(row.change) : Json();
        entry["before_runs"] = row.before_runs;
        entry["after_runs"] = row.after_runs;
        entry["p_value"] = row.p_value ? Json(*row.p_value) : Json();
        entry["verdict"] = verdict_name(row.verdict);
        root["rows"].push_back(std::move(entry));
    }
    root["missing"] = Json::array();
    for (const std::string& label : result.only_in_base) root["missing"].push_back(to_valid_utf8(label));
    root["only_in_new"] = Json::array();
    for (const std::string& label : result.only_in_new) root["only_in_new"].push_back(to_valid_utf8(label));
    root["regressions"] = result.regressions;
    root["improvements"] = result.improvements;
    root["failed"] = result.failed;
    return root.dump(2) + "\n";
}

}  // namespace max_rss
