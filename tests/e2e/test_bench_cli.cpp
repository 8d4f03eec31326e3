// `max_rss bench` and `max_rss compare` end to end: exports, exit codes, and
// stderr, on fixture programs with known peaks. "N MiB" is asserted as
// [N, N + 2.5] MiB (the touch fixture's baseline is about 1.2 MiB).
#include "helpers.hpp"

#include <max_rss/report/compare.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace max_rss::test;
using nlohmann::json;

namespace {

// A shell command line that runs fixture name with args.
std::string fixture_command(const std::string& name, std::vector<std::string> args = {}) {
    args.insert(args.begin(), fixture(name));
    return max_rss::shell_join(args);
}


size_t count_lines(const std::string& text) { return lines_of(text).size(); }

#define CHECK_MEDIAN_MIB(result, n)                                              \
    do {                                                                         \
        const double median_mib = (result)["peak_bytes"]["median"].get<double>() / MiB; \
        CHECK(median_mib >= (n));                                                \
        CHECK(median_mib <= (n) + 2.5);                                          \
    } while (false)

// Removes a file when the test ends, however it ends.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& name) : path(temp_path(name)) { std::remove(path.c_str()); }
    ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("bench: 50 and 100 MiB, 3 runs each: JSON medians and one Markdown row per command", "[bench]") {
    TempFile json_file("bench_two.json");
    TempFile markdown_file("bench_two.md");
    const std::string fifty = fixture_command("touch", {"50"});
    const std::string hundred = fixture_command("touch", {"100"});
    const Output out = run_max_rss({"bench", "--runs", "3", "--export-json", json_file.path, "--export-markdown",
                                    markdown_file.path, fifty, hundred});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    CHECK(out.out.empty());  // the human output is on stderr

    const json report = json::parse(read_text_file(json_file.path));
    CHECK(report["kind"] == "bench");
    REQUIRE(report["results"].size() == 2);
    CHECK(report["results"][0]["command"] == fifty);
    CHECK(report["results"][1]["command"] == hundred);
    CHECK(report["results"][0]["runs"].size() == 3);
    CHECK(report["results"][1]["runs"].size() == 3);
    CHECK_MEDIAN_MIB(report["results"][0], 50.0);
    CHECK_MEDIAN_MIB(report["results"][1], 100.0);

    const std::vector<std::string> table = lines_of(read_text_file(markdown_file.path));
    REQUIRE(table.size() == 6);  // header, separator, two rows, a blank line, the provenance
    CHECK(table[5].starts_with("_Measured with max_rss "));
    CHECK(table[0].starts_with("| Command | Peak mean ± σ [MiB] |"));
    CHECK(table[2].find("touch 50") != std::string::npos);
    CHECK(table[3].find("touch 100") != std::string::npos);
    CHECK(table[2].find("| 1.00 |") != std::string::npos);

    CHECK(out.err.find("Benchmark 1: " + fifty + "\n  Peak (mean ± σ):") != std::string::npos);
    CHECK(out.err.find("Benchmark 2: " + hundred) != std::string::npos);
    CHECK(out.err.find("  Range (min … max):") != std::string::npos);
    CHECK(out.err.find("  Time (mean ± σ):") != std::string::npos);
    CHECK(out.err.find("3 runs") != std::string::npos);
    CHECK(out.err.find("Summary\n  " + hundred + " used 1.9") != std::string::npos);
    CHECK(out.err.find("times more memory than " + fifty) != std::string::npos);
    CHECK(out.err.find('\x1b') == std::string::npos);  // stderr is not a terminal: plain
}

TEST_CASE("bench: exports to stdout, the human summary stays on stderr", "[bench]") {
    const Output out =
        run_max_rss({"bench", "-r", "2", "--export-csv", "-", "-n", "twenty", fixture_command("touch", {"20"})});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    const std::vector<std::string> csv = lines_of(out.out);
    REQUIRE(csv.size() == 2);
    CHECK(csv[0].starts_with("command,name,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,"
                             "ru_maxrss_median_bytes,runs,degraded_runs,wall_mean_seconds,"));
    CHECK(csv[1].starts_with(fixture_command("touch", {"20"}) + ",twenty,"));  // --command-name kept
    CHECK(csv[1].find(",2,0,") != std::string::npos);
    CHECK(csv[1].ends_with(",ptrace,"));
    CHECK(out.err.find("Benchmark 1: twenty") != std::string::npos);

    const Output quiet = run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", "-", "true"});
    CHECK(quiet.exit_code == 0);
    CHECK(quiet.err.empty());
    CHECK(json::parse(quiet.out)["results"].size() == 1);
}

TEST_CASE("bench: a command's control characters never reach the terminal", "[bench]") {
    // "Benchmark 1:", the summary and a failure's line printed the command
    // as given: an ESC in it was an escape sequence sent to the terminal.
    const std::string colored = "true \x1b[31mred";
    const std::string failing = "false \x1b[1mbold\x07";
    const Output out = run_max_rss({"bench", "-r", "1", "--style", "basic", colored, "true"});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    CHECK(out.err.find('\x1b') == std::string::npos);
    CHECK(out.err.find("Benchmark 1: true ?[31mred") != std::string::npos);
    // In the summary too, on either side of the comparison (the two peaks are
    // close: which one is lower varies).
    const size_t summary = out.err.find("Summary");
    REQUIRE(summary != std::string::npos);
    CHECK(out.err.find("true ?[31mred", summary) != std::string::npos);
    const Output failed = run_max_rss({"bench", "-r", "1", "--style", "basic", failing});
    CHECK(failed.exit_code == 1);
    CHECK(failed.err.find('\x1b') == std::string::npos);
    CHECK(failed.err.find('\x07') == std::string::npos);
    CHECK(failed.err.find("max_rss: bench: 'false ?[1mbold?' exited with code 1") != std::string::npos);
}

TEST_CASE("bench: --show-output with an export to stdout says the two are mixed", "[bench]") {
    const Output out = run_max_rss({"bench", "-r", "1", "--style", "none", "--show-output", "--export-json", "-",
                                    "echo hello"});
    CHECK(out.exit_code == 0);
    CHECK(out.out.rfind("hello\n", 0) == 0);  // as asked: the output first, then the export
    CHECK(out.err.find("max_rss: bench: --export-json: the export goes to stdout, where --show-output") !=
          std::string::npos);
    // To a file: nothing to say.
    const std::string path = temp_path("show_output.json");
    const Output to_file = run_max_rss({"bench", "-r", "1", "--style", "none", "--show-output", "--export-json",
                                        path, "echo hello"});
    CHECK(to_file.exit_code == 0);
    CHECK(to_file.out == "hello\n");
    CHECK(to_file.err.find("mixed") == std::string::npos);
    std::remove(path.c_str());
}

TEST_CASE("bench: -N splits the command into words and runs it without a shell", "[bench]") {
    TempFile json_file("bench_n.json");
    // The quotes group "exit 0" into one argument: without them sh would get "'exit".
    const Output out = run_max_rss({"bench", "-N", "-r", "2", "--export-json", json_file.path,
                                    fixture_command("touch", {"30"}), "/bin/sh -c 'exit 0'"});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    const json report = json::parse(read_text_file(json_file.path));
    CHECK_MEDIAN_MIB(report["results"][0], 30.0);
    CHECK(report["results"][1]["runs"][0]["exit_code"] == 0);

    // No shell: a pipe is just an argument, and a builtin is not found.
    const Output exit_builtin = run_max_rss({"bench", "-N", "exit 3"});
    CHECK(exit_builtin.exit_code == 127);
    CHECK(exit_builtin.err == "max_rss: bench: COMMAND 'exit 3': exit: command not found\n");
    // A path to a directory is there but cannot run: 126, as a run of it says.
    const Output directory = run_max_rss({"bench", "-N", "/"});
    CHECK(directory.exit_code == 126);
    CHECK(directory.err == "max_rss: bench: COMMAND '/': /: Is a directory\n");
    // So is a file without execute permission, before anything runs.
    const std::string plain = temp_path("not_executable");
    { std::ofstream(plain) << "true\n"; }
    ::chmod(plain.c_str(), 0644);
    const Output not_executable = run_max_rss({"bench", "-N", plain});
    CHECK(not_executable.exit_code == 126);
    CHECK(not_executable.err == "max_rss: bench: COMMAND '" + plain + "': " + plain + ": Permission denied\n");
    std::remove(plain.c_str());

    const Output unterminated = run_max_rss({"bench", "-N", "echo 'open"});
    CHECK(unterminated.exit_code == 2);
    CHECK(unterminated.err == "max_rss: bench: COMMAND 'echo 'open': unterminated single quote\n");

    // --shell=none is -N.
    const Output none = run_max_rss({"bench", "--shell=none", "-r", "1", "/bin/sh -c 'exit 0'"});
    CHECK(none.exit_code == 0);
}

TEST_CASE("bench: through the default shell, a builtin measures the shell", "[bench]") {
    TempFile json_file("bench_shell.json");
    const Output out = run_max_rss({"bench", "-r", "1", "--export-json", json_file.path,
                                    fixture_command("touch", {"40"}), "true"});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    const json report = json::parse(read_text_file(json_file.path));
    CHECK_MEDIAN_MIB(report["results"][0], 40.0);
    CHECK(report["results"][1]["peak_bytes"]["median"].get<double>() > 0);
}

TEST_CASE("bench: a failing command stops it, keeping what was measured before", "[bench]") {
    TempFile json_file("bench_fail.json");
    const Output out = run_max_rss({"bench", "-r", "2", "--export-json", json_file.path,
                                    fixture_command("touch", {"10"}), fixture_command("exit_code", {"3"})});
    CHECK(out.exit_code == 3);
    CHECK(out.err.find("max_rss: bench: '" + fixture_command("exit_code", {"3"}) +
                       "' exited with code 3 (use -i/--ignore-failure") != std::string::npos);
    // Rewritten after the first command, so the second's failure loses nothing.
    const json report = json::parse(read_text_file(json_file.path));
    REQUIRE(report["results"].size() == 1);
    CHECK_MEDIAN_MIB(report["results"][0], 10.0);
}

TEST_CASE("bench: --ignore-failure records failing runs and exits 0", "[bench]") {
    TempFile json_file("bench_ignore.json");
    const Output out = run_max_rss({"bench", "-i", "-r", "2", "--export-json", json_file.path,
                                    fixture_command("exit_code", {"3"})});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    CHECK(out.err.find("Warning: 2 of 2 runs exited with a non-zero code") != std::string::npos);
    const json report = json::parse(read_text_file(json_file.path));
    REQUIRE(report["results"][0]["runs"].size() == 2);
    CHECK(report["results"][0]["runs"][0]["exit_code"] == 3);
    CHECK(report["results"][0]["runs"][1]["exit_code"] == 3);
}

TEST_CASE("bench: a bad export path exits 2 before running anything", "[bench]") {
    TempFile marker("bench_marker");
    const std::string command = "echo ran > " + marker.path;
    for (const char* option : {"--export-json", "--export-markdown", "--export-csv"}) {
        const Output out = run_max_rss({"bench", option, "/nonexistent-dir/out", command});
        CHECK(out.exit_code == 2);
        CHECK(out.err == std::string("max_rss: bench: ") + option +
                             ": cannot create export file '/nonexistent-dir/out': No such file or directory\n");
        CHECK(count_lines(out.err) == 1);
        CHECK_FALSE(file_exists(marker.path));
    }
    // A directory is refused too.
    const Output dir = run_max_rss({"bench", "--export-json", "/tmp", command});
    CHECK(dir.exit_code == 2);
    CHECK_FALSE(file_exists(marker.path));
}

TEST_CASE("bench: usage errors are one line and exit 2", "[bench]") {
    const auto check_usage = [](const std::vector<std::string>& args, const std::string& message) {
        const Output out = run_max_rss(args);
        INFO(out.err);
        CHECK(out.exit_code == 2);
        CHECK(out.err.find(message) != std::string::npos);
    };
    check_usage({"bench"}, "max_rss: bench: no COMMAND given (see 'max_rss bench --help')\n");
    check_usage({"bench", "-n", "a", "-n", "b", "true"}, "max_rss: bench: 2 --command-name for 1 COMMAND\n");
    check_usage({"bench", "-p", "true", "-p", "true", "-p", "true", "true", "true"},
                "max_rss: bench: give --prepare once, or once per COMMAND (2), not 3 times\n");
    check_usage({"bench", "--budget", "lots", "true"}, "max_rss: bench: --budget: 'lots' is not a size");
    check_usage({"bench", "--style", "fancy", "true"}, "max_rss: bench: --style: 'fancy' is not one of");
    check_usage({"bench", "--runs", "0", "true"}, "--runs");
    check_usage({"bench", "--export-json", "-", "--export-csv", "-", "true"},
                "max_rss: bench: --export-json and --export-csv both write to stdout\n");
    check_usage({"-o", "x.json", "bench", "true"}, "max_rss: bench: --output is an option of the run mode");
}

TEST_CASE("bench: --prepare runs before every run, warmup included", "[bench]") {
    TempFile log("bench_prepare.log");
    const Output out =
        run_max_rss({"bench", "-w", "1", "-r", "2", "--prepare", "echo prepared >> " + log.path, "true", "true"});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    CHECK(count_lines(read_text_file(log.path)) == 6);  // 2 commands x (1 warmup + 2 runs)

    const Output failing = run_max_rss({"bench", "-i", "--prepare", "false", "true"});
    CHECK(failing.exit_code == 1);
    CHECK(failing.err.find("max_rss: bench: the --prepare command 'false' exited with code 1") != std::string::npos);
}

TEST_CASE("bench: COMMANDs may follow --", "[bench]") {
    TempFile json_file("bench_dashdash.json");
    const Output out = run_max_rss({"bench", "-r", "1", "--export-json", json_file.path, "--", "true", "-n"});
    INFO(out.err);
    // "-n" after "--" is a COMMAND, not --command-name (and exits 127 through the shell).
    CHECK(out.exit_code == 127);
    const json report = json::parse(read_text_file(json_file.path));
    REQUIRE(report["results"].size() == 1);
    CHECK(report["results"][0]["command"] == "true");
}

TEST_CASE("bench and run: --budget fails over it, passes under it", "[bench]") {
    const std::string hundred = fixture_command("touch", {"100"});
    SECTION("bench") {
        const Output over = run_max_rss({"bench", "-r", "2", "--budget", "50MiB", hundred});
        CHECK(over.exit_code == 3);
        CHECK(over.err.find("max_rss: over budget: " + hundred + ": median peak 10") != std::string::npos);
        CHECK(over.err.find("exceeds --budget 50.0 MiB") != std::string::npos);

        const Output under = run_max_rss({"bench", "-r", "2", "--budget", "1GiB", hundred});
        CHECK(under.exit_code == 0);
        CHECK(under.err.find("over budget") == std::string::npos);
    }
    SECTION("bench writes the exports before failing the budget") {
        TempFile json_file("bench_budget.json");
        const Output over =
            run_max_rss({"bench", "-r", "1", "--budget", "50MiB", "--export-json", json_file.path, hundred});
        CHECK(over.exit_code == 3);
        CHECK(json::parse(read_text_file(json_file.path))["results"].size() == 1);
    }
    SECTION("run") {
        const Output over = run_max_rss({"--budget", "50MiB", "--", fixture("touch"), "100"});
        CHECK(over.exit_code == 3);
        CHECK(over.err.find("max_rss: over budget: peak 10") != std::string::npos);
        CHECK(over.err.find("exceeds --budget 50.0 MiB") != std::string::npos);

        const Output under = run_max_rss({"--budget", "1GiB", "--", fixture("touch"), "100"});
        CHECK(under.exit_code == 0);
        CHECK(under.err.find("over budget") == std::string::npos);
    }
}

TEST_CASE("compare: a 100 MiB run against a 50 MiB baseline regresses; against itself not", "[compare_cli]") {
    TempFile base("compare_base.json");
    TempFile next("compare_new.json");
    REQUIRE(run_max_rss({"-q", "-o", base.path, "--", fixture("touch"), "50"}).exit_code == 0);
    REQUIRE(run_max_rss({"-q", "-o", next.path, "--", fixture("touch"), "100"}).exit_code == 0);

    const Output regressed = run_max_rss({"compare", base.path, next.path, "--threshold", "10%"});
    INFO(regressed.out << regressed.err);
    CHECK(regressed.exit_code == 1);
    CHECK(regressed.out.find("regression") != std::string::npos);
    CHECK(regressed.out.find("1 regression, 0 improvements (change above 10% and at least 1.0 MiB, p <= 0.05).") !=
          std::string::npos);
    CHECK(regressed.err.empty());

    const Output same = run_max_rss({"compare", next.path, next.path, "--threshold", "10%"});
    CHECK(same.exit_code == 0);
    CHECK(same.out.find("No regression (change above 10% and at least 1.0 MiB, p <= 0.05).") != std::string::npos);

    // Shrinking is no regression but an improvement; the default threshold is 5%.
    const Output shrunk = run_max_rss({"compare", next.path, base.path});
    CHECK(shrunk.exit_code == 0);
    CHECK(shrunk.out.find("improvement\n\n0 regressions, 1 improvement (change above 5% ") != std::string::npos);
}

TEST_CASE("compare: reports of two backends get one warning, of one backend or unnamed none", "[compare_cli]") {
    // The sample backend needs no privilege, so this runs wherever the suite does.
    TempFile traced("compare_ptrace.json");
    TempFile sampled("compare_sample.json");
    TempFile unnamed("compare_unnamed.json");
    REQUIRE(run_max_rss({"-q", "-o", traced.path, "--", fixture("touch"), "10"}).exit_code == 0);
    REQUIRE(run_max_rss({"-q", "--backend", "sample", "-o", sampled.path, "--", fixture("touch"), "10"}).exit_code == 0);
    {
        std::ofstream out(unnamed.path);
        out << R"({"schema_version": 1, "kind": "run", "command": [")" << fixture("touch")
            << R"(", "10"], "peak": {"tree_bytes": 11534336}})";
    }

    // Only the warning is asserted here, not the figures: the sample
    // backend's peak is not ptrace's. The sanitized build's reads 43.6 MiB
    // against ptrace's 11.3, every run: the sample backend takes the root's
    // wait4 ru_maxrss as its image's peak, and ru_maxrss keeps the pre-exec
    // high-water of the launched child, a fork of an ASan-built max_rss.
    const Output mixed = run_max_rss({"compare", "--threshold", "1000%", traced.path, sampled.path});
    INFO(mixed.out << mixed.err);
    CHECK(mixed.exit_code == 0);
    CHECK(mixed.err == "max_rss: compare: warning: " + traced.path + " was measured with --backend ptrace, " +
                           sampled.path +
                           " with --backend sample: the backends measure differently (docs/backends.md), so a "
                           "change may be the backend's, not the program's\n");
    for (const std::string& other : {traced.path, unnamed.path}) {
        const Output quiet = run_max_rss({"compare", other, traced.path});
        CHECK(quiet.exit_code == 0);
        CHECK(quiet.err.empty());
    }
}

