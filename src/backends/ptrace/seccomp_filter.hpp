// The seccomp filters of the ptrace backend. The launch filter is installed
// in the program before its first exec; the release filter (the Release and
// Brk rules) only when the tree first has two processes (filter_injection.hpp):
// while the tree is one process, that process's VmHWM is the tree's total at
// every instant, and a stop at each of its munmaps would add nothing to the
// peak. Their SECCOMP_RET_TRACE stops come to max_rss, each tagged (the
// SECCOMP_RET_DATA, read with PTRACE_GETEVENTMSG) with why it stops:
//   Exec       execve/execveat entry: the old image is still whole
//   Untraced   clone(CLONE_UNTRACED): max_rss clears the flag, so the child is
//              traced like any other (untraced it would inherit this filter
//              with no tracer behind it: its execve would fail with ENOSYS)
//   Clone3     clone3: its flags are in memory, so every call stops and
//              max_rss reads them (CLONE_UNTRACED cleared the same way)
//   Strict     seccomp strict mode asked for: impossible once a filter is
//              installed (EINVAL); max_rss says so
//   Release    a call that may make its caller's resident memory fall:
//              munmap, mremap, shmdt, shmat(SHM_REMAP), madvise(DONTNEED,
//              PAGEOUT, DONTNEED_LOCKED, GUARD_INSTALL),
//              mmap(MAP_FIXED|MAP_ANONYMOUS) over a mapping. The tree's total
//              just before one is a candidate for its peak
//              (docs/how-it-works.md).
//   ReleaseShared
//              the same, for a call that may make other processes' memory
//              fall too: ftruncate, truncate, madvise(REMOVE) and
//              fallocate(PUNCH_HOLE, COLLAPSE_RANGE, ZERO_RANGE, INSERT_RANGE,
//              WRITE_ZEROES) drop a file's pages from every mapping of it;
//              process_madvise and process_mrelease act on another process.
//   Brk        brk: a release only when it lowers the break, which the filter
//              cannot see (max_rss compares with the last break it allowed)
// Not stopped (documented gaps): a file mmap(MAP_FIXED) over populated memory
// (/dev/zero's included; the dynamic loader does it ~3 times a library, over
// its own empty reservation), an open(O_TRUNC) or creat of a file the tree
// has mapped (every shell redirection would stop), MADV_FREE (pages stay
// resident until the kernel reclaims them), io_uring's madvise, reclaim and
// swap-out under memory pressure.
//   Ptrace     ptrace(PTRACE_TRACEME, PTRACE_ATTACH or PTRACE_SEIZE): refused
//              (EPERM) when the caller or the target is traced by max_rss; it
//              says so. Other requests (a debugger's PEEK and POKE) never stop.
// Any other tag comes from a filter of the program's own: max_rss then does
// what the kernel does for a SECCOMP_RET_TRACE with no tracer (ENOSYS).
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

namespace max_rss::ptrace_backend {

enum class StopTag : uint16_t {
    Exec = 0x4d01,
    Untraced = 0x4d02,
    Clone3 = 0x4d03,
    Strict = 0x4d04,
    Release = 0x4d05,
    Brk = 0x4d06,
    Ptrace = 0x4d07,
    ReleaseShared = 0x4d08,
};

// Built before fork: the child only hands fprog() to seccomp(2).
class SeccompFilter {
public:
    enum class Part : uint8_t {
        Launch,   // every rule but Release and Brk
        Release,  // only Release and Brk (x86-64 programs)
        All,      // both: where the release filter cannot be installed later
    };
    explicit SeccompFilter(Part part);
    SeccompFilter(const SeccompFilter&) = delete;
    SeccompFilter& operator=(const SeccompFilter&) = delete;
    [[nodiscard]] const sock_fprog* fprog() const { return &prog_; }

private:
    std::vector<sock_filter> code_;
    sock_fprog prog_{};
};

}  // namespace max_rss::ptrace_backend
