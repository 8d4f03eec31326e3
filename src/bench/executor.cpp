#include <max_rss/bench/executor.hpp>

#include <max_rss/engine/measure.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/wait_status.hpp>
#include <max_rss/os/signals.hpp>
#include <max_rss/report/words.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace max_rss {

namespace {

// A termination signal sent to max_rss bench: it ends the benchmark after
// the run it lands in, and the program of that run gets it too (as under
// `max_rss -- prog`), exactly once: straight from the handler while an
// unmeasured program runs, else through g_unforwarded to the next program
// started (measure() takes it once it owns the signals).
std::atomic<int> g_interruption{0};
std::atomic<int> g_unforwarded{0};
std::atomic<pid_t> g_unmeasured_child{0};

void note_interruption(int sig) {
    g_interruption.store(sig);
    if (const pid_t child = g_unmeasured_child.load(); child > 0) ::kill(child, sig);
    else g_unforwarded.store(sig);
}

// SIGUSR1/SIGUSR2 end nothing, as under `max_rss -- prog`: passed on to an
// unmeasured program (--prepare, --conclude) as they are to a measured one;
// between programs, nobody is there to get them. Their default action would
// kill bench and lose every result so far.
void pass_on(int sig) {
    if (const pid_t child = g_unmeasured_child.load(); child > 0) ::kill(child, sig);
}

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

struct CpuSeconds {
    double user = 0;
    double system = 0;
};

double seconds_of(const timeval& time) {
    return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

CpuSeconds children_cpu_seconds() {
    rusage usage{};
    if (::getrusage(RUSAGE_CHILDREN, &usage) != 0) return {};
    return {seconds_of(usage.ru_utime), seconds_of(usage.ru_stime)};
}

}  // namespace

struct TracingExecutor::SavedHandlers {
    struct sigaction previous[std::size(os::kTerminationSignals)] {};
    struct sigaction passed_previous[std::size(os::kPassedSignals)] {};
};

TracingExecutor::TracingExecutor(bool show_output, BackendKind backend)
    : show_output_(show_output), backend_(backend), saved_(std::make_unique<SavedHandlers>()) {
    prepare_backend(backend_, keep_);  // before the handlers: a refusal leaves nothing to restore
    g_interruption.store(0);
    g_unforwarded.store(0);
    g_unmeasured_child.store(0);
    struct sigaction sa {};
    sa.sa_handler = note_interruption;  // no SA_RESTART: waitpid returns EINTR
    // One handler at a time: a signal cannot overtake the one before it.
    sigemptyset(&sa.sa_mask);
    for (int sig : os::kTerminationSignals) sigaddset(&sa.sa_mask, sig);
    for (int sig : os::kPassedSignals) sigaddset(&sa.sa_mask, sig);
    for (size_t i = 0; i < std::size(os::kTerminationSignals); ++i) {
        ::sigaction(os::kTerminationSignals[i], nullptr, &saved_->previous[i]);
        // An ignored signal stays ignored, for us and the programs (as a shell does
        // under nohup). Caught ones are reset to the default by exec.
        if (saved_->previous[i].sa_handler != SIG_IGN) ::sigaction(os::kTerminationSignals[i], &sa, nullptr);
    }
    sa.sa_handler = pass_on;
    for (size_t i = 0; i < std::size(os::kPassedSignals); ++i) {
        ::sigaction(os::kPassedSignals[i], nullptr, &saved_->passed_previous[i]);
        if (saved_->passed_previous[i].sa_handler != SIG_IGN) ::sigaction(os::kPassedSignals[i], &sa, nullptr);
    }
}

TracingExecutor::~TracingExecutor() {
    for (size_t i = 0; i < std::size(os::kTerminationSignals); ++i) {
        ::sigaction(os::kTerminationSignals[i], &saved_->previous[i], nullptr);
    }
    for (size_t i = 0; i < std::size(os::kPassedSignals); ++i)
        ::sigaction(os::kPassedSignals[i], &saved_->passed_previous[i], nullptr);
}

MeasuredRun TracingExecutor::measure(const std::vector<std::string>& argv) {
    MeasureOptions options;
    options.argv = argv;
    options.backend = backend_;
    options.keep = &keep_;
    options.take_early_signal = [] { return g_unforwarded.exchange(0); };
    RunResult result;
    // CPU time as hyperfine reads it: what the reaped children added. The
    // tree's processes count once their parents (max_rss for the root) reap
    // them; orphans reaped by init do not.
    const CpuSeconds before = children_cpu_seconds();
    {
        NullStdio null_stdio(show_output_);
        result = max_rss::measure(options);
    }
    const CpuSeconds after = children_cpu_seconds();
    // A signal that came while the run was measured went to the program (it
    // may have handled it and exited 0): it still means "stop", for bench.
    if (result.interrupted_by_signal && g_interruption.load() == 0) g_interruption.store(*result.interrupted_by_signal);
    MeasuredRun measured;
    measured.run.peak_bytes = result.peak.tree_bytes;
    measured.run.ru_maxrss_bytes = result.ru_maxrss_bytes;
    measured.run.exit_code = result.exit.shell_code();
    measured.run.wall_seconds = result.wall_seconds;
    measured.run.degraded = result.degraded;
    measured.run.user_seconds = std::max(0.0, after.user - before.user);
    measured.run.system_seconds = std::max(0.0, after.system - before.system);
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
    // Every signal bench handles waits (blocked) until the handler knows the
    // program's pid: SIGUSR1/2 that came while it starts reach it, not
    // nobody, and a SIGTERM sent after a SIGUSR1 cannot overtake it (with
    // only SIGUSR1 blocked it could, and end the program before its SIGUSR1
    // came). Signals pending together are delivered lowest number first, so
    // a SIGINT or SIGHUP sent just after a SIGUSR1 in this window does
    // overtake it. The program starts with the mask bench had.
    sigset_t handled, before;
    sigemptyset(&handled);
    for (int sig : os::kPassedSignals) sigaddset(&handled, sig);
    for (int sig : os::kTerminationSignals) sigaddset(&handled, sig);
    ::pthread_sigmask(SIG_BLOCK, &handled, &before);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setsigmask(&attributes, &before);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    const int error = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    ExitStatus exit;
    if (error != 0) {
        // As a shell would report it.
        exit.code = (error == ENOENT || error == ENOTDIR) ? exit_code::not_found : exit_code::not_executable;
        return exit;
    }
    // From here the handler passes a signal on itself; one that came before
    // the spawn is passed on first, then those that came during it (in
    // signal-number order: the kernel delivers blocked ones so).
    g_unmeasured_child.store(pid);
    if (const int sig = g_unforwarded.exchange(0); sig > 0) ::kill(pid, sig);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    int status = 0;
    int wait_error = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            wait_error = errno;
            break;
        }
    }
    g_unmeasured_child.store(0);
    if (wait_error != 0) throw TracerError(fmt::format("waitpid: {}", std::strerror(wait_error)));
    return WaitStatus(status).exit_status();
}

std::optional<int> TracingExecutor::interruption() const {
    const int sig = g_interruption.load();
    if (sig == 0) return std::nullopt;
    return sig;
}

}  // namespace max_rss
