// The loop of `max_rss bench` and the executor that runs it under trace().
#include <max_rss/bench.hpp>

#include <max_rss/engine/measure.hpp>
#include <max_rss/report/words.hpp>

#include <fmt/format.h>

#include <algorithm>
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

constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

bool is_interrupt_signal(int sig) {
    return std::find(std::begin(kInterruptSignals), std::end(kInterruptSignals), sig) != std::end(kInterruptSignals);
}

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

// "exited with code 1", "was killed by SIGSEGV (core dumped)"
std::string describe_failure(const ExitStatus& exit) {
    if (exit.signal) return fmt::format("was killed by {}{}", signal_name(*exit.signal), exit.core_dumped ? " (core dumped)" : "");
    return fmt::format("exited with code {}", exit.shell_code());
}

[[noreturn]] void throw_interrupted(int sig) {
    throw BenchAborted(fmt::format("interrupted by {}", signal_name(sig)), 128 + sig);
}

}  // namespace

BenchOutcome run_benchmark(const BenchCommand& command, const BenchSettings& settings, BenchExecutor& executor,
                           const ProgressCallback& progress) {
    BenchOutcome outcome;
    outcome.result.command = command.command;
    outcome.result.name = command.name;
    outcome.result.runs.reserve(settings.runs);

    BenchProgress state;
    state.runs_planned = settings.warmup + settings.runs;
    state.result = &outcome.result;
    const auto report = [&](bool warmup, unsigned done, unsigned total) {
        if (!progress) return;
        state.warmup = warmup;
        state.done = done;
        state.total = total;
        progress(state);
    };
    const auto check_interruption = [&](const ExitStatus& exit) {
        if (const auto sig = executor.interruption()) throw_interrupted(*sig);
        // A terminal's ^C reaches the whole process group, and trace() forwards
        // kill(1)'s signals to the program: either way the program dies of it.
        if (exit.signal && is_interrupt_signal(*exit.signal)) throw_interrupted(*exit.signal);
    };
    const auto prepare = [&]() {
        if (command.prepare_argv.empty()) return;
        const ExitStatus exit = executor.run_unmeasured(command.prepare_argv);
        check_interruption(exit);
        if (exit.shell_code() != 0) {
            throw BenchAborted(fmt::format("the --prepare command '{}' {} (a failing --prepare always stops the "
                                           "benchmark)",
                                           command.prepare, describe_failure(exit)),
                               exit.shell_code());
        }
    };
    const auto run_once = [&](bool warmup) {
        prepare();
        MeasuredRun measured = executor.measure(command.argv);
        state.elapsed_seconds += measured.run.wall_seconds;
        ++state.runs_finished;
        check_interruption(measured.exit);
        if (measured.exit.shell_code() != 0 && !settings.ignore_failure) {
            throw BenchAborted(fmt::format("{}'{}' {} (use -i/--ignore-failure to go on regardless, --show-output "
                                           "to see its output)",
                                           warmup ? "a warmup run of " : "", command.command,
                                           describe_failure(measured.exit)),
                               measured.exit.shell_code());
        }
        return measured;
    };

    for (unsigned i = 0; i < settings.warmup; ++i) {
        report(true, i, settings.warmup);
        run_once(true);
    }
    for (unsigned i = 0; i < settings.runs; ++i) {
        report(false, i, settings.runs);
        MeasuredRun measured = run_once(false);
        if (measured.run.exit_code != 0) ++outcome.failed_runs;
        std::vector<std::string>& warnings = outcome.result.warnings;
        for (std::string& warning : measured.warnings) {
            if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) {
                warnings.push_back(std::move(warning));
            }
        }
        outcome.result.runs.push_back(measured.run);
    }
    report(false, settings.runs, settings.runs);
    return outcome;
}

// --- The real executor ---------------------------------------------------------

