// compare as a CI gate: a real regression fails, noise within the runs'
// spread passes, a deleted benchmark fails, and what it writes for a PR.
#include <max_rss/report/compare.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>
#include "units.hpp"

using max_rss::CompareResult;
using max_rss::CompareSettings;
using max_rss::MeasuredPeak;
using max_rss::Verdict;

namespace {


// A bench result whose runs peaked at mib[i] MiB; its median is what a
// report's peak_bytes.median would be.
MeasuredPeak bench(std::string name, std::vector<double> mib) {
    MeasuredPeak peak;
    peak.command = "./" + name;
    peak.name = name;
    peak.runs = mib.size();
    std::vector<double> sorted = mib;
    std::sort(sorted.begin(), sorted.end());
    peak.peak_bytes = static_cast<uint64_t>(sorted[sorted.size() / 2] * MiB);
    for (double value : mib) peak.run_peaks_bytes.push_back(value * MiB);
    return peak;
}

}  // namespace

TEST_CASE("compare gate: a real regression fails, with its p-value", "[compare][gate]") {
    const std::vector<MeasuredPeak> base = {bench("parse", {100, 100.2, 99.9, 100.1, 100})};
    const std::vector<MeasuredPeak> next = {bench("parse", {110, 110.1, 109.8, 110.3, 110})};
    const CompareResult result = max_rss::compare_reports(base, next, CompareSettings{});
    REQUIRE(result.rows.size() == 1);
    CHECK(result.rows[0].verdict == Verdict::Regression);
    REQUIRE(result.rows[0].p_value);
    CHECK(*result.rows[0].p_value <= 0.05);
    CHECK(result.rows[0].before_runs == 5);
    CHECK(result.failed);
}

TEST_CASE("compare gate: a median shift within the runs' spread is noise, and passes", "[compare][gate]") {
    // Medians 101 -> 110 MiB (+9%, 9 MiB): beyond both thresholds, but the
    // runs of a noisy multi-process command overlap all the way.
    const std::vector<MeasuredPeak> base = {bench("build", {90, 130, 101, 85, 120})};
    const std::vector<MeasuredPeak> next = {bench("build", {110, 95, 125, 88, 112})};
    const CompareResult result = max_rss::compare_reports(base, next, CompareSettings{});
    REQUIRE(result.rows.size() == 1);
    CHECK(result.rows[0].change > 0.05);
    CHECK(result.rows[0].verdict == Verdict::Noise);
    CHECK(*result.rows[0].p_value > 0.05);
    CHECK_FALSE(result.failed);
    CHECK(max_rss::format_compare_table(result).find("1 change within the runs' spread (not significant)") !=
          std::string::npos);
}

TEST_CASE("compare gate: a change below the minimum absolute change passes", "[compare][gate]") {
    // +50% of 1 MiB is 512 KiB: under the 1 MiB default, however significant.
    const std::vector<MeasuredPeak> base = {bench("tiny", {1, 1, 1, 1, 1})};
    const std::vector<MeasuredPeak> next = {bench("tiny", {1.5, 1.5, 1.5, 1.5, 1.5})};
    CHECK(max_rss::compare_reports(base, next, CompareSettings{}).rows[0].verdict == Verdict::Unchanged);
    CompareSettings strict;
    strict.min_change_bytes = 256 * 1024;
    CHECK(max_rss::compare_reports(base, next, strict).rows[0].verdict == Verdict::Regression);
}

TEST_CASE("compare gate: with too few runs for the test, the thresholds decide", "[compare][gate]") {
    // 2 runs against 2 can never reach p <= 0.05 (1/6 at best).
    const std::vector<MeasuredPeak> base = {bench("x", {100, 100})};
    const std::vector<MeasuredPeak> next = {bench("x", {120, 121})};
    const CompareResult result = max_rss::compare_reports(base, next, CompareSettings{});
    CHECK_FALSE(result.rows[0].p_value);
    CHECK(result.rows[0].verdict == Verdict::Regression);
}

