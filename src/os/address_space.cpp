#include <max_rss/os/address_space.hpp>

#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

namespace max_rss::os {

std::optional<bool> same_address_space(pid_t a, pid_t b) {
    const long order = ::syscall(SYS_kcmp, a, b, KCMP_VM, 0UL, 0UL);
    if (order < 0) return std::nullopt;
    return order == 0;
}

void wait_for_address_space_lock(pid_t pid) {
    char byte = 0;
    iovec local{&byte, 1};
    iovec remote{nullptr, 1};  // page 0: never mapped (mmap_min_addr)
    (void)::process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

}  // namespace max_rss::os
