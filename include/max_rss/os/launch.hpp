// Starting the measured program: fork, optionally PTRACE_SEIZE, then exec.
// Exec failures come back through a CLOEXEC pipe.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

struct sock_fprog;

namespace max_rss::os {

struct LaunchSpec {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH like execvp
    // The signal mask the program starts with (max_rss's own, from before it
    // blocked anything: SignalHub::original_mask()).
    sigset_t child_mask{};
    // 0: do not trace. Otherwise PTRACE_SEIZE with these options.
    unsigned long ptrace_options = 0;
    // Installed in the child before exec when it was seized (ptrace only):
    // a seccomp filter whose SECCOMP_RET_TRACE stops come to max_rss.
    const sock_fprog* seccomp_filter = nullptr;
    // Runs in max_rss after the child is seized and before it may exec (e.g.
    // to move it into a cgroup).
    std::function<void(pid_t)> before_release;
};

struct Launched {
    pid_t pid = 0;
    bool traced = false;      // PTRACE_SEIZE succeeded
    int seize_errno = 0;      // why not, when ptrace was asked for and refused
    int report_fd = -1;       // read end of the child's CLOEXEC report pipe (owned by caller)
};

// What the child reported through the pipe before exec (or before giving up).
struct LaunchReport {
    int seccomp_errno = 0;  // the seccomp filter could not be installed
    int exec_errno = 0;     // exec failed: the child exited 126 or 127
    // The child's high-water mark just before its exec: it was a copy of
    // max_rss, and wait4's ru_maxrss for the program counts it. 0: unknown.
    uint64_t pre_exec_max_rss_bytes = 0;
};

// Forks and starts spec.argv (execvp-like PATH search, ENOEXEC scripts run by
// /bin/sh). Only async-signal-safe calls are made in the child. Throws
// TracerError when fork or pipe fails.
Launched launch(const LaunchSpec& spec);

// Reads what the child wrote and closes report_fd; call once the child has
// exec'd or exited (the pipe then reads EOF).
LaunchReport read_launch_report(int& report_fd);

// The LaunchError for an exec that failed with exec_errno:
// "NAME: command not found" (127) or "NAME: <strerror>" (126).
[[noreturn]] void throw_launch_error(const std::string& name, int exec_errno);

// Resolves a command name the way execvp would, for messages and early checks.
// nullopt: nothing of that name in PATH.
std::optional<std::string> find_in_path(const std::string& name);

}  // namespace max_rss::os
