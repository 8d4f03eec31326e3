// The human output of `max_rss bench`, compared as exact strings.
#include <max_rss/report/bench_console.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>
#include "units.hpp"

using namespace max_rss;

namespace {


BenchResult result_of(std::string command, std::vector<uint64_t> peaks, std::optional<uint64_t> ru_maxrss = {}) {
    BenchResult result;
    result.command = std::move(command);
    for (uint64_t peak : peaks) result.runs.push_back(BenchRun{peak, ru_maxrss, 0, 0.5});
    return result;
}

// Where each line's first figure ends, in code points: the columns must line up.
size_t column_of(const std::string& line, const std::string& figure) {
    const size_t at = line.find(figure);
    REQUIRE(at != std::string::npos);
    size_t width = 0;
    for (size_t i = 0; i < at + figure.size(); ++i) width += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    return width;
}

}  // namespace

TEST_CASE("bench statistics: mean ± σ, range and ru_maxrss in the mean's unit", "[bench]") {
    const BenchResult result = result_of("./alloc 100", {100 * MiB, 102 * MiB, 101 * MiB}, 99 * MiB);
    const std::string text = format_bench_statistics(result, false);
    CHECK(text ==
          "  Peak (mean ± σ):    101.0 MiB ±    1.0 MiB    [ru_maxrss: 99.0 MiB]\n"
          "  Range (min … max):  100.0 MiB …  102.0 MiB    3 runs\n"
          "  Time (mean ± σ):      0.500 s ±    0.000 s    [User: 0.000 s, System: 0.000 s]\n");
    const std::string first = text.substr(0, text.find('\n'));
    const std::string second = text.substr(text.find('\n') + 1);
    CHECK(column_of(first, "101.0 MiB") == column_of(second, "100.0 MiB"));
}

TEST_CASE("bench statistics: no ru_maxrss bracket without one; KiB and GiB units", "[bench]") {
    CHECK(format_bench_statistics(result_of("a", {512 * KiB, 512 * KiB}), false) ==
          "  Peak (mean ± σ):    512.0 KiB ±    0.0 KiB\n"
          "  Range (min … max):  512.0 KiB …  512.0 KiB    2 runs\n"
          "  Time (mean ± σ):      0.500 s ±    0.000 s    [User: 0.000 s, System: 0.000 s]\n");
    // σ stays in GiB even though it is small.
    CHECK(format_bench_statistics(result_of("b", {GiB + GiB / 2, GiB + GiB / 2 + 100 * MiB}), false) ==
          "  Peak (mean ± σ):      1.5 GiB ±    0.1 GiB\n"
          "  Range (min … max):    1.5 GiB …    1.6 GiB    2 runs\n"
          "  Time (mean ± σ):      0.500 s ±    0.000 s    [User: 0.000 s, System: 0.000 s]\n");
    // Below 1 KiB the figures are whole bytes.
    CHECK(format_bench_statistics(result_of("c", {100, 200}), false) ==
          "  Peak (mean ± σ):        150 B ±       71 B\n"
          "  Range (min … max):      100 B …      200 B    2 runs\n"
          "  Time (mean ± σ):      0.500 s ±    0.000 s    [User: 0.000 s, System: 0.000 s]\n");
    // The mean picks the unit the way format_bytes() does: never "1024.0 KiB".
    CHECK(format_bench_statistics(result_of("d", {MiB - 1, MiB - 1}), false).starts_with(
        "  Peak (mean ± σ):      1.0 MiB ±"));
}

TEST_CASE("bench statistics: one run prints abs ≡ and no range; no runs print nothing", "[bench]") {
    const std::string text = format_bench_statistics(result_of("a", {50 * MiB + 200 * KiB}, 50 * MiB), false);
    CHECK(text ==
          "  Peak (abs ≡):        50.2 MiB    [ru_maxrss: 50.0 MiB]\n"
          "  Time (abs ≡):         0.500 s    [User: 0.000 s, System: 0.000 s]\n");
    const std::string several = format_bench_statistics(result_of("a", {50 * MiB, 50 * MiB}), false);
    CHECK(column_of(text, "50.2 MiB") == column_of(several, "50.0 MiB"));
    CHECK(format_bench_statistics(BenchResult{}, false).empty());
}

TEST_CASE("bench statistics in colour keep the text and add ANSI codes", "[bench]") {
    const BenchResult result = result_of("a", {100 * MiB, 102 * MiB});
    const std::string plain = format_bench_statistics(result, false);
    std::string colored = format_bench_statistics(result, true);
    CHECK(colored.find("\x1b[") != std::string::npos);
    // Without the escape sequences it is the plain text.
    std::string stripped;
    for (size_t i = 0; i < colored.size(); ++i) {
        if (colored[i] == '\x1b') {
            i = colored.find('m', i);
            continue;
        }
        stripped += colored[i];
    }
    CHECK(stripped == plain);
}

