// The loop of `max_rss bench`: commands, warmup, prepare, measured runs.
#include <max_rss/bench/runner.hpp>
#include <max_rss/os/signals.hpp>
#include <max_rss/util/text.hpp>

#include <max_rss/engine/measure.hpp>
#include <max_rss/report/words.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace max_rss {

// --- Commands ------------------------------------------------------------------

std::vector<std::string> split_command_words(std::string_view command) {
    enum class State { Blank, Word, Single, Double };
    std::vector<std::string> words;
    std::string word;
    State state = State::Blank;
    const auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
    for (size_t i = 0; i < command.size(); ++i) {
        const char c = command[i];
        switch (state) {
            case State::Blank:
            case State::Word:
                if (is_blank(c)) {
                    if (state == State::Word) words.push_back(std::exchange(word, {}));
                    state = State::Blank;
                    break;
                }
                state = State::Word;
                if (c == '\'') {
                    state = State::Single;
                } else if (c == '"') {
                    state = State::Double;
                } else if (c == '\\') {
                    if (i + 1 == command.size()) throw std::invalid_argument("nothing after the final backslash");
                    const char next = command[++i];
                    if (next != '\n') word += next;  // backslash-newline continues the line
                } else {
                    word += c;
                }
                break;
            case State::Single:
                if (c == '\'') state = State::Word;
                else word += c;
                break;
            case State::Double:
                if (c == '"') {
                    state = State::Word;
                } else if (c == '\\' && i + 1 < command.size() &&
                           std::string_view("$`\"\\\n").find(command[i + 1]) != std::string_view::npos) {
                    const char next = command[++i];
                    if (next != '\n') word += next;
                } else {
                    word += c;
                }
                break;
        }
    }
    if (state == State::Single) throw std::invalid_argument("unterminated single quote");
    if (state == State::Double) throw std::invalid_argument("unterminated double quote");
    if (state == State::Word) words.push_back(std::move(word));
    return words;
}

std::vector<std::string> command_argv(const std::string& command, const std::optional<std::string>& shell) {
    if (!shell) return split_command_words(command);
    // The shell would read "-n" as its own option.
    if (command.starts_with('-')) return {*shell, "-c", "--", command};
    return {*shell, "-c", command};
}

// --- The loop ------------------------------------------------------------------

namespace {


// "exited with code 1", "was killed by SIGSEGV (core dumped)"
std::string describe_failure(const ExitStatus& exit) {
    if (exit.signal) return fmt::format("was killed by {}{}", signal_name(*exit.signal), exit.core_dumped ? " (core dumped)" : "");
    return fmt::format("exited with code {}", exit.shell_code());
}

[[noreturn]] void throw_interrupted(int sig) {
    throw BenchAborted(fmt::format("interrupted by {}", signal_name(sig)), 128 + sig);
}

}  // namespace

unsigned planned_runs(const BenchSettings& settings, double first_run_seconds) {
    if (settings.runs != 0) return settings.runs;
    const double wanted = first_run_seconds > 0 ? std::ceil(settings.min_benchmark_seconds / first_run_seconds)
                                                : static_cast<double>(settings.max_runs);
    const double bounded = std::clamp(wanted, static_cast<double>(settings.min_runs),
                                      static_cast<double>(std::max(settings.min_runs, settings.max_runs)));
    return static_cast<unsigned>(bounded);
}

BenchOutcome run_benchmark(const BenchCommand& command, const BenchSettings& settings, BenchExecutor& executor,
                           const ProgressCallback& progress) {
    BenchOutcome outcome;
    outcome.result.command = command.command;
    outcome.result.name = command.name;
    outcome.result.parameters = command.parameters;
    outcome.result.reference = command.reference;
    outcome.result.budget_bytes = command.budget_bytes;
    // Until the first measured run says how long one takes, plan the fewest.
    unsigned runs = settings.runs != 0 ? settings.runs : settings.min_runs;
    outcome.result.runs.reserve(runs);

    BenchProgress state;
    state.runs_planned = settings.warmup + runs;
    state.result = &outcome.result;
    const auto report = [&](bool warmup, unsigned done, unsigned total) {
        if (!progress) return;
        state.warmup = warmup;
        state.done = done;
        state.total = total;
        progress(state);
    };
    // Only a signal max_rss itself was sent stops the benchmark: a terminal's
    // ^C reaches the whole process group, max_rss too, and one sent to max_rss
    // alone is forwarded to the program. A program that dies of SIGINT or
    // SIGTERM it sent itself (kill $$, raise) has failed like any other: -i
    // goes on past it.
    const auto check_interruption = [&]() {
        if (const auto sig = executor.interruption()) throw_interrupted(*sig);
    };
    const auto helper = [&](const char* option, const std::string& text, const std::vector<std::string>& argv) {
        if (argv.empty()) return;
        const ExitStatus exit = executor.run_unmeasured(argv);
        check_interruption();
        if (exit.shell_code() != 0) {
            throw BenchAborted(fmt::format("the {} command '{}' {} (a failing {} always stops the benchmark)", option,
                                           text, describe_failure(exit), option),
                               exit.shell_code());
        }
    };
    const auto prepare = [&]() { helper("--prepare", command.prepare, command.prepare_argv); };
    const auto run_once = [&](bool warmup) {
        prepare();
        MeasuredRun measured = executor.measure(command.argv);
        state.elapsed_seconds += measured.run.wall_seconds;
        ++state.runs_finished;
        check_interruption();
        if (measured.exit.shell_code() != 0 && !settings.ignore_failure) {
            throw BenchAborted(fmt::format("{}'{}' {} (use -i/--ignore-failure to go on regardless, --show-output "
                                           "to see its output)",
                                           warmup ? "a warmup run of " : "", command.command,
                                           describe_failure(measured.exit)),
                               measured.exit.shell_code());
        }
        return measured;
    };

    helper("--setup", command.setup.command, command.setup.argv);
    for (unsigned i = 0; i < settings.warmup; ++i) {
        report(true, i, settings.warmup);
        run_once(true);
    }
    for (unsigned i = 0; i < runs; ++i) {
        report(false, i, runs);
        MeasuredRun measured = run_once(false);
        if (i == 0) {
            runs = planned_runs(settings, measured.run.wall_seconds);
            state.runs_planned = settings.warmup + runs;
        }
        if (measured.run.exit_code != 0) ++outcome.failed_runs;
        std::vector<std::string>& warnings = outcome.result.warnings;
        for (std::string& warning : measured.warnings) {
            if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) {
                warnings.push_back(std::move(warning));
            }
        }
        outcome.result.runs.push_back(measured.run);
    }
    report(false, runs, runs);
    helper("--cleanup", command.cleanup.command, command.cleanup.argv);
    return outcome;
}

}  // namespace max_rss