TEST_CASE("compare: bench exports pair by command, and a report can come from stdin", "[compare_cli]") {
    TempFile base("compare_bench_base.json");
    const std::string ten = fixture_command("touch", {"10"});
    const std::string twenty = fixture_command("touch", {"20"});
    REQUIRE(run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", base.path, ten, twenty}).exit_code == 0);
    const Output next = run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", "-", twenty, ten});
    REQUIRE(next.exit_code == 0);

    const Output out = run_max_rss({"compare", base.path, "-"}, next.out);
    INFO(out.out << out.err);
    CHECK(out.exit_code == 0);
    CHECK(out.out.starts_with("Command"));
    CHECK(out.out.find(ten) != std::string::npos);
    CHECK(out.out.find(twenty) != std::string::npos);
    CHECK(out.out.find("Only in") == std::string::npos);
}

TEST_CASE("compare: unreadable or invalid reports and bad thresholds exit 2 with one line", "[compare_cli]") {
    TempFile garbage("compare_garbage.json");
    {
        std::FILE* f = std::fopen(garbage.path.c_str(), "w");
        REQUIRE(f != nullptr);
        std::fputs("{\"kind\": \"nope\"}", f);
        std::fclose(f);
    }
    const Output missing = run_max_rss({"compare", "/nonexistent.json", garbage.path});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err == "max_rss: compare: /nonexistent.json: cannot read: No such file or directory\n");
    CHECK(missing.out.empty());

    const Output invalid = run_max_rss({"compare", garbage.path, garbage.path});
    CHECK(invalid.exit_code == 2);
    CHECK(invalid.err == "max_rss: compare: " + garbage.path +
                             ": unknown report kind \"nope\" (expected \"run\" or \"bench\")\n");

    const Output threshold = run_max_rss({"compare", garbage.path, garbage.path, "--threshold", "lots"});
    CHECK(threshold.exit_code == 2);
    CHECK(threshold.err == "max_rss: compare: --threshold: 'lots' is not a percentage (try 5%, 0.5%)\n");

    const Output one = run_max_rss({"compare", garbage.path});
    CHECK(one.exit_code == 2);

    // An output onto an input would replace the report it compares.
    const std::string before = read_text_file(garbage.path);
    const Output onto = run_max_rss({"compare", garbage.path, garbage.path, "--json", garbage.path});
    CHECK(onto.exit_code == 2);
    CHECK(onto.err.find("max_rss: compare: --json '" + garbage.path + "' is BASE, which it would replace") == 0);
    CHECK(read_text_file(garbage.path) == before);
}
