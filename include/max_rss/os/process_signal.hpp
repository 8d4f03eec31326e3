// Signals to a process max_rss did not start and does not wait for: by the
// time the signal goes, its pid may have been reaped by its own parent and
// reused by an unrelated process (pid_max is 32768 on a 2-CPU machine; a
// fork-heavy tree wraps it in seconds).
#pragma once

#include <sys/types.h>

#include <functional>

namespace max_rss::os {

// Sends sig to pid if, once the pid is pinned (a pidfd: from then on it names
// that one process, alive or not), still_ours() says it is the process meant.
// True when sent. Where no pidfd can be had (Linux before 5.3, a seccomp
// policy, no free descriptor) it checks, then kills.
bool signal_if(pid_t pid, int sig, const std::function<bool()>& still_ours);

}  // namespace max_rss::os
