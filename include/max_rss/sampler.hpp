// Watches the live tree's memory over time, cheaply: /proc/<pid>/statm only
// (no mmap lock, ~6 us a process), periodically from its own thread and on
// demand from the tracer at the moments that matter (a process's exit stop).
//
// Each snapshot counts shared pages once:
//   total = sum over processes of their private part
//         + the largest file-backed/shmem resident set of any one process
// where a process's private part is
//   exec'd image:        resident - shared (statm: anonymous, unshared)
//   forked, not exec'd:  its unshared part minus the unshared part it had
//                        inherited at its first stop (copy-on-write pages)
//   vfork / CLONE_VM:    0 (its memory is its parent's mm, counted there)
// See docs/how-it-works.md for the error bounds.
#pragma once

#include <max_rss/model.hpp>
#include <max_rss/procfs.hpp>

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace max_rss {

using StatmSample = procfs::Statm;

// How one process's sample counts toward the tree (pure; unit-tested).
struct SampledProcess {
    uint32_t index = 0;                 // into RunResult::processes
    ImageOrigin origin = ImageOrigin::Exec;
    StatmSample inherited;              // Fork: statm at its first stop
};
uint64_t private_bytes(const SampledProcess& p, const StatmSample& s);


// Sums one snapshot: private parts plus the largest shared part (pure).
struct SnapshotTotal {
    uint64_t total_bytes = 0;
    std::vector<std::pair<uint32_t, uint64_t>> top;  // largest contributors, at most top_n
};
SnapshotTotal sum_snapshot(const std::vector<std::pair<SampledProcess, StatmSample>>& samples,
                           size_t top_n = 8);

// Keeps at most max_points: when full, neighbouring pairs merge into the one
// with the larger total, so the peaks survive however long the run (pure).
void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points);

class Sampler {
public:
    // interval_ns 0: no periodic sampling, only snapshots the tracer asks for.
    Sampler(int64_t interval_ns, int64_t start_ns, size_t max_points = 4096);
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    void start();  // starts the periodic thread (if interval_ns > 0)
    void stop();   // stops it; idempotent

    void add(pid_t pid, SampledProcess process);
    void set_origin(pid_t pid, ImageOrigin origin, StatmSample inherited = {});
    void remove(pid_t pid);

    // Takes a snapshot now (from the tracer thread). Rate-limited to one per
    // min_gap_ns so that wide trees do not make exits quadratic.
    void snapshot_now(int64_t min_gap_ns = 1'000'000);

    // The largest snapshot total so far, and the timeline.
    [[nodiscard]] uint64_t peak_bytes() const;
    Timeline take_timeline();

private:
    void run();
    void snapshot_locked_copy();

    const int64_t interval_ns_;
    const int64_t start_ns_;
    const size_t max_points_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
    std::unordered_map<pid_t, SampledProcess> live_;
    Timeline timeline_;
    uint64_t peak_bytes_ = 0;
    std::atomic<int64_t> last_snapshot_ns_{0};
    std::mutex snapshot_mutex_;  // one snapshot at a time (thread vs tracer)
};

}  // namespace max_rss
