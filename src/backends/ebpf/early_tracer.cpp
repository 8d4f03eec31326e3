#include "early_tracer.hpp"

#include <max_rss/backends/forwarding.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/util/log.hpp>

#include <linux/audit.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <csignal>
#include <cstring>

namespace max_rss::ebpf {
namespace {

constexpr unsigned long kSeizeOptions = PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
// From the first exec on: its exit is held too (before its exec, the child
// is max_rss's own launcher, whose failure to exec ends it).
constexpr unsigned long kRunOptions = kSeizeOptions | PTRACE_O_TRACEEXIT;

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kNativeArch = 0;  // unknown here: every call is held
#endif
constexpr uint64_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT

// The system calls held at their entry, by name for the log; nullptr: not held.
const char* held_syscall(long nr) {
    switch (nr) {
#ifdef SYS_fork
        case SYS_fork: return "fork";
#endif
#ifdef SYS_vfork
        case SYS_vfork: return "vfork";
#endif
        case SYS_clone: return "clone";
#ifdef SYS_clone3
        case SYS_clone3: return "clone3";
#endif
        case SYS_execve: return "execve";
        case SYS_execveat: return "execveat";
        case SYS_ptrace: return "ptrace";
        default: return nullptr;
    }
}

}  // namespace

bool EarlyTracer::seize(pid_t pid) { return ::ptrace(PTRACE_SEIZE, pid, nullptr, kSeizeOptions) == 0; }

void EarlyTracer::resume(int sig) {
    if (::ptrace(PTRACE_SYSCALL, root_, nullptr, sig) != 0 && errno != ESRCH)
        throw TracerError(std::string("ptrace(PTRACE_SYSCALL): ") + std::strerror(errno));
}

bool EarlyTracer::must_hold(const WaitStatus& status) {
    switch (status.kind()) {
        case StopKind::SyscallStop: {
            __ptrace_syscall_info info{};
            if (::ptrace(PTRACE_GET_SYSCALL_INFO, root_, sizeof info, &info) <= 0) return false;
            if (info.op != PTRACE_SYSCALL_INFO_ENTRY) return false;
            // Another ABI's numbers (i386, x32) are not the ones below: its every call is held.
            if (info.arch != kNativeArch || (info.entry.nr & kX32Bit) != 0) {
                held_at_ = "a system call of another ABI";
                return true;
            }
            const char* name = held_syscall(static_cast<long>(info.entry.nr));
            if (name) held_at_ = name;
            return name != nullptr;
        }
        case StopKind::SignalDelivery:
            pending_signal_ = status.signal();
            forwarder_.root_delivered(pending_signal_);
            held_at_ = "a signal's delivery";
            return true;
        case StopKind::Exit: held_at_ = "its exit"; return true;
        case StopKind::GroupStop: held_at_ = "a group stop"; return true;
        default: return false;
    }
}

EarlyTracer::Outcome EarlyTracer::run(const std::function<bool()>& loaded, const std::function<void()>& on_exec) {
    bool stopped = false;      // in a stop this loop has not resumed
    bool interrupted = false;  // PTRACE_INTERRUPT asked for
    for (;;) {
        if (loaded()) {
            if (stopped) return Outcome::Stopped;
            if (!interrupted && ::ptrace(PTRACE_INTERRUPT, root_, nullptr, nullptr) == 0) interrupted = true;
        }
        forwarder_.handle(signals_.take_received(), [this, &stopped](const os::ReceivedSignal& sig) {
            return root_has_copy(sig.signo, stopped);
        });
        (void)signals_.take_tick();
        const os::WaitResult w = signals_.wait_any(false);
        if (w.kind == os::WaitResult::Kind::Interrupted) continue;
        if (w.kind == os::WaitResult::Kind::NoChildren) throw TracerError("ebpf: the program vanished before it was adopted");
        if (w.pid != root_) continue;
        if (w.status.is_terminal()) {
            ended_ = w;
            return Outcome::Ended;
        }
        if (w.status.kind() == StopKind::Exec && !exec_seen_) {
            exec_seen_ = true;
            if (::ptrace(PTRACE_SETOPTIONS, root_, nullptr, kRunOptions) != 0)
                throw TracerError(std::string("ptrace(PTRACE_SETOPTIONS): ") + std::strerror(errno));
            on_exec();
        }
        if (!exec_seen_) {
            // max_rss's own launcher, before its exec: nothing to hold, a signal passes.
            resume(w.status.kind() == StopKind::SignalDelivery ? w.status.signal() : 0);
        } else if (must_hold(w.status)) {
            stopped = true;
        } else if (loaded()) {
            held_at_ = w.status.kind() == StopKind::EventStop ? "PTRACE_INTERRUPT" : "a stop on its way";
            stopped = true;
        } else {
            resume(0);
        }
    }
}

void EarlyTracer::settle_signals(const std::function<bool(const os::ReceivedSignal&)>& counted) {
    // Pending ones too: signals are blocked from run()'s last wait to here,
    // and a group kill in that time left the root a copy the kernel side did
    // not count (before adopt()) and max_rss one it has not handled yet.
    // Handled only after detach(), the root's would have been taken by then,
    // and max_rss's passed on as a second copy.
    forwarder_.handle(signals_.take_pending(), [&](const os::ReceivedSignal& sig) {
        return counted(sig) || root_has_copy(sig.signo, true);
    });
}

bool EarlyTracer::root_has_copy(int signo, bool stopped) const {
    // A signal held at its delivery stop is the root's copy already.
    return (stopped && pending_signal_ == signo) || traced_root_has_copy(root_, signo);
}

void EarlyTracer::detach() {
    // A SIGCONT sent while a stop signal was held cancels it, as it would have
    // (it waits, pending, in the queue: a traced stop does not take it).
    if (is_stopping_signal(pending_signal_) && signal_pending(root_, SIGCONT)) pending_signal_ = 0;
    if (::ptrace(PTRACE_DETACH, root_, nullptr, pending_signal_) != 0 && errno != ESRCH)
        throw TracerError(std::string("ptrace(PTRACE_DETACH): ") + std::strerror(errno));
}

}  // namespace max_rss::ebpf
