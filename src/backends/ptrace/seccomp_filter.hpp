// The seccomp filter the ptrace backend installs in the program before its
// first exec. Its SECCOMP_RET_TRACE stops come to max_rss, each tagged (the
// SECCOMP_RET_DATA, read with PTRACE_GETEVENTMSG) with why it stops:
//   Exec       execve/execveat entry: the old image is still whole
//   Untraced   clone(CLONE_UNTRACED): max_rss clears the flag, so the child is
//              traced like any other (untraced it would inherit this filter
//              with no tracer behind it: its execve would fail with ENOSYS)
//   Clone3     clone3: its flags are in memory, so every call stops and
//              max_rss reads them (CLONE_UNTRACED cleared the same way)
//   Strict     seccomp strict mode asked for: impossible once a filter is
//              installed (EINVAL); max_rss says so
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
    Ptrace = 0x4d05,
};

// Built before fork: the child only hands fprog() to seccomp(2).
class SeccompFilter {
public:
    SeccompFilter();
    SeccompFilter(const SeccompFilter&) = delete;
    SeccompFilter& operator=(const SeccompFilter&) = delete;
    [[nodiscard]] const sock_fprog* fprog() const { return &prog_; }

private:
    std::vector<sock_filter> code_;
    sock_fprog prog_{};
};

}  // namespace max_rss::ptrace_backend
