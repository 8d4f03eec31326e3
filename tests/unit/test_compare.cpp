#include <max_rss/report/compare.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>
#include "units.hpp"
#include "../e2e/helpers.hpp"

using max_rss::CompareResult;
using max_rss::Verdict;
using max_rss::MeasuredPeak;
using max_rss::ReportError;

using max_rss::test::report_error_of;

namespace {


const char* const run_report = R"({
  "schema_version": 1,
  "kind": "run",
  "command": ["sh", "-c", "echo it's here", "--flag=a,b"],
  "exit": {"code": 0},
  "peak": {"tree_bytes": 1048576, "method": "sum"}
})";

const char* const bench_report = R"({
  "schema_version": 1,
  "kind": "bench",
  "results": [
    {"command": "./a", "name": null, "runs": [], "peak_bytes": {"mean": 10.0, "median": 100.0}},
    {"command": "./b", "name": "bee", "peak_bytes": {"median": 200.5}},
    {"command": "./c", "peak_bytes": {"median": 300}}
  ]
})";


MeasuredPeak peak(std::string command, uint64_t bytes, std::string name = {}) {
    return MeasuredPeak{std::move(command), std::move(name), bytes};
}

// A relative threshold alone: no minimum change (these tests use bytes).
max_rss::CompareSettings above(double threshold) {
    max_rss::CompareSettings settings;
    settings.threshold = threshold;
    settings.min_change_bytes = 0;
    return settings;
}

}  // namespace

TEST_CASE("shell_join quotes only the words that need it", "[compare]") {
    using V = std::vector<std::string>;
    CHECK(max_rss::shell_join(V{"sleep", "1"}) == "sleep 1");
    CHECK(max_rss::shell_join(V{"./a.out", "--size=10M", "a,b:c@d%e+f"}) == "./a.out --size=10M a,b:c@d%e+f");
    CHECK(max_rss::shell_join(V{"sh", "-c", "echo hi"}) == "sh -c 'echo hi'");
    CHECK(max_rss::shell_join(V{"echo", "it's"}) == "echo 'it'\\''s'");
    CHECK(max_rss::shell_join(V{"echo", ""}) == "echo ''");
    CHECK(max_rss::shell_join(V{"echo", "$HOME", "*", "a;b"}) == "echo '$HOME' '*' 'a;b'");
    CHECK(max_rss::shell_join(V{}).empty());
}

TEST_CASE("parse_report: a run report is one command", "[compare]") {
    const auto peaks = max_rss::parse_report(run_report, "run.json");
    REQUIRE(peaks.size() == 1);
    CHECK(peaks[0].command == "sh -c 'echo it'\\''s here' --flag=a,b");
    CHECK(peaks[0].name.empty());
    CHECK(peaks[0].peak_bytes == MiB);
}

TEST_CASE("parse_report: a bench report is one command per result", "[compare]") {
    const auto peaks = max_rss::parse_report(bench_report, "bench.json");
    REQUIRE(peaks.size() == 3);
    CHECK(peaks[0].command == "./a");
    CHECK(peaks[0].name.empty());
    CHECK(peaks[0].peak_bytes == 100);  // the median, not the mean
    CHECK(peaks[1].name == "bee");
    CHECK(peaks[1].peak_bytes == 201);  // rounded to a whole byte
    CHECK(peaks[2].peak_bytes == 300);
}

