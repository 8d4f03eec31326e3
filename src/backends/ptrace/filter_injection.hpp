// Installing a seccomp filter in a process that already runs: the tracer
// makes one of its stopped tasks run three system calls of max_rss's choosing
//   mmap      a page for the filter (never the task's stack: a goroutine's or
//             a vfork child's may have no room below its stack pointer)
//   seccomp   SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: every
//             thread of the process gets it
//   munmap    the page again
// then puts its registers and its signal mask back as they were, and it goes
// on from where it stopped. The task runs each call from its own `syscall`
// instruction (the one it stopped after), every signal but SIGKILL and
// SIGSTOP blocked meanwhile; a stop signal (or a group-stop) that comes in the
// middle is raised again at the end, unless a SIGCONT came after it. A
// process with seccomp filters of its own (a sandbox, which may trap or kill
// on seccomp or mmap) is not touched. x86-64 only (supported() says so).
#pragma once

#include <max_rss/os/wait_status.hpp>

#include <linux/filter.h>
#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace max_rss::ptrace_backend {

class FilterInjector {
public:
    // How many filters a process of the tree has when it has none of its own
    // (max_rss's own, inherited, and the launch filter); with more, the
    // program is left alone. nullopt (the default): the kernel does not say.
    explicit FilterInjector(const sock_fprog* filter) : filter_(filter) {}
    void expect_filters(std::optional<uint32_t> expected_filters) { expected_filters_ = expected_filters; }
    [[nodiscard]] static bool supported();

    // How the backend resumes the task after a call below.
    struct Step {
        bool done = false;  // false: resume with PTRACE_SYSCALL; true: the task is back as it was
        int error = 0;      // when done: 0 installed, else why not (an errno)
        bool own_filters = false;  // not tried: the process has seccomp filters of its own
    };

    // tid is stopped at its fork/vfork/clone event, inside the call: its
    // registers can be replaced only at that call's exit. The caller resumes
    // it with PTRACE_SYSCALL.
    void start_after_syscall(pid_t tid);
    // tid is stopped where its registers can be replaced (a new task's first
    // stop, or a syscall-exit stop).
    Step start_now(pid_t tid);
    [[nodiscard]] bool busy(pid_t tid) const { return jobs_.contains(tid); }
    // Any stop of a busy task but its exit stop and its death.
    Step on_stop(pid_t tid, StopKind kind, int signal);
    // A signal to raise again once tid is back as it was.
    void hold_signal(pid_t tid, int signal) {
        if (auto it = jobs_.find(tid); it != jobs_.end()) it->second.held_signals.push_back(signal);
    }
    // tid exits or died: nothing more to put back.
    void forget(pid_t tid) { jobs_.erase(tid); }

private:
    enum class Phase : uint8_t { CallExit, Mmap, Seccomp, Munmap };
    struct Job {
        Phase phase = Phase::CallExit;
        user_regs_struct saved{};
        uint64_t saved_mask = 0;
        unsigned long long syscall_insn = 0;
        unsigned long long page = 0;
        int error = 0;
        std::vector<int> held_signals;  // taken meanwhile, raised again at the end
    };
    Step begin(pid_t tid, Job& job);
    bool issue(pid_t tid, const Job& job, long nr, std::initializer_list<unsigned long long> args);
    Step finish(pid_t tid, int error, bool own_filters = false);

    const sock_fprog* filter_;
    std::optional<uint32_t> expected_filters_;
    std::unordered_map<pid_t, Job> jobs_;
};

}  // namespace max_rss::ptrace_backend
