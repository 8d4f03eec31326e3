// The seccomp filter the ptrace backend installs in the program before its
// first exec: SECCOMP_RET_TRACE (a stop for max_rss) at the entry of the
// system calls after which an image's peak could no longer be read.
#pragma once

#include <linux/filter.h>

#include <array>

namespace max_rss::ptrace_backend {

// Built before fork: the child only hands fprog() to seccomp(2).
class SeccompFilter {
public:
    SeccompFilter();
    [[nodiscard]] const sock_fprog* fprog() const { return &prog_; }

private:
    std::array<sock_filter, 16> code_{};
    sock_fprog prog_{};
};

}  // namespace max_rss::ptrace_backend
