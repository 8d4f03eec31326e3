// bench's exports as hyperfine's consumers read them: the hyperfine-shaped
// fields of a real run, the JSON Schema in docs/, and hyperfine's flags.
#include "helpers.hpp"
#include "temp_dir.hpp"

#include <max_rss/util/text.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace max_rss::test;
using nlohmann::json;

namespace {


const std::string kSchema = std::string(MAX_RSS_TEST_DATA_DIR) + "/../../docs/bench-schema.json";

// Validates the JSON file at path against docs/bench-schema.json with
// python3-jsonschema (Debian's /usr/bin/python3: scripts/setup.sh --test
// installs it). Returns the validator's exit code and message.
Output validate(const std::string& path) {
    return run_program({"/usr/bin/python3", "-c",
                        "import json, sys, jsonschema\n"
                        "schema = json.load(open(sys.argv[1]))\n"
                        "jsonschema.Draft202012Validator.check_schema(schema)\n"
                        "jsonschema.validate(json.load(open(sys.argv[2])), schema,\n"
                        "                    cls=jsonschema.Draft202012Validator)\n",
                        kSchema, path});
}

}  // namespace

TEST_CASE("bench JSON: hyperfine's fields, memory_usage_byte the true tree peaks", "[bench][hyperfine]") {
    TempDir dir;
    const Output out = run_max_rss({"bench", "-r", "3", "-L", "mib", "10,30", fixture("touch") + " {mib}",
                                    "--export-json", dir / "mem.json", "--style", "none"});
    REQUIRE(out.exit_code == 0);
    const json report = json::parse(read_text_file(dir / "mem.json"));
    CHECK(report["schema_version"] == 2);
    REQUIRE(report["results"].size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        const json& result = report["results"][i];
        const double mib = i == 0 ? 10 : 30;
        CHECK(result["command"] == touch_command(static_cast<int>(mib)));
        CHECK(result["parameters"] == json{{"mib", i == 0 ? "10" : "30"}});
        REQUIRE(result["times"].size() == 3);
        REQUIRE(result["memory_usage_byte"].size() == 3);
        CHECK(result["exit_codes"] == json::array({0, 0, 0}));
        std::vector<double> times;
        for (size_t run = 0; run < 3; ++run) {
            // hyperfine's arrays are the runs', in order.
            CHECK(result["memory_usage_byte"][run] == result["runs"][run]["peak_bytes"]);
            CHECK(result["times"][run] == result["runs"][run]["wall_seconds"]);
            const double peak_mib = result["memory_usage_byte"][run].get<double>() / MiB;
            CHECK(peak_mib >= mib);
            CHECK(peak_mib <= mib + 2.5);
            times.push_back(result["times"][run].get<double>());
        }
        std::sort(times.begin(), times.end());
        CHECK(result["min"] == times.front());
        CHECK(result["max"] == times.back());
        CHECK(result["median"] == times[1]);
        CHECK(result["mean"].get<double>() == Approx((times[0] + times[1] + times[2]) / 3));
        CHECK(result["stddev"].is_number());
        CHECK(result["user"].is_number());
        CHECK(result["system"].is_number());
        // The CPU the fixture spent touching its pages shows as user + system time.
        CHECK(result["user"].get<double>() + result["system"].get<double>() > 0);
    }
    CHECK(report["provenance"]["runs"] == 3);
    CHECK(report["provenance"]["backend"] == "ptrace");
    CHECK(report["provenance"]["cpu_count"].get<int>() >= 1);
}

TEST_CASE("bench JSON: a real export and the fixed one match docs/bench-schema.json", "[bench][schema]") {
    TempDir dir;
    REQUIRE(run_max_rss({"bench", "-r", "2", "-n", "ten", touch_command(10), "--export-json", dir / "mem.json",
                         "--style", "none"})
                .exit_code == 0);
    const Output real = validate(dir / "mem.json");
    INFO(real.err);
    CHECK(real.exit_code == 0);
    const Output fixed = validate(std::string(MAX_RSS_TEST_DATA_DIR) + "/export/expected.json");
    INFO(fixed.err);
    CHECK(fixed.exit_code == 0);

    // The check can fail: without hyperfine's "times", the export is refused.
    json broken = json::parse(read_text_file(dir / "mem.json"));
    broken["results"][0].erase("times");
    std::ofstream(dir / "broken.json") << broken.dump();
    const Output refused = validate(dir / "broken.json");
    CHECK(refused.exit_code != 0);
    CHECK(refused.err.find("'times' is a required property") != std::string::npos);
}

// With --backend ebpf the export says so (it said "ptrace" until
// 2026-11-27, and the schema had no such value), and each run reads its own
// peak, a smaller command after a larger one too.
TEST_CASE("bench JSON: --backend ebpf is named in the provenance, and each run has its own peak", "[bench][ebpf]") {
    const Output probe = run_max_rss({"-q", "--backend", "ebpf", "--", "/bin/true"});
    if (probe.exit_code != 0) {
        std::printf("skipped: %s", probe.err.c_str());
        return;
    }
    TempDir dir;
    const Output out = run_max_rss({"bench", "--backend", "ebpf", "-r", "3", touch_command(40), touch_command(10), "--export-json",
                                    dir / "mem.json", "--style", "none"});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    const json report = json::parse(read_text_file(dir / "mem.json"));
    CHECK(report["provenance"]["backend"] == "ebpf");
    REQUIRE(report["results"].size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        const double mib = i == 0 ? 40 : 10;
        for (const json& peak : report["results"][i]["memory_usage_byte"]) {
            CHECK(peak.get<double>() / MiB >= mib);
            CHECK(peak.get<double>() / MiB <= mib + 2.5);
        }
    }
    const Output checked = validate(dir / "mem.json");
    INFO(checked.err);
    CHECK(checked.exit_code == 0);
}