namespace {

std::atomic<int> g_interruption{0};

void note_interruption(int sig) { g_interruption.store(sig); }

// Points fds 0 (and 1, 2 unless keep_output) at /dev/null until destroyed.
// The saved copies are close-on-exec, so the program never inherits them.
class NullStdio {
public:
    explicit NullStdio(bool keep_output) {
        std::fflush(stdout);
        std::fflush(stderr);
        int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd >= 0 && null_fd <= 2) {
            // One of 0-2 was closed: keep /dev/null out of the slots we save.
            const int high = ::fcntl(null_fd, F_DUPFD_CLOEXEC, 3);
            ::close(null_fd);
            null_fd = high;
        }
        if (null_fd < 0) throw TracerError(fmt::format("cannot open /dev/null: {}", std::strerror(errno)));
        const int count = keep_output ? 1 : 3;
        for (int fd = 0; fd < count; ++fd) {
            saved_[fd] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);  // -1 when fd was closed
            ::dup2(null_fd, fd);
        }
        ::close(null_fd);
        count_ = count;
    }
    ~NullStdio() {
        for (int fd = 0; fd < count_; ++fd) {
            if (saved_[fd] >= 0) {
                ::dup2(saved_[fd], fd);
                ::close(saved_[fd]);
            } else {
                ::close(fd);
            }
        }
    }
    NullStdio(const NullStdio&) = delete;
    NullStdio& operator=(const NullStdio&) = delete;

private:
    int saved_[3] = {-1, -1, -1};
    int count_ = 0;
};

}  // namespace

struct TracingExecutor::SavedHandlers {
    struct sigaction previous[std::size(kInterruptSignals)] {};
};

TracingExecutor::TracingExecutor(bool show_output)
    : show_output_(show_output), saved_(std::make_unique<SavedHandlers>()) {
    g_interruption.store(0);
    struct sigaction sa {};
    sa.sa_handler = note_interruption;  // no SA_RESTART: waitpid returns EINTR
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kInterruptSignals); ++i) {
        ::sigaction(kInterruptSignals[i], nullptr, &saved_->previous[i]);
        // An ignored signal stays ignored, for us and the programs (as a shell does
        // under nohup). Caught ones are reset to the default by exec.
        if (saved_->previous[i].sa_handler != SIG_IGN) ::sigaction(kInterruptSignals[i], &sa, nullptr);
    }
}

TracingExecutor::~TracingExecutor() {
    for (size_t i = 0; i < std::size(kInterruptSignals); ++i) {
        ::sigaction(kInterruptSignals[i], &saved_->previous[i], nullptr);
    }
}

MeasuredRun TracingExecutor::measure(const std::vector<std::string>& argv) {
    MeasureOptions options;
    options.argv = argv;
    RunResult result;
    {
        NullStdio null_stdio(show_output_);
        result = max_rss::measure(options);
    }
    MeasuredRun measured;
    measured.run.peak_bytes = result.peak.tree_bytes;
    measured.run.ru_maxrss_bytes = result.ru_maxrss_bytes;
    measured.run.exit_code = result.exit.shell_code();
    measured.run.wall_seconds = result.wall_seconds;
    measured.run.degraded = result.degraded;
    measured.exit = result.exit;
    // With stderr on /dev/null the tracer's own warning about it was lost:
    // the reason goes with the run.
    if (result.degraded) measured.warnings.push_back(describe(result.degradation));
    for (const Warning& warning : result.warnings) measured.warnings.push_back(describe(warning));
    return measured;
}

ExitStatus TracingExecutor::run_unmeasured(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!show_output_) {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    const int error = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ExitStatus exit;
    if (error != 0) {
        // As a shell would report it.
        exit.code = (error == ENOENT || error == ENOTDIR) ? 127 : 126;
        return exit;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) throw TracerError(fmt::format("waitpid: {}", std::strerror(errno)));
    }
    if (WIFEXITED(status)) {
        exit.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        exit.signal = WTERMSIG(status);
        exit.core_dumped = WCOREDUMP(status);
    }
    return exit;
}

std::optional<int> TracingExecutor::interruption() const {
    const int sig = g_interruption.load();
    if (sig == 0) return std::nullopt;
    return sig;
}

}  // namespace max_rss
