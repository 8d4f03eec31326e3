#include <max_rss/engine/policy.hpp>

#include <unistd.h>

#include <algorithm>

namespace max_rss::policy {

uint64_t image_peak_bytes(ImageOrigin origin, uint64_t hwm_bytes, uint64_t inherited_rss_bytes,
                          uint64_t private_bytes_now) {
    switch (origin) {
        case ImageOrigin::Exec: return hwm_bytes;
        case ImageOrigin::Fork: {
            const uint64_t grown = hwm_bytes > inherited_rss_bytes ? hwm_bytes - inherited_rss_bytes : 0;
            return std::max(grown, private_bytes_now);
        }
        case ImageOrigin::SharedMm: return 0;
    }
    return 0;
}

bool wants_smaps_at_exit(ImageOrigin origin, std::optional<uint64_t> rss_bytes) {
    if (origin == ImageOrigin::SharedMm) return false;
    const uint64_t threshold = origin == ImageOrigin::Fork ? kForkSmapsMinBytes : kExecSmapsMinBytes;
    return rss_bytes.value_or(threshold) >= threshold;
}

bool snapshot_affordable(int64_t spent_ns, int64_t elapsed_ns, int64_t expected_cost_ns) {
    return spent_ns + expected_cost_ns <= kSnapshotAllowanceNs + elapsed_ns / 100 * kSnapshotSharePercent;
}

bool hwm_was_reset(uint64_t hwm_bytes, uint64_t sampled_max_resident_bytes) {
    return sampled_max_resident_bytes > hwm_bytes + kHwmSlackBytes;
}

namespace {

// How far one quick read of an address space's counters (VmHWM, statm) can
// be off: up to a batch (max(32, 2 x CPUs) pages) per online CPU, 1 MiB at
// most on up to 8 CPUs.
uint64_t counter_slack_bytes() {
    static const uint64_t slack_bytes = [] {
        const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
        const uint64_t batch_pages = static_cast<uint64_t>(std::max(32L, 2 * cpus));
        const uint64_t page_bytes = static_cast<uint64_t>(std::max(4096L, ::sysconf(_SC_PAGESIZE)));
        return static_cast<uint64_t>(cpus) * batch_pages * page_bytes;
    }();
    return slack_bytes;
}

}  // namespace

bool fell_unseen(uint64_t hwm_bytes, uint64_t known_resident_bytes) {
    return hwm_bytes > known_resident_bytes + std::max(kHwmSlackBytes, counter_slack_bytes());
}

bool fell_between_reads(uint64_t earlier_resident_bytes, uint64_t later_resident_bytes) {
    // Each reading may be off by the slack, in opposite directions.
    return earlier_resident_bytes > later_resident_bytes + std::max(kHwmSlackBytes, 2 * counter_slack_bytes());
}

bool rose_after(uint64_t hwm_bytes, uint64_t earlier_hwm_bytes) {
    return hwm_bytes > earlier_hwm_bytes + std::max(kHwmSlackBytes, 2 * counter_slack_bytes());
}

int64_t snapshot_gap_ns(int64_t min_gap_ns, int64_t last_snapshot_cost_ns) {
    return std::max(min_gap_ns, 10 * last_snapshot_cost_ns);
}

}  // namespace max_rss::policy