TEST_CASE("bench header names the command, or its --command-name", "[bench]") {
    BenchResult result = result_of("sleep 1", {});
    CHECK(format_bench_header(1, result, false) == "Benchmark 1: sleep 1\n");
    result.name = "nap";
    CHECK(format_bench_header(12, result, false) == "Benchmark 12: nap\n");
    CHECK(format_bench_header(1, result, true) == "\x1b[1mBenchmark 1:\x1b[0m nap\n");
}

TEST_CASE("bench summary compares every command with the smallest", "[bench]") {
    std::vector<BenchResult> results = {
        result_of("touch 100", {100 * MiB, 102 * MiB, 104 * MiB}),
        result_of("touch 50", {50 * MiB, 51 * MiB, 52 * MiB}),
        result_of("touch 200", {200 * MiB, 200 * MiB, 200 * MiB}),
    };
    results[2].name = "big";
    CHECK(format_bench_summary(results, BenchSort::Auto, false) ==
          "Summary\n"
          "  touch 100 used 2.00 ± 0.06 times more memory than touch 50\n"
          "  big used 3.92 ± 0.08 times more memory than touch 50\n");
    CHECK(format_bench_summary(std::span(results).first(1), BenchSort::Auto, false).empty());
    CHECK(format_bench_summary({}, BenchSort::Auto, false).empty());
}

TEST_CASE("bench summary without a ratio when the smallest peak is 0", "[bench]") {
    const std::vector<BenchResult> results = {result_of("a", {0, 0}), result_of("b", {MiB})};
    CHECK(format_bench_summary(results, BenchSort::Auto, false) == "Summary\n  no ratios: a's peak is 0 B\n");
}

TEST_CASE("bench progress line: phase, count, bar, ETA and estimate", "[bench]") {
    BenchResult so_far = result_of("a", {100 * MiB, 102 * MiB});
    BenchProgress progress;
    progress.warmup = false;
    progress.done = 2;
    progress.total = 4;
    progress.runs_finished = 3;  // one warmup run, two measured
    progress.runs_planned = 5;
    progress.elapsed_seconds = 90;  // 30 s a run, 2 runs to go
    progress.result = &so_far;
    CHECK(format_progress_line(progress, false) ==
          "Measuring     2/4  ██████████░░░░░░░░░░  ETA 00:01:00  estimate: 101.0 MiB");

    BenchProgress warmup;
    warmup.warmup = true;
    warmup.done = 0;
    warmup.total = 3;
    warmup.runs_planned = 8;
    CHECK(format_progress_line(warmup, false) == "Warmup        0/3  ░░░░░░░░░░░░░░░░░░░░  ETA --:--:--");
}

TEST_CASE("bench budget: one line per command whose median is above it", "[bench]") {
    std::vector<BenchResult> results = {
        result_of("small", {10 * MiB, 60 * MiB, 10 * MiB}),  // one spike, median 10 MiB
        result_of("big", {100 * MiB, 101 * MiB, 102 * MiB}),
        result_of("exact", {50 * MiB}),
    };
    results[1].name = "the big one";
    for (BenchResult& result : results) result.budget_bytes = 50 * MiB;
    CHECK(format_budget_violations(results) ==
          "max_rss: over budget: the big one: median peak 101.0 MiB exceeds --budget 50.0 MiB\n");
    for (BenchResult& result : results) result.budget_bytes = GiB;
    CHECK(format_budget_violations(results).empty());
    // Per-command budgets: each result is held to its own, none to no budget.
    results[0].budget_bytes = 5 * MiB;
    results[1].budget_bytes = std::nullopt;
    CHECK(format_budget_violations(results) ==
          "max_rss: over budget: small: median peak 10.0 MiB exceeds --budget 5.0 MiB\n");
}

TEST_CASE("bench --style values resolve like hyperfine's", "[bench]") {
    CHECK(parse_bench_style("auto") == BenchStyle::Auto);
    CHECK(parse_bench_style("basic") == BenchStyle::Basic);
    CHECK(parse_bench_style("full") == BenchStyle::Full);
    CHECK(parse_bench_style("nocolor") == BenchStyle::NoColor);
    CHECK(parse_bench_style("color") == BenchStyle::Color);
    CHECK(parse_bench_style("none") == BenchStyle::None);
    CHECK_FALSE(parse_bench_style("Full"));
    CHECK_FALSE(parse_bench_style(""));

    const auto is = [](OutputStyle style, bool show, bool progress, bool color) {
        return style.show == show && style.progress == progress && style.color == color;
    };
    CHECK(is(resolve_style(BenchStyle::Auto, true, false), true, true, true));
    CHECK(is(resolve_style(BenchStyle::Auto, true, true), true, true, false));     // NO_COLOR
    CHECK(is(resolve_style(BenchStyle::Auto, false, false), true, false, false));  // not a terminal
    CHECK(is(resolve_style(BenchStyle::Basic, true, false), true, false, false));
    CHECK(is(resolve_style(BenchStyle::Full, false, true), true, true, true));  // explicit wins
    CHECK(is(resolve_style(BenchStyle::NoColor, false, false), true, true, false));
    CHECK(is(resolve_style(BenchStyle::Color, false, false), true, false, true));
    CHECK(is(resolve_style(BenchStyle::None, true, false), false, false, false));
}