TEST_CASE("compare gate: an improvement is marked and does not fail", "[compare][gate]") {
    const std::vector<MeasuredPeak> base = {bench("a", {200, 201, 199, 200, 200})};
    const std::vector<MeasuredPeak> next = {bench("a", {150, 151, 149, 150, 150})};
    const CompareResult result = max_rss::compare_reports(base, next, CompareSettings{});
    CHECK(result.rows[0].verdict == Verdict::Improvement);
    CHECK(result.improvements == 1);
    CHECK_FALSE(result.failed);
}

TEST_CASE("compare gate: a benchmark deleted from NEW fails unless allowed", "[compare][gate]") {
    const std::vector<MeasuredPeak> base = {bench("kept", {10, 10, 10}), bench("deleted", {10, 10, 10})};
    const std::vector<MeasuredPeak> next = {bench("kept", {10, 10, 10})};
    const CompareResult result = max_rss::compare_reports(base, next, CompareSettings{});
    CHECK(result.regressions == 0);
    CHECK(result.only_in_base == std::vector<std::string>{"deleted"});
    CHECK(result.failed);
    CompareSettings allowed;
    allowed.allow_missing = true;
    CHECK_FALSE(max_rss::compare_reports(base, next, allowed).failed);
}

TEST_CASE("compare gate: Markdown for a pull request, byte deltas and marks", "[compare][gate]") {
    const std::vector<MeasuredPeak> base = {bench("grew", {100, 100, 100, 100, 100}),
                                            bench("shrank", {200, 200, 200, 200, 200}),
                                            bench("same", {5, 5, 5, 5, 5}), bench("gone", {1, 1, 1})};
    const std::vector<MeasuredPeak> next = {bench("grew", {110, 110, 110, 110, 110}),
                                            bench("shrank", {100, 100, 100, 100, 100}),
                                            bench("same", {5, 5, 5, 5, 5}), bench("new|one", {1, 1, 1})};
    CHECK(max_rss::format_compare_markdown(max_rss::compare_reports(base, next, CompareSettings{})) ==
          "### max_rss: peak memory\n"
          "\n"
          "| Benchmark | Before | After | Δ | Change | p | |\n"
          "|:---|---:|---:|---:|---:|---:|:---|\n"
          "| `grew` | 100.0 MiB | 110.0 MiB | +10,485,760 B | +10.0% | 0.004 | 🔴 regression |\n"
          "| `shrank` | 200.0 MiB | 100.0 MiB | -104,857,600 B | -50.0% | 0.004 | 🟢 improvement |\n"
          "| `same` | 5.0 MiB | 5.0 MiB | +0 B | +0.0% | 1.000 |  |\n"
          "\n"
          "**1 regression, 1 improvement (change above 5% and at least 1.0 MiB, p <= 0.05).**\n"
          "\n"
          "**Missing from NEW** (fails; --allow-missing to accept):\n"
          "\n"
          "- `gone`\n"
          "\n"
          "Only in NEW:\n"
          "\n"
          "- `new|one`\n");
}

TEST_CASE("compare gate: JSON for machines", "[compare][gate]") {
    const std::vector<MeasuredPeak> base = {bench("grew", {100, 100, 100, 100, 100}), bench("gone", {1})};
    const std::vector<MeasuredPeak> next = {bench("grew", {110, 110, 110, 110, 110})};
    const auto json = nlohmann::json::parse(
        max_rss::format_compare_json(max_rss::compare_reports(base, next, CompareSettings{})));
    CHECK(json["kind"] == "compare");
    CHECK(json["settings"]["test"] == "mann-whitney-u");
    CHECK(json["settings"]["min_change_bytes"] == MiB);
    REQUIRE(json["rows"].size() == 1);
    CHECK(json["rows"][0]["delta_bytes"] == 10 * MiB);
    CHECK(json["rows"][0]["verdict"] == "regression");
    CHECK(json["rows"][0]["p_value"].get<double>() == Approx(1.0 / 252));
    CHECK(json["missing"] == nlohmann::json::array({"gone"}));
    CHECK(json["regressions"] == 1);
    CHECK(json["failed"] == true);
}
