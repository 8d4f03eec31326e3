#include "filter_injection.hpp"

#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

namespace max_rss::ptrace_backend {

#if defined(__x86_64__)

namespace {

constexpr unsigned long long kPage = 4096;
constexpr uint16_t kSyscallInsn = 0x050f;  // 0f 05, little-endian

// The entry or the exit of a system call, and its result at the exit.
struct SyscallSeen {
    bool exit = false;
    long long rval = 0;
};
std::optional<SyscallSeen> syscall_seen(pid_t tid) {
    __ptrace_syscall_info info{};
    const long n = ::ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info);
    if (n <= 0) return std::nullopt;
    if (info.op == PTRACE_SYSCALL_INFO_EXIT) return SyscallSeen{true, info.exit.rval};
    return SyscallSeen{false, 0};
}

// The sock_fprog and its instructions, as the task will read them at page.
std::vector<unsigned char> filter_image(const sock_fprog& filter, unsigned long long page) {
    struct RemoteProg {
        uint16_t len;
        uint16_t pad[3];
        uint64_t filter;
    } prog{filter.len, {}, page + sizeof(RemoteProg)};
    std::vector<unsigned char> bytes(sizeof prog + filter.len * sizeof(sock_filter));
    std::memcpy(bytes.data(), &prog, sizeof prog);
    std::memcpy(bytes.data() + sizeof prog, filter.filter, filter.len * sizeof(sock_filter));
    return bytes;
}

}  // namespace

// PTRACE_GET_SYSCALL_INFO (which tells a syscall's entry from its exit)
// came in Linux 5.3.
bool FilterInjector::supported() {
    static const bool yes = [] {
        utsname u{};
        unsigned major = 0, minor = 0;
        if (::uname(&u) != 0 || std::sscanf(u.release, "%u.%u", &major, &minor) != 2) return false;
        return major > 5 || (major == 5 && minor >= 3);
    }();
    return yes;
}

void FilterInjector::start_after_syscall(pid_t tid) { jobs_[tid] = Job{}; }

FilterInjector::Step FilterInjector::start_now(pid_t tid) {
    Job& job = jobs_[tid];
    job = Job{};
    return begin(tid, job);
}

FilterInjector::Step FilterInjector::begin(pid_t tid, Job& job) {
    // A program with seccomp filters of its own (a sandbox) may answer our
    // calls with a SIGSYS trap or a kill: it is not touched.
    if (expected_filters_) {
        const auto status = procfs::read_status(tid);
        if (status && status->seccomp_filters && *status->seccomp_filters > *expected_filters_)
            return finish(tid, EPERM, true);
    }
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, &job.saved) != 0) return finish(tid, errno);
    // The task stopped just after a `syscall` instruction (a fork, vfork or
    // clone, in the parent or the child): it is the one it will run again.
    job.syscall_insn = job.saved.rip - 2;
    errno = 0;
    const long text = ::ptrace(PTRACE_PEEKTEXT, tid, job.syscall_insn, nullptr);
    if (errno != 0) return finish(tid, errno);
    if (static_cast<uint16_t>(text) != kSyscallInsn) return finish(tid, ENOEXEC);  // int 0x80: no
    if (::ptrace(PTRACE_GETSIGMASK, tid, sizeof job.saved_mask, &job.saved_mask) != 0) return finish(tid, errno);
    const uint64_t all = ~uint64_t{0};
    if (::ptrace(PTRACE_SETSIGMASK, tid, sizeof all, &all) != 0) return finish(tid, errno);
    job.phase = Phase::Mmap;
    if (!issue(tid, job, __NR_mmap,
               {0, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, static_cast<unsigned long long>(-1), 0}))
        return finish(tid, errno);
    return {};
}

bool FilterInjector::issue(pid_t tid, const Job& job, long nr, std::initializer_list<unsigned long long> args) {
    user_regs_struct regs = job.saved;
    regs.rip = job.syscall_insn;
    regs.rax = static_cast<unsigned long long>(nr);
    regs.orig_rax = static_cast<unsigned long long>(-1);  // no system call to restart on the way out
    unsigned long long* slots[] = {&regs.rdi, &regs.rsi, &regs.rdx, &regs.r10, &regs.r8, &regs.r9};
    size_t i = 0;
    for (unsigned long long a : args) *slots[i++] = a;
    return ::ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0;
}

