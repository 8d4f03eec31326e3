// What the ptrace backend does with a stopped task once its stop is handled.
// Handlers queue actions; the backend's apply() is the one place that
// resumes tasks. A task with no action queued stays stopped (held).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace max_rss::ptrace_backend {

struct Action {
    enum class Kind : uint8_t {
        Resume,   // PTRACE_CONT with signal (0: none)
        Listen,   // a group-stop: stay stopped, as untraced, until SIGCONT
        Syscall,  // PTRACE_SYSCALL: a task running the release filter's installation
    };
    pid_t tid = 0;
    Kind kind = Kind::Resume;
    int signal = 0;
    // Resumed from a seccomp stop after a snapshot (which takes a while): a
    // SIGKILL meanwhile may have moved it on to its exit stop, unreported;
    // resuming it there would pass over that stop. Checked before resuming.
    bool from_seccomp_stop = false;
};

using Actions = std::vector<Action>;

inline void queue_resume(Actions& actions, pid_t tid, int signal = 0) {
    actions.push_back(Action{tid, Action::Kind::Resume, signal});
}

}  // namespace max_rss::ptrace_backend
