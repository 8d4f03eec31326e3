// scripts/memory-gate.sh, what the GitHub Action (action.yml) runs, with a
// fake $GITHUB_STEP_SUMMARY: the summary is written whatever failed, and the
// gate's status comes last.
#include "helpers.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace max_rss::test;

namespace {

const std::string kGate = std::string(MAX_RSS_TEST_DATA_DIR) + "/../../scripts/memory-gate.sh";

// Runs the gate in dir with the action's inputs as environment variables.
Output gate(const TempDir& dir, const std::vector<std::string>& inputs) {
    std::vector<std::string> argv = {"/usr/bin/env", std::string("MAX_RSS=") + max_rss_bin(),
                                     "GITHUB_STEP_SUMMARY=" + (dir / "summary.md"),
                                     "GITHUB_OUTPUT=" + (dir / "output"), "MAX_RSS_OUT_DIR=" + (dir / "results"),
                                     "MAX_RSS_BASELINE=" + (dir / "baselines/main.json"), "MAX_RSS_RUNS=3",
                                     "MAX_RSS_WARMUP=0"};
    argv.insert(argv.end(), inputs.begin(), inputs.end());
    argv.insert(argv.end(), {"bash", kGate});
    return run_program(argv, "", 300);
}


}  // namespace

TEST_CASE("memory gate: first run saves a baseline, a regression fails after writing the summary", "[action]") {
    TempDir dir;
    // No baseline yet: measured, said, passed; with save-baseline, saved.
    const Output first = gate(dir, {"MAX_RSS_COMMANDS=" + touch_command(10) + "\n" + touch_command(20) + "\n",
                                    "MAX_RSS_NAMES=small\nlarge", "MAX_RSS_SAVE_BASELINE=true"});
    INFO(first.err);
    CHECK(first.exit_code == 0);
    // The summary was written: no false "cannot write" (a review found one on every passing run).
    CHECK(first.err.find("cannot write") == std::string::npos);
    const std::string first_summary = read_text_file(dir / "summary.md");
    CHECK(first_summary.find("No baseline at `" + (dir / "baselines/main.json") + "` yet") != std::string::npos);
    CHECK(first_summary.find("| `small` |") != std::string::npos);
    CHECK(std::filesystem::exists(dir / "baselines/main.json"));

    // large grows from 20 to 40 MiB: compare fails, and the summary says so first.
    std::filesystem::remove(dir / "summary.md");
    const Output regressed =
        gate(dir, {"MAX_RSS_COMMANDS=" + touch_command(10) + "\n" + touch_command(40), "MAX_RSS_NAMES=small\nlarge"});
    INFO(regressed.err);
    CHECK(regressed.exit_code == 1);
    const std::string summary = read_text_file(dir / "summary.md");
    CHECK(summary.starts_with("### max_rss: peak memory\n"));
    CHECK(summary.find("| `large` |") != std::string::npos);
    CHECK(summary.find("🔴 regression |") != std::string::npos);
    CHECK(summary.find("#### This run") != std::string::npos);
    CHECK(read_text_file(dir / "output").find("compare-status=1\n") != std::string::npos);

    // A deleted benchmark fails too, unless allowed.
    std::filesystem::remove(dir / "summary.md");
    const Output deleted = gate(dir, {"MAX_RSS_COMMANDS=" + touch_command(10), "MAX_RSS_NAMES=small"});
    CHECK(deleted.exit_code == 1);
    CHECK(read_text_file(dir / "summary.md").find("**Missing from NEW**") != std::string::npos);
    const Output allowed =
        gate(dir, {"MAX_RSS_COMMANDS=" + touch_command(10), "MAX_RSS_NAMES=small", "MAX_RSS_ALLOW_MISSING=true"});
    CHECK(allowed.exit_code == 0);
}

TEST_CASE("memory gate: over budget, the summary is still written and bench's 3 comes last", "[action]") {
    TempDir dir;
    const Output out = gate(dir, {"MAX_RSS_COMMANDS=" + touch_command(20), "MAX_RSS_BUDGET=8MiB"});
    CHECK(out.exit_code == 3);
    CHECK(out.err.find("max_rss: over budget: ") != std::string::npos);
    const std::string summary = read_text_file(dir / "summary.md");
    CHECK(summary.find("**max_rss bench exited with 3**") != std::string::npos);
    CHECK(summary.find(fixture("touch")) != std::string::npos);

    const Output empty = gate(dir, {"MAX_RSS_COMMANDS="});
    CHECK(empty.exit_code == 2);
    CHECK(empty.err == "memory-gate: MAX_RSS_COMMANDS is empty: give the commands to measure, one per line\n");
}
