// Which kind of task a fork/vfork/clone event made. The ptrace event alone
// does not say: clone(CLONE_VM|SIGCHLD) is reported as a fork.
#pragma once

#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/wait_status.hpp>

#include <sys/types.h>

#include <cstdint>

namespace max_rss::ptrace_backend {

// From clone flags: CLONE_THREAD a thread, else CLONE_VM a shared-mm process,
// else a fork (pure).
CloneKind clone_kind_from_flags(uint64_t flags);

// Decodes the kind of child from the creator's registers at the event
// (x86-64: the syscall number and clone flags, clone3's read from its
// memory); elsewhere from /proc and kcmp. creator is stopped at the event.
CloneKind decode_clone(pid_t creator, StopKind event, pid_t child);

}  // namespace max_rss::ptrace_backend
