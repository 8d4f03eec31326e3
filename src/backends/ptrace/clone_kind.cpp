#include "clone_kind.hpp"

#include <max_rss/procfs/procfs.hpp>

#include <linux/sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

namespace max_rss::ptrace_backend {

CloneKind clone_kind_from_flags(uint64_t flags) {
    if (flags & CLONE_THREAD) return CloneKind::Thread;
    if (flags & CLONE_VM) return CloneKind::SharedMm;
    return CloneKind::Fork;
}

CloneKind decode_clone(pid_t creator, StopKind event, pid_t child) {
    if (event == StopKind::Vfork) return CloneKind::SharedMm;
#if defined(__x86_64__)
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, creator, nullptr, &regs) == 0) {
        switch (regs.orig_rax) {
            case SYS_fork: return CloneKind::Fork;
            case SYS_vfork: return CloneKind::SharedMm;
            case SYS_clone: return clone_kind_from_flags(regs.rdi);
            case SYS_clone3: {
                // struct clone_args starts with the u64 flags.
                uint64_t flags = 0;
                iovec local{&flags, sizeof flags};
                iovec remote{reinterpret_cast<void*>(regs.rdi), sizeof flags};
                if (::process_vm_readv(creator, &local, 1, &remote, 1, 0) != sizeof flags) flags = 0;
                return clone_kind_from_flags(flags);
            }
            default: return CloneKind::Fork;
        }
    }
#endif
    // Portable fallback: /proc says whether it is a thread, kcmp whether the mm is shared.
    auto st = procfs::read_status(child);
    auto pst = procfs::read_status(creator);
    if (st && pst && st->tgid && pst->tgid && *st->tgid == *pst->tgid) return CloneKind::Thread;
    constexpr int kKcmpVm = 1;
    return ::syscall(SYS_kcmp, creator, child, kKcmpVm, 0, 0) == 0 ? CloneKind::SharedMm : CloneKind::Fork;
}

}  // namespace max_rss::ptrace_backend
