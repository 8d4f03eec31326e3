// `max_rss bench`: the benchmark loop (warmup, prepare, measured runs) behind a
// small executor interface, and the human output built as strings. Nothing
// here parses options or writes to a terminal.
#pragma once

#include <max_rss/bench_model.hpp>
#include <max_rss/model.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// ---------------------------------------------------------------------------
// Commands

// Splits a command line into words the way hyperfine's -N does (and a POSIX
// shell would, minus expansions): blanks separate words; '...' is literal;
// "..." is literal except for \" \\ \$ \` and backslash-newline; outside
// quotes a backslash escapes the next character. No globbing, variables,
// redirections or pipes: "a|b" is one word. Throws std::invalid_argument with
// one line ("unterminated single quote", "unterminated double quote",
// "nothing after the final backslash") when the text cannot be split.
std::vector<std::string> split_command_words(std::string_view command);

// The argv that runs command: {shell, "-c", command} ({shell, "-c", "--",
// command} when command starts with '-'), or, when shell is nullopt
// (--shell=none), split_command_words(command).
std::vector<std::string> command_argv(const std::string& command, const std::optional<std::string>& shell);



// ---------------------------------------------------------------------------
// The loop

// One command to benchmark, ready to run.
struct BenchCommand {
    std::string command;                    // as the user gave it
    std::string name;                       // --command-name; empty when none
    std::vector<std::string> argv;          // what is executed
    std::string prepare;                    // --prepare as given; empty when none
    std::vector<std::string> prepare_argv;  // what is executed before each run
};

struct BenchSettings {
    unsigned runs = 5;    // measured runs per command, at least 1
    unsigned warmup = 0;  // unrecorded runs before them
    bool ignore_failure = false;
};

// One measured execution as the executor saw it.
struct MeasuredRun {
    BenchRun run;
    ExitStatus exit;
    // The tracer's (unmeasured pids, ...); first, when the run was degraded, why.
    std::vector<std::string> warnings;
};

// Runs programs for the loop; tests plug in a fake.
class BenchExecutor {
public:
    virtual ~BenchExecutor() = default;
    // Runs argv to completion under measurement. May throw LaunchError.
    virtual MeasuredRun measure(const std::vector<std::string>& argv) = 0;
    // Runs argv to completion, unmeasured (a --prepare command).
    virtual ExitStatus run_unmeasured(const std::vector<std::string>& argv) = 0;
    // The signal that asked max_rss itself to stop (SIGINT, SIGTERM, SIGHUP,
    // SIGQUIT), once one did.
    [[nodiscard]] virtual std::optional<int> interruption() const { return std::nullopt; }
};

// Where the loop is, reported before every run and once after the last.
struct BenchProgress {
    bool warmup = false;    // true while warmup runs remain
    unsigned done = 0;      // runs finished in this phase
    unsigned total = 0;     // runs in this phase
    double elapsed_seconds = 0;             // wall time of this command's runs so far
    unsigned runs_finished = 0;             // warmup and measured runs finished
    unsigned runs_planned = 0;              // warmup + measured
    const BenchResult* result = nullptr;    // the measured runs so far
};
using ProgressCallback = std::function<void(const BenchProgress&)>;

// The benchmark cannot go on. what() is one line without the "max_rss: "
// prefix; exit_code is what max_rss exits with.
struct BenchAborted : std::runtime_error {
    int exit_code;
    BenchAborted(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
};

struct BenchOutcome {
    BenchResult result;  // with the tracer's warnings, each once, in order
    unsigned failed_runs = 0;  // measured runs with a non-zero exit (ignored)
};

// Runs command's warmup runs, then its measured runs, each preceded by its
// prepare command. Throws BenchAborted:
//  - a run (warmup or measured) exits non-zero and !ignore_failure: its exit code;
//  - the prepare command exits non-zero (always): its exit code;
//  - a run or prepare is killed by SIGINT/SIGTERM/SIGHUP/SIGQUIT, or the
//    executor reports an interruption (always): 128 + signal.
// LaunchError from the executor passes through.
BenchOutcome run_benchmark(const BenchCommand& command, const BenchSettings& settings, BenchExecutor& executor,
                           const ProgressCallback& progress = {});

// The executor behind `max_rss bench`: trace() for measured runs (the peak is
// RunResult::peak.tree_bytes, whatever argv is: a shell running a command is
// measured with it), posix_spawn for prepare commands. stdin is /dev/null; stdout and stderr are /dev/null
// too unless show_output. While it exists, SIGINT, SIGTERM, SIGHUP and SIGQUIT
// only mark max_rss as interrupted (trace() forwards them to the program).
class TracingExecutor : public BenchExecutor {
public:
    explicit TracingExecutor(bool show_output);
    ~TracingExecutor() override;
    TracingExecutor(const TracingExecutor&) = delete;
    TracingExecutor& operator=(const TracingExecutor&) = delete;

    MeasuredRun measure(const std::vector<std::string>& argv) override;
    ExitStatus run_unmeasured(const std::vector<std::string>& argv) override;
    [[nodiscard]] std::optional<int> interruption() const override;

private:
    struct SavedHandlers;
    bool show_output_;
    std::unique_ptr<SavedHandlers> saved_;
};

// ---------------------------------------------------------------------------
// Human output

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
// All four sizes use the unit that suits the mean (B, KiB, MiB, ...), one
// decimal (none for bytes). The ru_maxrss bracket (its mean) is left out when
// no run has one. A single run prints "  Peak (abs ≡):" and no Range line.
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

// The closing comparison of several commands, against the one with the
// smallest mean peak:
//   "Summary\n"
//   "  touch 100 used 1.98 ± 0.01 times more memory than touch 50\n"
// Empty for fewer than two results. When the smallest mean peak is 0 there
// is no ratio: "  no ratios: NAME's peak is 0 B\n".
std::string format_bench_summary(std::span<const BenchResult> results, bool color);

// One progress line (no line end), at most about 80 columns, a 20-cell bar:
//   "Warmup        2/3  █████████████░░░░░░░  ETA 00:00:01"
//   "Measuring     3/5  ████████████░░░░░░░░  ETA 00:00:02  estimate: 101.2 MiB"
// ETA from the mean wall time of the runs finished so far; "--:--:--" before
// the first one. estimate: the mean peak of the measured runs so far.
std::string format_progress_line(const BenchProgress& progress, bool color);

// "max_rss: over budget: NAME: median peak 101.2 MiB exceeds --budget 50.0 MiB\n"
// for every result whose median peak is above budget_bytes; empty if none.
std::string format_budget_violations(std::span<const BenchResult> results, uint64_t budget_bytes);

}  // namespace max_rss
