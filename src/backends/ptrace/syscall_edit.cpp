#include "syscall_edit.hpp"

#include <linux/sched.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace max_rss::ptrace_backend {

#if defined(__x86_64__)

bool clear_clone_untraced(pid_t tid, bool clone3) {
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) return false;
    if (!clone3) {
        if (!(regs.rdi & CLONE_UNTRACED)) return false;
        regs.rdi &= ~static_cast<unsigned long long>(CLONE_UNTRACED);
        return ::ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0;
    }
    // struct clone_args starts with the u64 flags.
    uint64_t flags = 0;
    iovec local{&flags, sizeof flags};
    iovec remote{reinterpret_cast<void*>(regs.rdi), sizeof flags};
    if (regs.rsi < sizeof flags || ::process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof flags) return false;
    if (!(flags & CLONE_UNTRACED)) return false;
    flags &= ~static_cast<uint64_t>(CLONE_UNTRACED);
    return ::process_vm_writev(tid, &local, 1, &remote, 1, 0) == sizeof flags;
}

std::optional<unsigned long> first_argument(pid_t tid) {
    errno = 0;
    const long value = ::ptrace(PTRACE_PEEKUSER, tid, offsetof(user_regs_struct, rdi), nullptr);
    if (value == -1 && errno != 0) return std::nullopt;
    return static_cast<unsigned long>(value);
}

bool fail_syscall(pid_t tid, int err) {
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) return false;
    regs.orig_rax = static_cast<unsigned long long>(-1);  // skip it
    regs.rax = static_cast<unsigned long long>(-static_cast<long long>(err));
    return ::ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0;
}

bool read_ptrace_call(pid_t tid, PtraceCall& call) {
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) return false;
    call.request = static_cast<long>(regs.rdi);
    call.target = static_cast<pid_t>(regs.rsi);
    return true;
}

#else

bool clear_clone_untraced(pid_t, bool) { return false; }
std::optional<unsigned long> first_argument(pid_t) { return std::nullopt; }
bool fail_syscall(pid_t, int) { return false; }
bool read_ptrace_call(pid_t, PtraceCall&) { return false; }

#endif

bool still_at_seccomp_stop(pid_t tid) {
    __ptrace_syscall_info info{};
    if (::ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) > 0) return info.op == PTRACE_SYSCALL_INFO_SECCOMP;
    return errno != ESRCH;  // ESRCH: not stopped (running to its exit), or gone
}

}  // namespace max_rss::ptrace_backend