TEST_CASE("parse_report: error messages", "[compare]") {
    CHECK(report_error_of("[1, 2]") == "BASE.json: not a max_rss report (not a JSON object)");
    CHECK(report_error_of("{}") == "BASE.json: not a max_rss report (no \"kind\")");
    CHECK(report_error_of(R"({"kind": 3})") == "BASE.json: not a max_rss report (\"kind\" is not a string)");
    CHECK(report_error_of(R"({"kind": "foo"})") == "BASE.json: unknown report kind \"foo\" (expected \"run\" or \"bench\")");

    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report has no \"command\" array of strings");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": "ls", "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report has no \"command\" array of strings");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls", 1], "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report has no \"command\" array of strings");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": [], "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report has no \"command\" array of strings");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"]})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": {"tree_bytes": -1}})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    // 2^63 bytes and more: beyond any machine, and beyond compare's signed
    // differences (an 18446744073709551615 once compared as an improvement).
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": {"tree_bytes": 18446744073709551615}})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": {"tree_bytes": 9223372036854775808}})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": {"tree_bytes": 9.3e18}})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": {"tree_bytes": "1"}})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "run", "command": ["ls"], "peak": 5})") ==
          "BASE.json: run report has no \"peak.tree_bytes\" byte count");

    CHECK(report_error_of(R"({"kind": "bench", "schema_version": 3, "results": []})") ==
          "BASE.json: bench report schema_version 3 is newer than this max_rss supports (1 to 2)");
    CHECK(report_error_of(R"({"kind": "bench", "schema_version": 2, "results": [{"command": "a", "peak_bytes": {"median": 1},
                                                                           "memory_usage_byte": [1, "x"]}]})") ==
          "BASE.json: results[0] has a \"memory_usage_byte\" entry that is not a byte count");
    CHECK(report_error_of(R"({"kind": "run", "schema_version": 2, "command": ["ls"], "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report schema_version 2 is newer than this max_rss supports (1)");
    CHECK(report_error_of(R"({"kind": "run", "command": ["ls"], "peak": {"tree_bytes": 1}})") ==
          "BASE.json: not a max_rss report (no \"schema_version\")");
    CHECK(report_error_of(R"({"kind": "run", "schema_version": "1", "command": ["ls"], "peak": {"tree_bytes": 1}})") ==
          "BASE.json: run report has an unknown schema_version \"1\" (this max_rss reads 1)");
    CHECK(report_error_of(R"({"kind": "bench", "schema_version": 0, "results": []})") ==
          "BASE.json: bench report has an unknown schema_version 0 (this max_rss reads 1 to 2)");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench"})") == "BASE.json: bench report has no \"results\" array");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": {}})") == "BASE.json: bench report has no \"results\" array");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": [{"command": "a", "peak_bytes": {"median": 1}}, {}]})") ==
          "BASE.json: results[1] has no \"command\" string");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": [{"command": "a", "name": 1, "peak_bytes": {"median": 1}}]})") ==
          "BASE.json: results[0] has a \"name\" that is not a string");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": [{"command": "a", "peak_bytes": {"mean": 1}}]})") ==
          "BASE.json: results[0] has no \"peak_bytes.median\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": [{"command": "a", "peak_bytes": {"median": -3.5}}]})") ==
          "BASE.json: results[0] has no \"peak_bytes.median\" byte count");
    CHECK(report_error_of(R"({"schema_version": 1, "kind": "bench", "results": [{"command": "a", "peak_bytes": {"median": 1e30}}]})") ==
          "BASE.json: results[0] has no \"peak_bytes.median\" byte count");
}

TEST_CASE("parse_report: invalid JSON is one line naming the file", "[compare]") {
    CHECK(report_error_of("") ==
          "BASE.json: not valid JSON: parse error at line 1, column 1: syntax error while parsing value - "
          "unexpected end of input; expected '[', '{', or a literal");
    CHECK(report_error_of("{\n\"kind\": }") ==
          "BASE.json: not valid JSON: parse error at line 2, column 9: syntax error while parsing value - "
          "unexpected '}'; expected '[', '{', or a literal");
}

TEST_CASE("load_report reads a file and names it in errors", "[compare]") {
    char name[] = "/tmp/max_rss_compare_XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    std::ofstream(name) << run_report;
    const auto peaks = max_rss::load_report(name);
    REQUIRE(peaks.size() == 1);
    CHECK(peaks[0].peak_bytes == MiB);

    std::ofstream(name) << "{}";
    CHECK_THROWS_WITH(max_rss::load_report(name), std::string(name) + ": not a max_rss report (no \"kind\")");
    ::unlink(name);
    CHECK_THROWS_WITH(max_rss::load_report(name), std::string(name) + ": cannot read: No such file or directory");
    CHECK_THROWS_WITH(max_rss::load_report("/tmp"), "/tmp: cannot read: Is a directory");
}

TEST_CASE("compare_reports: change and threshold", "[compare]") {
    const std::vector<MeasuredPeak> base = {peak("grow", 100 * MiB), peak("edge", 100), peak("shrink", 200)};
    const std::vector<MeasuredPeak> next = {peak("shrink", 100), peak("grow", 110 * MiB), peak("edge", 105)};
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 3);
    CHECK(result.rows[0].label == "grow");  // BASE's order
    CHECK(result.rows[0].before_bytes == 100 * MiB);
    CHECK(result.rows[0].after_bytes == 110 * MiB);
    CHECK(result.rows[0].delta_bytes == 10 * static_cast<int64_t>(MiB));
    CHECK(result.rows[0].change == Approx(0.10));
    CHECK(result.rows[0].verdict == Verdict::Regression);
    CHECK(result.rows[1].change == Approx(0.05));
    CHECK(result.rows[1].verdict == Verdict::Unchanged);  // exactly at the threshold is not above it
    CHECK(result.rows[2].change == Approx(-0.5));
    CHECK(result.rows[2].delta_bytes == -100);
    CHECK(result.rows[2].verdict == Verdict::Improvement);
    CHECK(result.regressions == 1);
    CHECK(result.improvements == 1);
    CHECK(result.failed);
    CHECK(result.settings.threshold == 0.05);
    CHECK(result.only_in_base.empty());
    CHECK(result.only_in_new.empty());

    CHECK_FALSE(max_rss::compare_reports(base, next, above(0.2)).failed);
}

