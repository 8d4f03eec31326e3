// Measurement policy: what an image's peak is, and when a reading is worth its
// cost. Pure functions, shared by every backend, unit-tested on their own
// (tests/unit/test_policy.cpp).
#pragma once

#include <max_rss/model.hpp>

#include <cstdint>
#include <optional>

namespace max_rss::policy {

// An image's own peak, from its VmHWM at its last stop:
//  - Exec: VmHWM itself;
//  - Fork: what it added to the resident size it inherited at its first stop,
//    or the pages private to it at that stop (smaps_rollup, which sees its
//    copy-on-write copies where VmHWM cannot), whichever is larger;
//  - SharedMm: 0 (the address space is its parent's, counted there).
uint64_t image_peak_bytes(ImageOrigin origin, uint64_t hwm_bytes, uint64_t inherited_rss_bytes,
                          uint64_t private_bytes_now);

// smaps_rollup walks the page tables, so it is read only at a process's final
// exit, and only where it can matter: for a fork image from 1 MiB resident
// (its private pages are how copy-on-write copies are seen: below 1 MiB they
// cannot add 1 MiB), for an exec'd image from 4 MiB (it only adds the
// report's PSS/private split: a shell loop's thousands of small commands
// skip it). Unknown RSS reads it.
inline constexpr uint64_t kForkSmapsMinBytes = uint64_t{1} << 20;
inline constexpr uint64_t kExecSmapsMinBytes = uint64_t{4} << 20;
bool wants_smaps_at_exit(ImageOrigin origin, std::optional<uint64_t> rss_bytes);

// The tree's memory falls only at release points (munmap, madvise, brk,
// exec, exit, ...): a snapshot at each is how the peak is measured exactly.
// Each costs a read per live process (and, when a fork family's sharing must
// be resolved, a page-table walk per member), paid while a task waits. They
// are taken while max_rss's CPU time in snapshots stays within a free
// allowance plus a share of the run's wall time so far; beyond it (a
// 10,000-process tree exiting at once) they are skipped, and the report says
// the peak is a lower bound. CPU time, not wall time: other load on the
// machine must not decide whether a run is measured exactly.
inline constexpr int64_t kSnapshotAllowanceNs = 200'000'000;
inline constexpr int64_t kSnapshotSharePercent = 20;
bool snapshot_affordable(int64_t spent_ns, int64_t elapsed_ns, int64_t expected_cost_ns);

// VmHWM never falls unless the program reset it (a write of 5 to
// /proc/self/clear_refs). Read approximately, it may be a few hundred KiB
// low: a reset is a VmHWM more than 1 MiB below a resident size a snapshot saw.
inline constexpr uint64_t kHwmSlackBytes = uint64_t{1} << 20;
bool hwm_was_reset(uint64_t hwm_bytes, uint64_t sampled_max_resident_bytes);

// Whether an image's memory fell where max_rss did not stop (a file or
// /dev/zero mmap(MAP_FIXED) over its pages, an open(O_TRUNC) of a file it
// maps, reclaim): its VmHWM, read at its exec or exit, is above every
// resident size known of it (each snapshot's, its VmHWM when the tree first
// had two processes, a fork child's inherited pages, its size now) by more
// than the counters' imprecision. So it rose past every reading and fell
// unseen, and the tree may have held more then than any snapshot saw.
bool fell_unseen(uint64_t hwm_bytes, uint64_t known_resident_bytes);
// The same fall seen between two readings of an image's resident size with
// no release point of its own between them: the later one lower by more
// than two readings' imprecision. A snapshot may have read the image at its
// height (so its VmHWM shows nothing), and the tree may have held more after
// that reading than any snapshot saw.
bool fell_between_reads(uint64_t earlier_resident_bytes, uint64_t later_resident_bytes);
// Whether a high-water mark (ru_maxrss, VmHWM) rose after an earlier reading
// of it: it is above that reading by more than two readings' imprecision
// (measured here: ru_maxrss 400 KiB above the same address space's mark read
// just before its exec). Within that, it may be the earlier mark itself.
bool rose_after(uint64_t hwm_bytes, uint64_t earlier_hwm_bytes);

// Periodic snapshots (the timeline; a complement to the release points) cost
// ~1.5 us a live process (12 ms at 10,000): the next one may come min_gap_ns
// after the last, and no sooner than ten times what the last one cost.
int64_t snapshot_gap_ns(int64_t min_gap_ns, int64_t last_snapshot_cost_ns);

}  // namespace max_rss::policy
