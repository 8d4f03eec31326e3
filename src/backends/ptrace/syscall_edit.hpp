// Reading and changing the system call a task is stopped at the entry of (a
// seccomp stop). x86-64 only; elsewhere these do nothing and return false.
#pragma once

#include <sys/types.h>

#include <optional>

namespace max_rss::ptrace_backend {

// Clears CLONE_UNTRACED from the clone (flags in a register) or clone3 (flags
// in its struct clone_args, in the task's memory) it is about to make, so the
// child is traced. True when the flag was set and is now clear.
bool clear_clone_untraced(pid_t tid, bool clone3);

// The call's first argument (one PTRACE_PEEKUSER).
std::optional<unsigned long> first_argument(pid_t tid);

// The call is skipped and returns -err.
bool fail_syscall(pid_t tid, int err);

// The request and the target pid of the ptrace(2) call tid is stopped at the
// entry of; false when they cannot be read.
struct PtraceCall {
    long request = 0;
    pid_t target = 0;
};
bool read_ptrace_call(pid_t tid, PtraceCall& call);

// Whether tid is still stopped at a seccomp stop (a system call's entry).
// False once it left it (a SIGKILL woke it: its exit stop comes next, or is
// already there unreported). Where the kernel cannot say (before Linux 5.3),
// true.
bool still_at_seccomp_stop(pid_t tid);

}  // namespace max_rss::ptrace_backend
