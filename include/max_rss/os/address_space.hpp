// Whether two processes share one address space (kcmp KCMP_VM): a vfork or
// CLONE_VM child runs in its creator's memory, a fork child in a copy.
#pragma once

#include <sys/types.h>

#include <optional>

namespace max_rss::os {

// nullopt when the kernel cannot say (no kcmp, a process gone, no permission).
std::optional<bool> same_address_space(pid_t a, pid_t b);

// Returns once nobody holds pid's address space lock for writing (a fork
// copying its page tables holds it until the copy is done): a one-byte
// process_vm_readv of an address never mapped takes that lock and fails.
void wait_for_address_space_lock(pid_t pid);

}  // namespace max_rss::os
