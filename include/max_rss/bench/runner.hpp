// `max_rss bench`: the benchmark loop (warmup, prepare, measured runs) behind a
// small executor interface, and the human output built as strings. Nothing
// here parses options or writes to a terminal.
#pragma once

#include <max_rss/bench/model.hpp>
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
// An unmeasured command run around the measured ones (--setup, --prepare,
// --cleanup): as given, and what is executed.
struct HelperCommand {
    std::string command;            // empty when none
    std::vector<std::string> argv;  // empty when none
};

struct BenchCommand {
    std::string command;                    // as run (parameters substituted)
    std::string name;                       // --command-name; empty when none
    std::vector<std::string> argv;          // what is executed
    std::string prepare;                    // --prepare as given; empty when none
    std::vector<std::string> prepare_argv;  // what is executed before each run
    HelperCommand setup;                    // once before this command's first run (warmup included)
    HelperCommand cleanup;                  // once after its last run
    std::vector<BenchParameter> parameters;  // -L / --parameter-scan values of this command
    bool reference = false;                 // --reference
    std::optional<uint64_t> budget_bytes;   // --budget for it
};

struct BenchSettings {
    // Measured runs per command, at least 1; 0: as many as fit in
    // min_benchmark_seconds judged by the first measured run, from min_runs
    // to max_runs (hyperfine's --min-runs/--max-runs).
    unsigned runs = 5;
    unsigned min_runs = 10;
    unsigned max_runs = 1000000;
    double min_benchmark_seconds = 3.0;
    unsigned warmup = 0;  // unrecorded runs before them
    bool ignore_failure = false;
};

// The measured runs of a command whose first run took first_run_seconds:
// settings.runs when set, else ceil(min_benchmark_seconds / first_run_seconds)
// within [min_runs, max_runs] (max_runs for a run that took no time).
unsigned planned_runs(const BenchSettings& settings, double first_run_seconds);

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
    BenchResult result;  // with the tracer's warnings, each once, in order; parameters, reference and budget copied
    unsigned failed_runs = 0;  // measured runs with a non-zero exit (ignored)
};

// Runs command's setup command, its warmup runs, then its measured runs, each
// preceded by its prepare command, then its cleanup command. Throws BenchAborted:
//  - a run (warmup or measured) exits non-zero and !ignore_failure: its exit code;
//  - the setup, prepare or cleanup command exits non-zero (always): its exit code;
//  - a run or prepare is killed by SIGINT/SIGTERM/SIGHUP/SIGQUIT, or the
//    executor reports an interruption (always): 128 + signal.
// LaunchError from the executor passes through.
BenchOutcome run_benchmark(const BenchCommand& command, const BenchSettings& settings, BenchExecutor& executor,
                           const ProgressCallback& progress = {});

}  // namespace max_rss
