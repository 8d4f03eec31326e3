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

}  // namespace max_rss::ptrace_backend
