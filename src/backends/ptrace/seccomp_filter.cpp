#include "seccomp_filter.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <cstddef>

namespace max_rss::ptrace_backend {

// SECCOMP_RET_TRACE for execve/execveat (so the tracer sees the old image
// before it is destroyed), ALLOW for everything else.
SeccompFilter::SeccompFilter() {
    unsigned short len = 0;
    auto add = [&](sock_filter f) { code_[len++] = f; };
    const auto arch_off = static_cast<unsigned>(offsetof(seccomp_data, arch));
    const auto nr_off = static_cast<unsigned>(offsetof(seccomp_data, nr));
    add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arch_off));
#if defined(__x86_64__)
    // [1] native x86-64?  [2] i386 compat?
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4));
    add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr_off));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 6, 0));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 5, 0));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 3));
    add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr_off));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 11 /* i386 execve */, 1, 0));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 358 /* i386 execveat */, 0, 1));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#else
    add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr_off));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 1, 0));
    add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 1));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
    add(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
#endif
    prog_.len = len;
    prog_.filter = code_.data();
}

}  // namespace max_rss::ptrace_backend
