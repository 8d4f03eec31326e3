// bench's human output, built as strings: headers, statistics, the progress
// line, the closing summary. Only cli/ writes them to the terminal.
#pragma once

#include <max_rss/bench/model.hpp>
#include <max_rss/bench/runner.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace max_rss {

// --style, as hyperfine has it.
enum class BenchStyle { Auto, Basic, Full, NoColor, Color, None };

// "auto", "basic", "full", "nocolor", "color", "none"; nullopt otherwise.
std::optional<BenchStyle> parse_bench_style(std::string_view text);

// What the output does once --style is resolved.
struct OutputStyle {
    bool show = true;       // false: no human output at all (errors still print)
    bool progress = false;  // an interactive progress bar
    bool color = false;     // ANSI colours
};

// auto: full on a terminal (nocolor when NO_COLOR is set and non-empty),
// basic elsewhere. basic: neither bar nor colour; full: both; nocolor: the bar
// only; color: colour only; none: nothing. An explicit style ignores NO_COLOR.
OutputStyle resolve_style(BenchStyle style, bool stderr_is_terminal, bool no_color_set);

// "Benchmark 1: NAME\n" (number counts from 1).
std::string format_bench_header(size_t number, const BenchResult& result, bool color);

// The statistics of one command, aligned like hyperfine's:
//   "  Peak (mean ± σ):    101.2 MiB ±    0.1 MiB    [ru_maxrss: 101.3 MiB]\n"
//   "  Range (min … max):  101.1 MiB …  101.4 MiB    5 runs\n"
//   "  Time (mean ± σ):     0.038 s ±    0.002 s    [User: 0.011 s, System: 0.026 s]\n"
// All four sizes use the unit that suits the mean (B, KiB, MiB, ...), one
// decimal (none for bytes). The ru_maxrss bracket (its mean) is left out when
// no run has one. Times are wall seconds, user and system CPU means. A single
// run prints "  Peak (abs ≡):" and "  Time (abs ≡):" and no Range line.
// Nothing for a result without runs.
std::string format_bench_statistics(const BenchResult& result, bool color);

// What the user must know about a command's runs, one "  Warning: " line
// each: how many were degraded, how many failed (ignored with -i), then
// result.warnings:
//   "  Warning: 2 of 5 runs degraded (sampled, not traced: peaks may be low)\n"
//   "  Warning: 1 of 5 runs exited with a non-zero code (ignored: -i)\n"
//   "  Warning: <warning>\n"
// Empty when there is nothing to say.
std::string format_bench_warnings(const BenchResult& result, unsigned failed_runs);

// "2 of 5 runs degraded (sampled, not traced: peaks may be low)", or empty
// when no run of result was degraded. Also what the Markdown export says.
std::string describe_degraded_runs(const BenchResult& result);

// The closing comparison of several commands, against the reference (the
// --reference command, else the smallest mean peak), in --sort's summary order:
//   "Summary\n"
//   "  touch 100 used 1.98 ± 0.01 times more memory than touch 50\n"
//   "  touch 10 used 5.02 ± 0.03 times less memory than touch 50\n"   (below a --reference)
// Empty for fewer than two results. When the reference's mean peak is 0 there
// is no ratio: "  no ratios: NAME's peak is 0 B\n".
std::string format_bench_summary(std::span<const BenchResult> results, BenchSort sort, bool color);

// One progress line (no line end), at most about 80 columns, a 20-cell bar:
//   "Warmup        2/3  █████████████░░░░░░░  ETA 00:00:01"
//   "Measuring     3/5  ████████████░░░░░░░░  ETA 00:00:02  estimate: 101.2 MiB"
// ETA from the mean wall time of the runs finished so far; "--:--:--" before
// the first one. estimate: the mean peak of the measured runs so far.
std::string format_progress_line(const BenchProgress& progress, bool color);

// "max_rss: over budget: NAME: median peak 101.2 MiB exceeds --budget 50.0 MiB\n"
// for every result whose median peak is above its budget_bytes; empty if none.
std::string format_budget_violations(std::span<const BenchResult> results);

}  // namespace max_rss
