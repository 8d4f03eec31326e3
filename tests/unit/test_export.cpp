#include <max_rss/os/export_target.hpp>
#include <max_rss/report/export.hpp>

#include "../e2e/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "units.hpp"

namespace fs = std::filesystem;
using max_rss::BenchReport;
using max_rss::BenchResult;
using max_rss::BenchRun;
using max_rss::ExportTarget;
using max_rss::test::TempDir;

namespace {


// The fixed results behind tests/data/export/expected.*: one plain command,
// one whose command needs escaping in every format, one named with a single
// run, degraded, with warnings and no ru_maxrss.
std::vector<BenchResult> fixed_results() {
    BenchResult plain;
    plain.command = "./alloc 100";
    plain.runs = {
        BenchRun{100 * MiB, 96 * MiB, 0, 0.25},
        BenchRun{102 * MiB, 98 * MiB, 0, 0.5},
        BenchRun{99 * MiB, std::nullopt, 0, 0.125},
        BenchRun{103 * MiB, 99 * MiB, 0, 0.375},
    };

    BenchResult tricky;
    tricky.command = "sh -c \"echo `date`, x | wc -l\"";
    tricky.runs = {
        BenchRun{200 * MiB, 200 * MiB, 0, 1.5},
        BenchRun{210 * MiB, 210 * MiB, 1, 1.75},
    };

    BenchResult named;
    named.command = "python3 -c 'x = bytearray(50 << 20)'";
    named.name = "python";
    named.runs = {BenchRun{50 * MiB + 512, std::nullopt, 137, 0.0625, true}};
    named.warnings = {"PTRACE_SEIZE: Operation not permitted", "pid 7: no stop could be measured"};

    return {plain, tricky, named};
}

// results with a fixed provenance, as every export carries one.
BenchReport report_of(std::vector<BenchResult> results) {
    BenchReport report;
    report.provenance.max_rss_version = "0.1.0";
    report.provenance.date = "2026-11-01T12:00:00Z";
    report.provenance.kernel = "Linux 6.18.0";
    report.provenance.machine = "x86_64";
    report.provenance.cpu_count = 2;
    report.provenance.runs = 4;
    report.provenance.min_runs = 4;
    report.provenance.max_runs = 4;
    report.provenance.warmup = 1;
    report.provenance.backend = "ptrace";
    report.results = std::move(results);
    return report;
}

// fixed_results() with CPU times, a parameter on the first, the second as
// the --reference and a budget on the third.
BenchReport fixed_report() {
    std::vector<BenchResult> results = fixed_results();
    for (BenchResult& result : results) {
        for (size_t i = 0; i < result.runs.size(); ++i) {
            result.runs[i].user_seconds = 0.125 * static_cast<double>(i + 1);
            result.runs[i].system_seconds = 0.0625;
        }
    }
    results[0].parameters = {{"mib", "100"}};
    results[1].reference = true;
    results[2].budget_bytes = 64 * MiB;
    return report_of(std::move(results));
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

fs::path expected_path(const char* name) { return fs::path(MAX_RSS_TEST_DATA_DIR) / "export" / name; }

// Runs body with stdout sent to a file and returns what it printed.
template <typename Body>
std::string capture_stdout(Body body) {
    std::fflush(stdout);
    char name[] = "/tmp/max_rss_stdout_XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    const int saved = ::dup(STDOUT_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    body();
    std::fflush(stdout);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(fd);
    std::string text = read_file(name);
    ::unlink(name);
    return text;
}

}  // namespace

TEST_CASE("export_json matches tests/data/export/expected.json", "[export]") {
    CHECK(max_rss::export_json(fixed_report()) == read_file(expected_path("expected.json")));
}

TEST_CASE("export_markdown matches tests/data/export/expected.md", "[export]") {
    CHECK(max_rss::export_markdown(fixed_report()) == read_file(expected_path("expected.md")));
}

TEST_CASE("export_csv matches tests/data/export/expected.csv", "[export]") {
    CHECK(max_rss::export_csv(fixed_report()) == read_file(expected_path("expected.csv")));
}

TEST_CASE("export_asciidoc matches tests/data/export/expected.adoc", "[export]") {
    CHECK(max_rss::export_asciidoc(fixed_report()) == read_file(expected_path("expected.adoc")));
}

TEST_CASE("export_github_benchmark matches tests/data/export/expected.github-benchmark.json", "[export]") {
    CHECK(max_rss::export_github_benchmark(fixed_report()) ==
          read_file(expected_path("expected.github-benchmark.json")));
}

TEST_CASE("export_bencher matches tests/data/export/expected.bmf.json", "[export]") {
    CHECK(max_rss::export_bencher(fixed_report()) == read_file(expected_path("expected.bmf.json")));
}

TEST_CASE("export_bencher: a name given twice keeps both results, numbered", "[export]") {
    auto report = fixed_report();
    REQUIRE(report.results.size() >= 2);
    report.results[1].name = report.results[0].name;
    report.results[1].command = report.results[0].command;
    const auto json = nlohmann::json::parse(max_rss::export_bencher(report));
    const std::string first = report.results[0].name.empty() ? report.results[0].command : report.results[0].name;
    CHECK(json.size() == report.results.size());
    CHECK(json.contains(first));
    CHECK(json.contains(first + " #2"));
}

TEST_CASE("export_results dispatches on the format", "[export]") {
    using max_rss::ExportFormat;
    const auto report = fixed_report();
    CHECK(max_rss::export_results(ExportFormat::Json, report) == max_rss::export_json(report));
    CHECK(max_rss::export_results(ExportFormat::Markdown, report) == max_rss::export_markdown(report));
    CHECK(max_rss::export_results(ExportFormat::Csv, report) == max_rss::export_csv(report));
    CHECK(max_rss::export_results(ExportFormat::Asciidoc, report) == max_rss::export_asciidoc(report));
    CHECK(max_rss::export_results(ExportFormat::GithubBenchmark, report) == max_rss::export_github_benchmark(report));
    CHECK(max_rss::export_results(ExportFormat::Bencher, report) == max_rss::export_bencher(report));
}

TEST_CASE("export_json: the documented shape", "[export]") {
    const auto json = nlohmann::json::parse(max_rss::export_json(report_of(fixed_results())));
    CHECK(json["schema_version"] == 2);
    CHECK(json["kind"] == "bench");
    REQUIRE(json["results"].size() == 3);
    const auto& plain = json["results"][0];
    CHECK(plain["command"] == "./alloc 100");
    CHECK(plain["name"].is_null());
    CHECK(plain["runs"].size() == 4);
    CHECK(plain["runs"][2]["ru_maxrss_bytes"].is_null());
    CHECK(plain["peak_bytes"]["median"] == 101.0 * MiB);
    CHECK(plain["ru_maxrss_bytes"]["median"] == 98.0 * MiB);
    CHECK(json["results"][2]["name"] == "python");
    CHECK(json["results"][2]["ru_maxrss_bytes"].is_null());
}

TEST_CASE("exporters: no results", "[export]") {
    const BenchReport none = report_of({});
    const auto json = nlohmann::json::parse(max_rss::export_json(none));
    CHECK(json["results"] == nlohmann::json::array());
    CHECK(json["provenance"]["kernel"] == "Linux 6.18.0");
    CHECK(max_rss::export_csv(none) ==
          "command,name,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs,"
          "degraded_runs,wall_mean_seconds,wall_stddev_seconds,wall_median_seconds,user_mean_seconds,"
          "system_mean_seconds,max_rss_version,date,kernel,machine,cpu_count,warmup,backend,warnings\n");
    CHECK(max_rss::export_markdown(none) ==
          "| Command | Peak mean ± σ [MiB] | Median [MiB] | Min [MiB] | Max [MiB] | ru_maxrss median [MiB] | "
          "Wall mean ± σ [s] | Relative |\n"
          "|:---|---:|---:|---:|---:|---:|---:|---:|\n"
          "\n_Measured with max_rss 0.1.0, 2026-11-01T12:00:00Z, Linux 6.18.0 x86_64, 2 CPUs, 4 runs, 1 warmup, "
          "ptrace._\n");
    CHECK(max_rss::export_github_benchmark(none) == "[]\n");
    CHECK(max_rss::export_bencher(none) == "{}\n");
}

TEST_CASE("export_markdown: code spans survive backticks, pipes and line breaks", "[export]") {
    const auto cell_of = [](std::string command) {
        BenchResult result;
        result.command = std::move(command);
        result.runs = {BenchRun{MiB, std::nullopt, 0, 1.0}};
        const std::string table = max_rss::export_markdown(report_of({result}));
        const std::string row = table.substr(table.find("\n|:") + 1);
        const std::string data = row.substr(row.find('\n') + 1);
        return data.substr(2, data.find(" | 1.0 ± 0.0") - 2);
    };
    CHECK(cell_of("true") == "`true`");
    CHECK(cell_of("a | b") == "`a \\| b`");
    CHECK(cell_of("echo `date`") == "`` echo `date` ``");
    CHECK(cell_of("`x`") == "`` `x` ``");
    CHECK(cell_of("a `` b") == "```a `` b```");
    CHECK(cell_of("printf 'a\nb'") == "`printf 'a b'`");
    CHECK(cell_of(" x ") == "`  x  `");
}

TEST_CASE("export_markdown: relative is n/a against a zero peak", "[export]") {
    std::vector<BenchResult> results(2);
    results[0].command = "zero";
    results[0].runs = {BenchRun{0, std::nullopt, 0, 1.0}};
    results[1].command = "some";
    results[1].runs = {BenchRun{MiB, std::nullopt, 0, 1.0}};
    const std::string table = max_rss::export_markdown(report_of(results));
    CHECK(table.find("| `zero` | 0.0 ± 0.0 | 0.0 | 0.0 | 0.0 | n/a | 1.000 ± 0.000 | 1.00 |\n") != std::string::npos);
    CHECK(table.find("| `some` | 1.0 ± 0.0 | 1.0 | 1.0 | 1.0 | n/a | 1.000 ± 0.000 | n/a |\n") != std::string::npos);
}

TEST_CASE("export_csv: RFC 4180 quoting", "[export]") {
    const auto line_of = [](std::string command) {
        BenchResult result;
        result.command = std::move(command);
        result.runs = {BenchRun{1536, 1024, 0, 1.0}, BenchRun{1537, 1024, 0, 1.0}};
        const std::string csv = max_rss::export_csv(report_of({result}));
        return csv.substr(csv.find('\n') + 1);
    };
    CHECK(line_of("true") == "true,,1536.5,0.7071067811865476,1536.5,1536,1537,1024,2,0,1,0,1,0,0,"
                             "0.1.0,2026-11-01T12:00:00Z,Linux 6.18.0,x86_64,2,1,ptrace,\n");
    CHECK(line_of("a,b").starts_with("\"a,b\",,1536.5,"));
    CHECK(line_of("say \"hi\"").starts_with("\"say \"\"hi\"\"\",,1536.5,"));
    CHECK(line_of("a\nb").starts_with("\"a\nb\",,1536.5,"));
    CHECK(line_of(" x").starts_with("\" x\",,1536.5,"));
    CHECK(line_of("a | `b`").starts_with("a | `b`,,1536.5,"));
}

TEST_CASE("ExportTarget: write replaces the whole file each time", "[export]") {
    TempDir dir;
    const fs::path file = dir.path / "out.json";
    ExportTarget target(file.string());
    CHECK(target.path() == file.string());
    CHECK_FALSE(target.is_stdout());
    CHECK_FALSE(fs::exists(file));  // nothing is written before the first write

    target.write_intermediate("first, and longer\n");
    CHECK(read_file(file) == "first, and longer\n");
    target.write("second\n");
    CHECK(read_file(file) == "second\n");
    target.write("");
    CHECK(read_file(file).empty());
    CHECK(dir.entries() == std::vector<std::string>{"out.json"});  // no temporary file left
}

TEST_CASE("ExportTarget: an existing file is replaced, not appended to", "[export]") {
    TempDir dir;
    const fs::path file = dir.path / "out.csv";
    std::ofstream(file) << "old content that is longer than the new\n";
    ExportTarget target(file.string());
    CHECK(read_file(file) == "old content that is longer than the new\n");  // untouched until written
    target.write("new\n");
    CHECK(read_file(file) == "new\n");
}

TEST_CASE("ExportTarget: nothing is created before the first write", "[export]") {
    TempDir dir;
    {
        ExportTarget target((dir.path / "out.md").string());
        CHECK(dir.entries().empty());  // the path was checked without a file anyone could see
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("ExportTarget: a moved target writes where the original would have", "[export]") {
    TempDir dir;
    const fs::path file = dir.path / "out.md";
    ExportTarget first(file.string());
    ExportTarget second(std::move(first));
    second.write("moved\n");
    CHECK(read_file(file) == "moved\n");
    CHECK(dir.entries() == std::vector<std::string>{"out.md"});
}

TEST_CASE("ExportTarget: a bad path fails at construction", "[export]") {
    TempDir dir;
    const std::string missing = (dir.path / "no/such/dir/out.json").string();
    CHECK_THROWS_WITH(ExportTarget(missing),
                      "cannot create export file '" + missing + "': No such file or directory");

    const std::string directory = dir.path.string();
    CHECK_THROWS_WITH(ExportTarget(directory), "cannot create export file '" + directory + "': Is a directory");

    CHECK_THROWS_WITH(ExportTarget(""), "cannot create export file '': No such file or directory");
    CHECK(dir.entries().empty());
}

TEST_CASE("ExportTarget: an unwritable directory fails at construction", "[export]") {
    if (::geteuid() == 0) {
        WARN("skipped: root ignores directory permissions");
        return;
    }
    TempDir dir;
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    const std::string path = (dir.path / "out.json").string();
    CHECK_THROWS_WITH(ExportTarget(path), "cannot create export file '" + path + "': Permission denied");
}

TEST_CASE("ExportTarget: a relative path puts the temporary file in the working directory", "[export]") {
    TempDir dir;
    const fs::path saved = fs::current_path();
    fs::current_path(dir.path);
    {
        ExportTarget target("out.json");
        target.write("{}\n");
    }
    fs::current_path(saved);
    CHECK(read_file(dir.path / "out.json") == "{}\n");
    CHECK(dir.entries() == std::vector<std::string>{"out.json"});
}

TEST_CASE("ExportTarget: '-' is stdout and only gets the final write", "[export]") {
    ExportTarget target("-");
    CHECK(target.is_stdout());
    const std::string printed = capture_stdout([&] {
        target.write_intermediate("partial\n");
        target.write("final\n");
    });
    CHECK(printed == "final\n");
}