TEST_CASE("bench: --setup, --cleanup, --reference, --sort and the other exports", "[bench][hyperfine]") {
    TempDir dir;
    const std::string log = dir / "log";
    const Output out = run_max_rss({"bench", "-r", "2", "--setup", "echo setup {mib} >> " + log, "--cleanup",
                                    "echo cleanup {mib} >> " + log, "-P", "mib", "10", "20", "-D", "10",
                                    fixture("touch") + " {mib}", "--reference", touch_command(5), "--sort", "mean-peak",
                                    "--export-asciidoc", dir / "mem.adoc", "--export-github-benchmark",
                                    dir / "gab.json", "--export-bencher", dir / "bmf.json", "--export-csv",
                                    dir / "mem.csv"});
    INFO(out.err);
    REQUIRE(out.exit_code == 0);
    // The reference has no parameter, so its {mib} stays as written.
    CHECK(read_text_file(log) ==
          "setup {mib}\ncleanup {mib}\nsetup 10\ncleanup 10\nsetup 20\ncleanup 20\n");
    CHECK(out.err.find("Benchmark 1: " + touch_command(5)) != std::string::npos);
    CHECK(out.err.find(touch_command(10) + " used ") != std::string::npos);
    CHECK(out.err.find(" times more memory than " + touch_command(5)) != std::string::npos);

    const std::string adoc = read_text_file(dir / "mem.adoc");
    CHECK(adoc.starts_with("[cols=\"<,>,>,>,>,>,>,>\"]\n|===\n| Command\n"));
    CHECK(adoc.find("| 1.00\n") != std::string::npos);  // the reference's Relative
    const json gab = json::parse(read_text_file(dir / "gab.json"));
    REQUIRE(gab.size() == 6);  // peak memory and wall time of three commands
    CHECK(gab[0]["name"] == touch_command(5) + " peak memory");
    CHECK(gab[0]["unit"] == "bytes");
    CHECK(gab[0]["extra"].get<std::string>().find("2 runs, 0 warmup, ptrace") != std::string::npos);
    CHECK(gab[1]["unit"] == "s");
    const json bmf = json::parse(read_text_file(dir / "bmf.json"));
    const json& twenty = bmf[touch_command(20)];
    CHECK(twenty["peak-memory"]["value"].get<double>() / MiB >= 20);
    CHECK(twenty["peak-memory"]["lower_value"] <= twenty["peak-memory"]["value"]);
    CHECK(twenty["latency"]["value"].get<double>() > 0);
    CHECK(read_text_file(dir / "mem.csv").find(",parameter_mib,") != std::string::npos);
}

TEST_CASE("bench: per-command budgets and hyperfine's flag conflicts", "[bench]") {
    const Output budgets = run_max_rss({"bench", "-r", "1", "--budget", "64MiB", "--budget", "16MiB", touch_command(10),
                                        touch_command(20), "--style", "none"});
    CHECK(budgets.exit_code == 3);
    CHECK(budgets.err == "max_rss: over budget: " + touch_command(20) + ": median peak " +
                             budgets.err.substr(budgets.err.find("median peak ") + 12,
                                                budgets.err.find(" exceeds") - budgets.err.find("median peak ") - 12) +
                             " exceeds --budget 16.0 MiB\n");
    const auto usage = [](std::vector<std::string> args, const std::string& line) {
        const Output out = run_max_rss(args);
        CHECK(out.exit_code == 2);
        CHECK(out.err == line);
    };
    usage({"bench", "-r", "3", "-m", "2", "true"},
          "max_rss: bench: --runs sets the count; --min-runs and --max-runs bound it when --runs is not given\n");
    usage({"bench", "-m", "9", "-M", "3", "true"}, "max_rss: bench: --min-runs 9 is above --max-runs 3\n");
    usage({"bench", "-P", "n", "1", "3", "-L", "m", "a", "true"},
          "max_rss: bench: --parameter-scan and --parameter-list cannot be combined (as in hyperfine)\n");
    usage({"bench", "-P", "n", "3", "1", "true"}, "max_rss: bench: --parameter-scan: MIN 3 is above MAX 1\n");
    usage({"bench", "--budget", "1MiB", "--budget", "2MiB", "--budget", "3MiB", "a", "b"},
          "max_rss: bench: give --budget once, or once per COMMAND (2), not 3 times\n");
    usage({"bench", "--sort", "fastest", "true"},
          "max_rss: bench: --sort: 'fastest' is not one of auto, command, mean-peak, mean-time\n");
    usage({"bench", "--save-baseline", "../x", "true"},
          "max_rss: bench: --save-baseline: '../x' is not a baseline name (letters, digits, '.', '_', '-'; not "
          "starting with '.')\n");
}
