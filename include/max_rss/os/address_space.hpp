// Whether two processes share one address space (kcmp KCMP_VM): a vfork or
// CLONE_VM child runs in its creator's memory, a fork child in a copy.
#pragma once

#include <sys/types.h>

#include <optional>

namespace max_rss::os {

// nullopt when the kernel cannot say (no kcmp, a process gone, no permission).
std::optional<bool> same_address_space(pid_t a, pid_t b);

}  // namespace max_rss::os