FilterInjector::Step FilterInjector::on_stop(pid_t tid, StopKind kind, int signal) {
    auto it = jobs_.find(tid);
    if (it == jobs_.end()) return {true, 0};
    Job& job = it->second;
    switch (kind) {
        case StopKind::SignalDelivery:
            // Only SIGSTOP (and a signal the kernel forces) gets through the
            // mask: held, raised again at the end (the task must not stop or
            // run a handler with our registers in place).
            job.held_signals.push_back(signal);
            return {};
        case StopKind::GroupStop:
            job.held_signals.push_back(signal);  // the stop signal that started it
            return {};
        case StopKind::SyscallStop:
            break;
        default:
            // A seccomp stop of the program's own filter at one of our calls,
            // an INTERRUPT: let the call go on.
            return {};
    }
    const auto seen = syscall_seen(tid);
    if (!seen) {
        // A task that is gone: nothing to put back (and at an entry stop,
        // putting its registers back would run its fork again).
        if (errno == ESRCH) {
            jobs_.erase(it);
            return {true, ESRCH};
        }
        return finish(tid, errno ? errno : EIO);
    }
    if (!seen->exit) return {};
    switch (job.phase) {
        case Phase::CallExit:
            return begin(tid, job);
        case Phase::Mmap: {
            if (seen->rval < 0 && seen->rval > -4096) {
                job.error = static_cast<int>(-seen->rval);
                return finish(tid, job.error);
            }
            job.page = static_cast<unsigned long long>(seen->rval);
            if (job.page == 0 || job.page % kPage != 0) return finish(tid, EFAULT);  // not an mmap's answer
            const std::vector<unsigned char> image = filter_image(*filter_, job.page);
            iovec local{const_cast<unsigned char*>(image.data()), image.size()};
            iovec remote{reinterpret_cast<void*>(job.page), image.size()};
            if (::process_vm_writev(tid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(image.size())) {
                job.error = errno ? errno : EFAULT;
                job.phase = Phase::Munmap;
                if (!issue(tid, job, __NR_munmap, {job.page, kPage})) return finish(tid, errno);
                return {};
            }
            job.phase = Phase::Seccomp;
            if (!issue(tid, job, __NR_seccomp, {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, job.page}))
                return finish(tid, errno);
            return {};
        }
        case Phase::Seccomp:
            // TSYNC: a positive result is a thread that could not take it
            // (it has other filters): no thread got it.
            if (seen->rval != 0) job.error = seen->rval < 0 ? static_cast<int>(-seen->rval) : EBUSY;
            job.phase = Phase::Munmap;
            if (!issue(tid, job, __NR_munmap, {job.page, kPage})) return finish(tid, errno);
            return {};
        case Phase::Munmap:
            return finish(tid, job.error);
    }
    return finish(tid, EINVAL);
}

FilterInjector::Step FilterInjector::finish(pid_t tid, int error, bool own_filters) {
    auto it = jobs_.find(tid);
    if (it == jobs_.end()) return {true, error, own_filters};
    Job& job = it->second;
    // Registers are only replaced once the mask is: put back what was taken.
    if (job.phase != Phase::CallExit) {
        ::ptrace(PTRACE_SETREGS, tid, nullptr, &job.saved);
        ::ptrace(PTRACE_SETSIGMASK, tid, sizeof job.saved_mask, &job.saved_mask);
    }
    if (!job.held_signals.empty()) {
        // A SIGCONT sent since (blocked, so still pending) cancels a held
        // stop: raising the stop again would flush it and stop the task for good.
        const auto status = procfs::read_status(tid);
        const bool cont_pending = status && status->pending_signals && (*status->pending_signals >> (SIGCONT - 1)) & 1;
        for (int sig : job.held_signals) {
            const bool stop = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
            if (!(stop && cont_pending)) ::syscall(SYS_tkill, tid, sig);
        }
    }
    jobs_.erase(it);
    return {true, error, own_filters};
}

#else

bool FilterInjector::supported() { return false; }
void FilterInjector::start_after_syscall(pid_t tid) { jobs_[tid] = Job{}; }
FilterInjector::Step FilterInjector::start_now(pid_t) { return {true, ENOSYS}; }
FilterInjector::Step FilterInjector::on_stop(pid_t tid, StopKind, int) { return finish(tid, ENOSYS); }
FilterInjector::Step FilterInjector::finish(pid_t tid, int error, bool own_filters) {
    jobs_.erase(tid);
    return {true, error, own_filters};
}

#endif

}  // namespace max_rss::ptrace_backend
