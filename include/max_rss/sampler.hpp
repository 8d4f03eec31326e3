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

#include <csignal>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace max_rss {

using StatmSample = procfs::Statm;

// How one process's sample counts toward the tree (pure; unit-tested).
struct SampledProcess {
    uint32_t index = 0;                 // into RunResult::processes
    ImageOrigin origin = ImageOrigin::Exec;
    StatmSample inherited;              // Fork: statm at its first stop
    uint64_t max_resident_bytes = 0;    // the largest resident size sampled in this image
    // A lower bound on its private part known from elsewhere (smaps_rollup at
    // its exit stop sees copy-on-write copies, which statm cannot).
    uint64_t private_floor_bytes = 0;
};
uint64_t private_bytes(const SampledProcess& p, const StatmSample& s);


// Sums one snapshot: private parts plus the largest shared part (pure).
struct SnapshotTotal {
    uint64_t total_bytes = 0;
    std::vector<std::pair<uint32_t, uint64_t>> top;  // largest contributors, at most top_n
};

// The same sum, one process at a time, in O(top_n) memory: a snapshot of
// 10,000 live processes must not need arrays of 10,000 entries.
class SnapshotSum {
public:
    explicit SnapshotSum(size_t top_n = 8) : top_n_(top_n) {}
    void add(const SampledProcess& process, const StatmSample& sample);
    SnapshotTotal finish() &&;  // top sorted largest first

private:
    size_t top_n_;
    uint64_t private_total_bytes_ = 0;
    uint64_t largest_shared_bytes_ = 0;
    std::vector<std::pair<uint32_t, uint64_t>> top_;  // a min-heap on bytes, at most top_n
};

SnapshotTotal sum_snapshot(const std::vector<std::pair<SampledProcess, StatmSample>>& samples,
                           size_t top_n = 8);

// Keeps at most max_points: when full, neighbouring pairs merge into the one
// with the larger total, so the peaks survive however long the run (pure).
void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points);

// Runs in the tracer's own thread: a timer signal (SIGALRM, ITIMER_REAL)
// interrupts the tracer's wait4, and the loop takes the snapshot. One thread
// means no locks and no second thread competing with tracees for a CPU
// (measured: a sampler thread made fork-heavy runs bimodal, 0.15 s or 0.31 s).
class Sampler {
public:
    // interval_ns 0: no periodic sampling, only snapshots the tracer asks for.
    // max_points bounds the timeline's memory (~70-180 bytes a point); 2048
    // is still twice the plot's width in pixels.
    Sampler(int64_t interval_ns, int64_t start_ns, size_t max_points = 2048);
    ~Sampler();  // stops the timer, restores SIGALRM
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    void start();  // arms the periodic timer (if interval_ns > 0)
    void stop();   // disarms it; idempotent

    // True when the timer fired since the last call (async-signal-safe flag).
    static bool due();

    void add(pid_t pid, SampledProcess process);
    void set_origin(pid_t pid, ImageOrigin origin, StatmSample inherited = {});
    void remove(pid_t pid);
    // The largest resident size any snapshot saw for pid's current image:
    // VmHWM below it means VmHWM was reset (a write of 5 to clear_refs).
    [[nodiscard]] uint64_t max_resident_bytes(pid_t pid) const;

    // Takes a snapshot of every live process now. Skipped when the last one
    // is more recent than min_gap_ns, or than ten times what the last one
    // cost (so that wide trees do not make every exit cost O(live)).
    // floor: (pid, bytes) counts that process as owning at least bytes.
    void snapshot(int64_t min_gap_ns = 0, std::optional<std::pair<pid_t, uint64_t>> floor = std::nullopt);

    [[nodiscard]] uint64_t peak_bytes() const { return peak_bytes_; }
    Timeline take_timeline() { return std::move(timeline_); }

private:
    const int64_t interval_ns_;
    const int64_t start_ns_;
    const size_t max_points_;
    bool armed_ = false;
    struct sigaction saved_alarm_ {};
    std::unordered_map<pid_t, SampledProcess> live_;
    Timeline timeline_;
    uint64_t peak_bytes_ = 0;
    int64_t last_snapshot_ns_ = 0;
    int64_t last_duration_ns_ = 0;  // what the last snapshot cost
};

}  // namespace max_rss