TEST_CASE("compare_reports: zero before", "[compare]") {
    const std::vector<MeasuredPeak> base = {peak("a", 0), peak("b", 0)};
    const std::vector<MeasuredPeak> next = {peak("a", 0), peak("b", 1)};
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 2);
    CHECK(result.rows[0].change == 0);
    CHECK(result.rows[0].verdict == Verdict::Unchanged);
    CHECK(std::isinf(result.rows[1].change));
    CHECK(result.rows[1].verdict == Verdict::Regression);
}

TEST_CASE("compare_reports: pairs by command, then by name", "[compare]") {
    const std::vector<MeasuredPeak> base = {
        peak("./old --fast", 100, "fast"),  // command changed, name kept
        peak("./same", 100, "same"),
        peak("./gone", 100),
        peak("./twice", 100),
        peak("./twice", 200),
    };
    const std::vector<MeasuredPeak> next = {
        peak("./same", 100, "renamed"),   // the command wins over the name
        peak("./new --fast", 100, "fast"),
        peak("./twice", 300),
        peak("./twice", 400),
        peak("./added", 100, "added"),
    };
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 4);
    CHECK(result.rows[0].label == "fast");
    CHECK(result.rows[0].base_command == "./old --fast");
    CHECK(result.rows[0].new_command == "./new --fast");
    CHECK(result.rows[1].label == "same");
    CHECK(result.rows[1].new_command == "./same");
    CHECK(result.rows[2].after_bytes == 300);  // repeated commands pair in order
    CHECK(result.rows[3].after_bytes == 400);
    CHECK(result.only_in_base == std::vector<std::string>{"./gone"});
    CHECK(result.only_in_new == std::vector<std::string>{"added"});
}

TEST_CASE("compare_reports: a name never steals an exact command match", "[compare]") {
    // Without two passes, base[0] would take next[0] by name and leave base[1] unpaired.
    const std::vector<MeasuredPeak> base = {peak("./x", 1, "n"), peak("./y", 2)};
    const std::vector<MeasuredPeak> next = {peak("./y", 2, "n"), peak("./z", 3, "n")};
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 2);
    CHECK(result.rows[0].new_command == "./z");
    CHECK(result.rows[1].new_command == "./y");
}

TEST_CASE("compare_reports: a run report against a bench export", "[compare]") {
    const auto base = max_rss::parse_report(R"({"schema_version": 1, "kind": "run", "command": ["sh", "-c", "sleep 1"],
                                                "peak": {"tree_bytes": 1000}})",
                                            "BASE.json");
    const auto next = max_rss::parse_report(R"({"kind": "bench", "schema_version": 1, "results": [
                                                {"command": "sh -c 'sleep 1'", "peak_bytes": {"median": 1100.0}}]})",
                                            "NEW.json");
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 1);
    CHECK(result.rows[0].change == Approx(0.1));
    CHECK_FALSE(result.rows[0].p_value);  // one run: not testable, the thresholds decide
    CHECK(result.failed);
}

TEST_CASE("compare_reports: one command under two names pairs by its names, whatever their order", "[compare]") {
    // bench -n small --prepare ... CMD -n large --prepare ... CMD, listed the
    // other way round in NEW: paired by position, it read +128% and -56%.
    const std::vector<MeasuredPeak> base = {peak("./tool", 100, "small"), peak("./tool", 200, "large")};
    const std::vector<MeasuredPeak> next = {peak("./tool", 200, "large"), peak("./tool", 100, "small")};
    const CompareResult result = max_rss::compare_reports(base, next, above(0.05));
    REQUIRE(result.rows.size() == 2);
    CHECK(result.rows[0].label == "small");
    CHECK(result.rows[0].after_bytes == 100);
    CHECK(result.rows[1].label == "large");
    CHECK(result.rows[1].after_bytes == 200);
    CHECK_FALSE(result.failed);
}

