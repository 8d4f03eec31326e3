// Named baselines and compare's outputs, end to end.
#include "helpers.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace max_rss::test;

namespace {


// max_rss with its baselines in dir.
Output with_baselines(const TempDir& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/env", "MAX_RSS_BASELINE_DIR=" + (dir / "baselines"), max_rss_bin()});
    return run_program(args, "", 300);
}

}  // namespace

TEST_CASE("baselines: a benchmark that did not pass never replaces the saved baseline", "[compare_cli][baseline]") {
    TempDir dir;
    REQUIRE(with_baselines(dir, {"bench", "-r", "3", "-n", "a", touch_command(20), "--save-baseline", "main", "--style",
                                 "none"})
                .exit_code == 0);
    const std::string saved = read_text_file(dir / "baselines/main.json");
    const std::string not_saved =
        "max_rss: bench: --save-baseline: not saved, the benchmark did not pass (the saved baseline is unchanged)\n";

    // A failing command (after one that finished), a regression against the
    // baseline being replaced, and a --budget exceeded.
    const Output failed = with_baselines(dir, {"bench", "-r", "1", "-N", "-n", "a", touch_command(20), "-n", "b", "false",
                                               "--save-baseline", "main", "--style", "none"});
    CHECK(failed.exit_code == 1);
    CHECK(failed.err.find(not_saved) != std::string::npos);
    const Output regressed = with_baselines(dir, {"bench", "-r", "5", "-n", "a", touch_command(40), "--compare-baseline",
                                                  "main", "--save-baseline", "main", "--style", "none"});
    CHECK(regressed.exit_code == 1);
    CHECK(regressed.err.find(not_saved) != std::string::npos);
    const Output over = with_baselines(dir, {"bench", "-r", "1", "-n", "a", touch_command(20), "--budget", "1MiB",
                                             "--save-baseline", "main", "--style", "none"});
    CHECK(over.exit_code == 3);
    CHECK(over.err.find(not_saved) != std::string::npos);
    CHECK(read_text_file(dir / "baselines/main.json") == saved);
}

TEST_CASE("baselines: an export to stdout keeps the commands that finished when a later one fails",
          "[compare_cli][baseline]") {
    TempDir dir;
    const Output out = with_baselines(dir, {"bench", "-r", "1", "-N", touch_command(5), "false", "--export-json", "-",
                                            "--style", "none"});
    CHECK(out.exit_code == 1);
    const auto json = nlohmann::json::parse(out.out);
    REQUIRE(json["results"].size() == 1);
    CHECK(json["results"][0]["command"] == touch_command(5));
}

TEST_CASE("baselines: bench --save-baseline, then --compare-baseline and compare --baseline", "[compare_cli][baseline]") {
    TempDir dir;
    const Output saved = with_baselines(dir, {"bench", "-r", "5", "-n", "a", touch_command(20), "--save-baseline", "main",
                                              "--style", "none"});
    REQUIRE(saved.exit_code == 0);
    REQUIRE(std::filesystem::exists(dir / "baselines/main.json"));

    // 20 -> 30 MiB over 5 runs each: a regression, significant.
    const Output gated = with_baselines(dir, {"bench", "-r", "5", "-n", "a", touch_command(30), "--compare-baseline",
                                              "main", "--style", "none", "--export-json", dir / "new.json"});
    CHECK(gated.exit_code == 1);
    CHECK(gated.err.find("Against baseline 'main':") != std::string::npos);
    CHECK(gated.err.find("regression\n") != std::string::npos);

    // compare --baseline NAME NEW, Markdown on stdout, the table then on stderr.
    const Output compared = with_baselines(dir, {"compare", "--baseline", "main", dir / "new.json", "--markdown", "-",
                                                 "--json", dir / "compare.json"});
    CHECK(compared.exit_code == 1);
    CHECK(compared.out.starts_with("### max_rss: peak memory\n"));
    CHECK(compared.out.find("🔴 regression") != std::string::npos);
    CHECK(compared.err.find("1 regression, 0 improvements") != std::string::npos);
    const auto json = nlohmann::json::parse(read_text_file(dir / "compare.json"));
    CHECK(json["rows"][0]["after_runs"] == 5);
    CHECK(json["rows"][0]["p_value"].get<double>() <= 0.05);

    // A larger --min-change than the growth lets it pass.
    CHECK(with_baselines(dir, {"compare", "--baseline", "main", dir / "new.json", "--min-change", "64MiB"}).exit_code ==
          0);

    const Output unknown = with_baselines(dir, {"compare", "--baseline", "nope", dir / "new.json"});
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("max_rss: compare: " + (dir / "baselines/nope.json") +
                           ": cannot read: No such file or directory (baseline 'nope'; `max_rss bench "
                           "--save-baseline nope` saves it)\n") == 0);
    const Output extra = with_baselines(dir, {"compare", "--baseline", "main", "a.json", "b.json"});
    CHECK(extra.exit_code == 2);
    CHECK(extra.err == "max_rss: compare: unexpected argument 'b.json' (--baseline is BASE: give only NEW) (see "
                       "'max_rss compare --help')\n");
    const Output level = with_baselines(dir, {"compare", "a", "b", "--significance", "5"});
    CHECK(level.exit_code == 2);
    CHECK(level.err == "max_rss: compare: --significance: '5' is not a probability between 0 and 1 (try 0.05, "
                       "0.01)\n");
}
