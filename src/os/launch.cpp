#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/launch.hpp>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace max_rss::os {
namespace {

enum class Record : int { SeccompFailed = 1, ExecFailed = 2, PreExecMaxRss = 3 };

// Async-signal-safe: only called in the child between fork and exec.
void child_report(int fd, Record kind, int err) {
    int msg[2] = {static_cast<int>(kind), err};
    ssize_t ignored = ::write(fd, msg, sizeof msg);
    (void)ignored;
}

[[noreturn]] void child_main(int go_fd, int report_fd, const sigset_t& mask, const sock_fprog* filter,
                             const std::vector<std::string>& candidates, char* const* argv,
                             char* const* sh_argv_tail) {
    // Until its exec this is a copy of max_rss, with max_rss's handlers: a
    // signal passed on to the program now (a SIGTERM in max_rss's first
    // moment), or a terminal's ^C, would run them here and be lost. Reset
    // them to the default, as the exec would (ignored ones stay ignored),
    // before the mask lets any signal in: the program dies of it, as it
    // would before installing a handler of its own.
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction current {};
        if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &current) != 0) continue;
        if (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL) continue;
        struct sigaction reset {};
        reset.sa_handler = SIG_DFL;
        ::sigaction(sig, &reset, nullptr);
    }
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    char go = 0;
    while (::read(go_fd, &go, 1) < 0 && errno == EINTR) {}
    ::close(go_fd);
    if (go == 'T' && filter) {
        // Without CAP_SYS_ADMIN a filter needs NO_NEW_PRIVS. A non-root tracer
        // already runs setuid programs without elevation, so nothing is lost.
        if (::geteuid() != 0) ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, filter) != 0 &&
            ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, filter, 0, 0) != 0) {
            child_report(report_fd, Record::SeccompFailed, errno);
        }
    } else if (go != 'T' && go != 'U') {
        _exit(exit_code::internal_error);
    }
    // The high-water mark of this copy of max_rss, which wait4's ru_maxrss
    // for the program will include: a backend that trusts ru_maxrss must
    // know which part of it is not the program's (KiB, as the kernel has it).
    struct rusage self {};
    if (::syscall(SYS_getrusage, RUSAGE_SELF, &self) == 0)
        child_report(report_fd, Record::PreExecMaxRss, static_cast<int>(self.ru_maxrss));
    // execvp's rules: try each PATH candidate; EACCES is remembered, ENOENT
    // and ENOTDIR move on, anything else stops; ENOEXEC runs /bin/sh FILE.
    int err = ENOENT;
    bool saw_eacces = false;
    for (const auto& path : candidates) {
        ::execv(path.c_str(), argv);
        err = errno;
        if (err == ENOEXEC) {
            // sh_argv_tail is {"/bin/sh", path-placeholder, argv[1..], NULL}
            char** sh = const_cast<char**>(sh_argv_tail);
            sh[1] = const_cast<char*>(path.c_str());
            ::execv("/bin/sh", sh);
            err = errno;
            break;
        }
        if (err == EACCES) saw_eacces = true;
        else if (err != ENOENT && err != ENOTDIR) break;
    }
    if (saw_eacces && (err == ENOENT || err == ENOTDIR)) err = EACCES;
    child_report(report_fd, Record::ExecFailed, err);
    _exit(err == ENOENT || err == ENOTDIR ? exit_code::not_found : exit_code::not_executable);
}

// execvp's candidate paths for name: name itself when it has a slash, else
// each PATH directory (an empty entry means the current directory).
std::vector<std::string> path_candidates(const std::string& name) {
    if (name.find('/') != std::string::npos) return {name};
    const char* path_env = std::getenv("PATH");
    std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t colon = path.find(':', start);
        std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        out.push_back((dir.empty() ? std::string(".") : dir) + "/" + name);
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return out;
}

}  // namespace

