#include <max_rss/os/address_space.hpp>

#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace max_rss::os {

std::optional<bool> same_address_space(pid_t a, pid_t b) {
    const long order = ::syscall(SYS_kcmp, a, b, KCMP_VM, 0UL, 0UL);
    if (order < 0) return std::nullopt;
    return order == 0;
}

}  // namespace max_rss::os