TEST_CASE("format_compare_table: aligned columns, verdict, unpaired commands", "[compare]") {
    const std::vector<MeasuredPeak> base = {peak("sleep 1", MiB), peak("true", 512), peak("./gone", 1),
                                            peak("python3 big.py", 3 * MiB / 2)};
    const std::vector<MeasuredPeak> next = {peak("sleep 1", 11 * MiB / 10), peak("true", 512),
                                            peak("python3 big.py", MiB), peak("./new", 1)};
    CHECK(max_rss::format_compare_table(max_rss::compare_reports(base, next, above(0.05))) ==
          "Command          Before    After  Change           Δ  p\n"
          "sleep 1         1.0 MiB  1.1 MiB  +10.0%  +102.4 KiB  -  regression\n"
          "true              512 B    512 B   +0.0%        +0 B  -\n"
          "python3 big.py  1.5 MiB  1.0 MiB  -33.3%  -512.0 KiB  -  improvement\n"
          "\n"
          "1 regression, 1 improvement (change above 5% and at least 0 B, p <= 0.05).\n"
          "Missing from NEW: ./gone\n"
          "Only in NEW: ./new\n");
}

TEST_CASE("format_compare_table: no regression, several regressions, no pairs", "[compare]") {
    const std::vector<MeasuredPeak> base = {peak("a", 100), peak("b", 100)};
    CHECK(max_rss::format_compare_table(max_rss::compare_reports(base, base, above(0.005))) ==
          "Command  Before  After  Change     Δ  p\n"
          "a         100 B  100 B   +0.0%  +0 B  -\n"
          "b         100 B  100 B   +0.0%  +0 B  -\n"
          "\n"
          "No regression (change above 0.5% and at least 0 B, p <= 0.05).\n");

    const std::vector<MeasuredPeak> bigger = {peak("a", 200), peak("b", 0)};
    const std::vector<MeasuredPeak> grown = {peak("a", 300), peak("b", 7)};
    CHECK(max_rss::format_compare_table(max_rss::compare_reports(bigger, grown, above(0.07))) ==
          "Command  Before  After  Change       Δ  p\n"
          "a         200 B  300 B  +50.0%  +100 B  -  regression\n"
          "b           0 B    7 B   +inf%    +7 B  -  regression\n"
          "\n"
          "2 regressions, 0 improvements (change above 7% and at least 0 B, p <= 0.05).\n");

    const std::vector<MeasuredPeak> other = {peak("c", 1)};
    auto allowed = above(0.05);
    allowed.allow_missing = true;
    CHECK(max_rss::format_compare_table(max_rss::compare_reports(base, other, allowed)) ==
          "No regression (change above 5% and at least 0 B, p <= 0.05).\n"
          "Missing from NEW (allowed): a\n"
          "Missing from NEW (allowed): b\n"
          "Only in NEW: c\n");
}

TEST_CASE("format_compare_table: aligns UTF-8 labels by code point", "[compare]") {
    const std::vector<MeasuredPeak> base = {peak("échø", 1), peak("abcdef", 1)};
    CHECK(max_rss::format_compare_table(max_rss::compare_reports(base, base, above(0.05))) ==
          "Command  Before  After  Change     Δ  p\n"
          "échø        1 B    1 B   +0.0%  +0 B  -\n"
          "abcdef      1 B    1 B   +0.0%  +0 B  -\n"
          "\n"
          "No regression (change above 5% and at least 0 B, p <= 0.05).\n");
}

TEST_CASE("compare: reports of two backends are named, one backend's are not", "[compare]") {
    // A run report says "backend" at its top; a bench export in its provenance.
    const auto ptrace_run = max_rss::parse_report(
        R"({"schema_version": 1, "kind": "run", "command": ["./x"], "peak": {"tree_bytes": 5}, "backend": "ptrace"})",
        "BASE.json");
    REQUIRE(ptrace_run.size() == 1);
    CHECK(ptrace_run[0].backend == "ptrace");
    const auto ebpf_bench = max_rss::parse_report(
        R"({"schema_version": 2, "kind": "bench", "provenance": {"backend": "ebpf"},
            "results": [{"command": "./x", "peak_bytes": {"median": 6}}, {"command": "./y", "peak_bytes": {"median": 7}}]})",
        "NEW.json");
    REQUIRE(ebpf_bench.size() == 2);
    CHECK(ebpf_bench[1].backend == "ebpf");
    CHECK(max_rss::backend_warning(ptrace_run, "BASE.json", ebpf_bench, "NEW.json") ==
          "BASE.json was measured with --backend ptrace, NEW.json with --backend ebpf: the backends measure "
          "differently (docs/backends.md), so a change may be the backend's, not the program's");
    CHECK_FALSE(max_rss::backend_warning(ptrace_run, "A.json", ptrace_run, "B.json"));
    // A report that does not say (the fixtures above, older exports): no guess.
    const auto unnamed = max_rss::parse_report(run_report, "OLD.json");
    CHECK(unnamed[0].backend.empty());
    CHECK_FALSE(max_rss::backend_warning(unnamed, "OLD.json", ebpf_bench, "NEW.json"));
    CHECK_FALSE(max_rss::backend_warning(ebpf_bench, "NEW.json", unnamed, "OLD.json"));
}