std::optional<std::string> find_in_path(const std::string& name) {
    if (name.empty()) return std::nullopt;
    std::optional<std::string> first_existing;
    for (const auto& candidate : path_candidates(name)) {
        struct stat st {};
        if (::stat(candidate.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (!first_existing) first_existing = candidate;
    }
    return first_existing;
}

Launched launch(const LaunchSpec& spec) {
    const std::vector<std::string>& argv_in = spec.argv;
    // Everything the child needs is built before fork: after fork only
    // async-signal-safe calls are made.
    const std::vector<std::string> candidates = path_candidates(argv_in.at(0));
    std::vector<char*> argv;
    for (const auto& a : argv_in) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    static char sh_path[] = "/bin/sh";
    std::vector<char*> sh_argv{sh_path, nullptr};
    for (size_t i = 1; i < argv_in.size(); ++i) sh_argv.push_back(const_cast<char*>(argv_in[i].c_str()));
    sh_argv.push_back(nullptr);

    int go[2], report[2];
    if (::pipe2(go, O_CLOEXEC) != 0) throw TracerError(std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(report, O_CLOEXEC) != 0) {
        int saved = errno;
        ::close(go[0]);
        ::close(go[1]);
        throw TracerError(std::string("pipe: ") + std::strerror(saved));
    }
    sigset_t all, original;
    sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &original);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(go[1]);
        ::close(report[0]);
        child_main(go[0], report[1], spec.child_mask, spec.seccomp_filter, candidates, argv.data(), sh_argv.data());
    }
    int fork_errno = errno;
    ::sigprocmask(SIG_SETMASK, &original, nullptr);
    ::close(go[0]);
    ::close(report[1]);
    if (pid < 0) {
        ::close(go[1]);
        ::close(report[0]);
        throw TracerError(std::string("fork: ") + std::strerror(fork_errno));
    }
    Launched l;
    l.pid = pid;
    l.report_fd = report[0];
    if (spec.ptrace_options != 0) {
        if (::ptrace(PTRACE_SEIZE, pid, nullptr, spec.ptrace_options) == 0) l.traced = true;
        else l.seize_errno = errno;
    }
    if (spec.before_release) spec.before_release(pid);
    char go_byte = l.traced ? 'T' : 'U';
    ssize_t ignored = ::write(go[1], &go_byte, 1);
    (void)ignored;
    ::close(go[1]);
    return l;
}

LaunchReport read_launch_report(int& report_fd) {
    LaunchReport r;
    if (report_fd < 0) return r;
    int msg[2];
    for (;;) {
        ssize_t n = ::read(report_fd, msg, sizeof msg);
        if (n < 0 && errno == EINTR) continue;
        if (n != static_cast<ssize_t>(sizeof msg)) break;
        if (msg[0] == static_cast<int>(Record::SeccompFailed)) r.seccomp_errno = msg[1];
        if (msg[0] == static_cast<int>(Record::ExecFailed)) r.exec_errno = msg[1];
        if (msg[0] == static_cast<int>(Record::PreExecMaxRss) && msg[1] > 0)
            r.pre_exec_max_rss_bytes = static_cast<uint64_t>(msg[1]) * 1024;
    }
    ::close(report_fd);
    report_fd = -1;
    return r;
}

namespace {

// Whether name is a file that exists: given with a '/', as it is; else the
// first PATH entry that has it (what execvp ran).
bool program_file_exists(const std::string& name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), F_OK) == 0;
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        const size_t colon = dirs.find(':');
        const std::string_view dir = dirs.substr(0, colon);
        const std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return true;
        if (colon == std::string_view::npos) return false;
        dirs.remove_prefix(colon + 1);
    }
}

}  // namespace

void throw_launch_error(const std::string& name, int exec_errno) {
    // An empty name is no command (execvp tries it as each PATH directory).
    if (name.empty()) throw LaunchError("'': command not found", exit_code::not_found);
    const bool not_found = exec_errno == ENOENT || exec_errno == ENOTDIR;
    // ENOENT for a file that is there: its "#!" interpreter or its dynamic
    // loader is missing (bash: "cannot execute: required file not found").
    if (exec_errno == ENOENT && program_file_exists(name))
        throw LaunchError(name + ": cannot execute: required file not found (its #! interpreter or its ELF loader)",
                          exit_code::not_found);
    // EACCES for a directory: say what it is, as a shell does.
    struct stat st {};
    if (exec_errno == EACCES && name.find('/') != std::string::npos && ::stat(name.c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode))
        throw LaunchError(name + ": " + std::strerror(EISDIR), exit_code::not_executable);
    throw LaunchError(name + ": " + (not_found ? "command not found" : std::strerror(exec_errno)),
                      not_found ? exit_code::not_found : exit_code::not_executable);
}

}  // namespace max_rss::os
