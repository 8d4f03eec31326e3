// Starting the traced program: fork, PTRACE_SEIZE, a seccomp filter that stops
// at execve entry, then exec. Exec failures come back through a CLOEXEC pipe.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace max_rss {

struct Launched {
    pid_t pid = 0;
    bool traced = false;      // PTRACE_SEIZE succeeded
    int seize_errno = 0;      // why not, when !traced
    int report_fd = -1;       // read end of the child's CLOEXEC report pipe (owned by caller)
};

// What the child reported through the pipe before exec (or before giving up).
struct LaunchReport {
    int seccomp_errno = 0;  // the execve-entry filter could not be installed
    int exec_errno = 0;     // exec failed: the child exited 126 or 127
};

// Forks and starts argv (execvp-like PATH search, ENOEXEC scripts run by
// /bin/sh). Signals in block_mask are blocked in max_rss around fork and
// restored in the child, so the program starts with max_rss's own mask.
// Throws TracerError when fork or pipe fails.
// before_release runs in max_rss after the child is seized and before it may
// exec (e.g. to move it into a cgroup).
Launched launch(const std::vector<std::string>& argv, unsigned long ptrace_options,
                const std::function<void(pid_t)>& before_release = {});

// Reads what the child wrote; call once the child has exec'd or exited.
LaunchReport read_launch_report(int report_fd);

// Resolves a command name the way execvp would, for messages and early checks.
// nullopt: nothing of that name in PATH.
std::optional<std::string> find_in_path(const std::string& name);

}  // namespace max_rss
