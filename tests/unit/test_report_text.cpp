// Every serializer of user-controlled text (run report, bench exports, plot,
// compare's reader) on argv and paths that are not UTF-8: the output stays
// valid, and the JSON ones carry the exact bytes in KEY_base64.
#include <max_rss/report/compare.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/report/plot.hpp>
#include <max_rss/report/report.hpp>
#include <max_rss/util/utf8.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace max_rss;
using nlohmann::json;

namespace {

const std::string replacement_char = "\xEF\xBF\xBD";
const std::string bad_arg = "caf\xE9";               // Latin-1 "café"
const std::string bad_exe = "/opt/\xFF\xFEtool";

RunResult run_with_bad_bytes() {
    RunResult r;
    r.command = {"tool", bad_arg};
    r.exit.code = 0;
    r.peak.method = PeakMethod::Exact;
    r.warnings = {Warning{Warning::Kind::CgroupUnavailable, 0, 0, 0, 0, "cannot create " + bad_arg}};
    auto program = std::make_shared<Program>();
    program->argv = r.command;
    program->exe = bad_exe;
    Process p;
    p.pid = 5;
    Image img;
    img.program = program;
    img.measured = true;
    img.peak_rss_bytes = 1 << 20;
    p.images.push_back(img);
    p.peak_rss_bytes = 1 << 20;
    r.processes.push_back(p);
    r.peak.tree_bytes = 1 << 20;
    return r;
}

std::string report_text(const RunResult& r) {
    std::ostringstream out;
    write_report_json(out, r);
    return out.str();
}

BenchReport bench_with_bad_bytes() {
    BenchResult result;
    result.command = "./tool " + bad_arg;
    result.name = "n\xFF";
    result.runs = {BenchRun{100, std::nullopt, 0, 0.5}};
    BenchReport report;
    report.results = {result};
    return report;
}

}  // namespace

TEST_CASE("run report: argv and exe that are not UTF-8 are valid JSON, exact in *_base64", "[report][utf8]") {
    const std::string text = report_text(run_with_bad_bytes());
    REQUIRE(is_valid_utf8(text));
    const json r = json::parse(text);
    CHECK(r["command"] == json::array({"tool", "caf" + replacement_char}));
    REQUIRE(r.contains("command_base64"));
    CHECK(r["command_base64"] == json::array({base64_encode("tool"), base64_encode(bad_arg)}));
    const json& image = r["processes"][0]["images"][0];
    CHECK(image["argv"][1] == "caf" + replacement_char);
    CHECK(base64_decode(image["argv_base64"][1].get<std::string>()) == bad_arg);
    CHECK(image["exe"] == "/opt/" + replacement_char + replacement_char + "tool");
    CHECK(base64_decode(image["exe_base64"].get<std::string>()) == bad_exe);
    CHECK(r["warnings"][0] == "--cgroup: cannot create caf" + replacement_char + "; no cgroup peak");
}

TEST_CASE("run report: valid UTF-8 gets no *_base64 sibling", "[report][utf8]") {
    RunResult r = run_with_bad_bytes();
    r.command = {"tool", "café"};
    auto program = std::make_shared<Program>(*r.processes[0].images[0].program);
    program->argv = r.command;
    program->exe = "/opt/tool";
    r.processes[0].images[0].program = program;
    r.warnings.clear();
    const std::string text = report_text(r);
    CHECK(text.find("_base64") == std::string::npos);
    CHECK(json::parse(text)["command"][1] == "café");
}

TEST_CASE("bench exports: a command and a name that are not UTF-8", "[export][utf8]") {
    const auto report = bench_with_bad_bytes();
    const auto& results = report.results;
    const std::string exported = export_json(report);
    REQUIRE(is_valid_utf8(exported));
    const json j = json::parse(exported);
    CHECK(j["results"][0]["command"] == "./tool caf" + replacement_char);
    CHECK(base64_decode(j["results"][0]["command_base64"].get<std::string>()) == results[0].command);
    CHECK(j["results"][0]["name"] == "n" + replacement_char);
    CHECK(base64_decode(j["results"][0]["name_base64"].get<std::string>()) == results[0].name);
    // Markdown is for reading: valid, with U+FFFD.
    const std::string markdown = export_markdown(report);
    CHECK(is_valid_utf8(markdown));
    CHECK(markdown.find("`n" + replacement_char + "`") != std::string::npos);
    // CSV is bytes: the command exactly as given.
    CHECK(export_csv(report).find("\n./tool " + bad_arg + ",n\xFF,") != std::string::npos);
}

TEST_CASE("plot: a command that is not UTF-8 still makes a valid UTF-8 page", "[plot][utf8]") {
    const std::string html = render_plot_html(run_with_bad_bytes());
    CHECK(is_valid_utf8(html));
    CHECK(html.find("caf" + replacement_char) != std::string::npos);
}

TEST_CASE("compare reads the exact bytes back, so a run report pairs with a bench export", "[compare][utf8]") {
    const RunResult r = run_with_bad_bytes();
    const auto from_run = parse_report(report_text(r), "run.json");
    REQUIRE(from_run.size() == 1);
    CHECK(from_run[0].command == shell_join(r.command));

    BenchResult bench;
    bench.command = shell_join(r.command);
    bench.runs = {BenchRun{2 << 20, std::nullopt, 0, 0.5}};
    BenchReport report;
    report.results = {bench};
    const auto from_bench = parse_report(export_json(report), "bench.json");
    REQUIRE(from_bench.size() == 1);
    CHECK(from_bench[0].command == from_run[0].command);
    const CompareResult result = compare_reports(from_run, from_bench, CompareSettings{});
    CHECK(result.rows.size() == 1);
}
