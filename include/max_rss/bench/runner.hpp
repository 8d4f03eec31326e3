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

}  // namespace max_rss
