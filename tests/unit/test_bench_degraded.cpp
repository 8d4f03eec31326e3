// Degraded runs (sampled, not traced) and the tracer's warnings reach bench's
// summary, its exports and compare's stderr.
#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/compare.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/bench/stats.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace max_rss;

namespace {

BenchResult two_of_three_degraded() {
    BenchResult result;
    result.command = "./touch 10";
    result.runs = {BenchRun{100, std::nullopt, 0, 0.5, true}, BenchRun{110, std::nullopt, 1, 0.5, false},
                   BenchRun{90, std::nullopt, 0, 0.5, true}};
    result.warnings = {"PTRACE_SEIZE: Operation not permitted"};
    return result;
}

}  // namespace

TEST_CASE("bench: degraded runs and warnings in the summary", "[bench][degraded]") {
    const BenchResult result = two_of_three_degraded();
    CHECK(count_degraded_runs(result) == 2);
    CHECK(describe_degraded_runs(result) == "2 of 3 runs degraded (sampled, not traced: peaks may be low)");
    CHECK(format_bench_warnings(result, 1) ==
          "  Warning: 2 of 3 runs degraded (sampled, not traced: peaks may be low)\n"
          "  Warning: 1 of 3 runs exited with a non-zero code (ignored: -i)\n"
          "  Warning: PTRACE_SEIZE: Operation not permitted\n");
    BenchResult clean;
    clean.runs = {BenchRun{100, std::nullopt, 0, 0.5}};
    CHECK(describe_degraded_runs(clean).empty());
    CHECK(format_bench_warnings(clean, 0).empty());
}

TEST_CASE("bench exports: a degraded run in JSON, CSV and Markdown, and compare reads it back",
          "[export][degraded]") {
    BenchReport results;
    results.results = {two_of_three_degraded()};
    const std::string exported = export_json(results);
    const auto json = nlohmann::json::parse(exported);
    CHECK(json["results"][0]["degraded_runs"] == 2);
    CHECK(json["results"][0]["runs"][1]["degraded"] == false);
    CHECK(json["results"][0]["warnings"] == nlohmann::json::array({"PTRACE_SEIZE: Operation not permitted"}));
    CHECK(export_csv(results).find(",3,2,") != std::string::npos);
    CHECK(export_csv(results).ends_with(",PTRACE_SEIZE: Operation not permitted\n"));
    CHECK(export_markdown(results).ends_with(
        "\nWarnings:\n\n"
        "- `./touch 10`: 2 of 3 runs degraded (sampled, not traced: peaks may be low)\n"
        "- `./touch 10`: PTRACE_SEIZE: Operation not permitted\n"));

    const auto peaks = parse_report(exported, "NEW.json");
    REQUIRE(peaks.size() == 1);
    CHECK(peaks[0].degraded_runs == 2);
    CHECK(peaks[0].runs == 3);
    CHECK(peaks[0].failed_runs == 1);
    CHECK(degraded_warnings(peaks, "NEW.json") ==
          std::vector<std::string>{
              "NEW.json: ./touch 10: 2 of 3 runs degraded (sampled, not traced): its peak may be low",
              "NEW.json: ./touch 10: 1 of 3 runs failed (exit code not 0): its peak is not that of a program that "
              "did its work"});
}

TEST_CASE("compare: a degraded run report is named, a clean one is not", "[compare][degraded]") {
    const auto degraded = parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5}, "degraded": true})",
        "BASE.json");
    CHECK(degraded_warnings(degraded, "BASE.json") ==
          std::vector<std::string>{"BASE.json: ./x: a degraded run (sampled, not traced): its peak may be low"});
    const auto clean = parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5}, "degraded": false})",
        "BASE.json");
    CHECK(degraded_warnings(clean, "BASE.json").empty());
}

TEST_CASE("compare: runs that failed are named: a crash is not a memory improvement", "[compare][degraded]") {
    // A run report whose command exited 1, one killed by a signal, a clean one.
    const auto failed = parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5},
            "exit": {"code": 1, "signal": null}})",
        "NEW.json");
    CHECK(degraded_warnings(failed, "NEW.json") ==
          std::vector<std::string>{"NEW.json: ./x: the run failed (exit code not 0): its peak is not that of a "
                                   "program that did its work"});
    const auto killed = parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5},
            "exit": {"code": null, "signal": 11}})",
        "NEW.json");
    CHECK(killed[0].failed_runs == 1);
    const auto clean = parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5},
            "exit": {"code": 0, "signal": null}})",
        "NEW.json");
    CHECK(degraded_warnings(clean, "NEW.json").empty());
    // A bench export counts its runs' exit codes.
    const auto bench = parse_report(
        R"({"schema_version": 2, "kind": "bench", "results": [{"command": "./y", "peak_bytes": {"median": 5},
            "runs": [{}, {}, {}], "exit_codes": [0, 1, 139]}]})",
        "NEW.json");
    REQUIRE(bench.size() == 1);
    CHECK(bench[0].failed_runs == 2);
    CHECK(degraded_warnings(bench, "NEW.json") ==
          std::vector<std::string>{"NEW.json: ./y: 2 of 3 runs failed (exit code not 0): its peak is not that of a "
                                   "program that did its work"});
}
