// What compare refuses to read: unknown versions, deep nesting, too many
// values; and what it skips as it reads (processes, timeline, run fields).
#include <max_rss/report/compare.hpp>

#include <catch2/catch.hpp>

#include <string>
#include "../e2e/helpers.hpp"

using max_rss::ReportError;

using max_rss::test::report_error_of;

namespace {


}  // namespace

TEST_CASE("compare: nesting beyond 64 levels is refused, even where it would be skipped", "[compare]") {
    const std::string deep = std::string(64, '[') + std::string(64, ']');
    CHECK(report_error_of(deep) == "BASE.json: not a max_rss report (not a JSON object)");  // 64 levels: parsed
    CHECK(report_error_of("[" + deep + "]") == "BASE.json: not a max_rss report (nested more than 64 levels deep)");
    CHECK(report_error_of(R"({"processes": )" + std::string(100, '[')) ==
          "BASE.json: not a max_rss report (nested more than 64 levels deep)");
}

TEST_CASE("compare: a number beyond a double is refused in one short line", "[compare]") {
    // nlohmann's out_of_range (exit 125 before, its message the whole number).
    CHECK(report_error_of(R"({"memory_usage_byte": [1e400]})") ==
          "BASE.json: not a max_rss report (a number too large for a double)");
    CHECK(report_error_of(R"({"peak": {"tree_bytes": 1)" + std::string(100000, '0') + "}}") ==
          "BASE.json: not a max_rss report (a number too large for a double)");
}

TEST_CASE("compare: at most a million values are kept, skipped ones do not count", "[compare]") {
    std::string words;
    for (int i = 0; i < 1'000'000; ++i) words += "\"w\",";
    const std::string head = R"({"schema_version": 1, "kind": "run", )";
    const std::string tail = R"("command": ["x"], "peak": {"tree_bytes": 7}})";
    CHECK(report_error_of(head + R"("extra": [)" + words + "1], " + tail) ==
          "BASE.json: not a max_rss report (more than 1000000 values)");
    // The same count in the processes and the timeline is never kept.
    const auto peaks = max_rss::parse_report(
        head + R"("processes": [)" + words + R"(1], "timeline": [)" + words + "1], " + tail, "BASE.json");
    REQUIRE(peaks.size() == 1);
    CHECK(peaks[0].peak_bytes == 7);
}

TEST_CASE("compare: a bench export's runs are counted, their fields skipped", "[compare]") {
    const auto peaks = max_rss::parse_report(R"({"schema_version": 1, "kind": "bench", "results": [
        {"command": "./a", "runs": [{"peak_bytes": 1, "degraded": true}, {"peak_bytes": 2, "degraded": true}],
         "peak_bytes": {"median": 2.0}, "degraded_runs": 2}]})",
                                             "BASE.json");
    REQUIRE(peaks.size() == 1);
    CHECK(peaks[0].runs == 2);
    CHECK(peaks[0].degraded_runs == 2);
    CHECK(peaks[0].peak_bytes == 2);
}
