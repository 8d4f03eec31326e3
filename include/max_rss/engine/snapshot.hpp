// What the live tree holds at one moment (a snapshot), from each live
// process's /proc/<pid>/statm (no mmap lock, ~6 us a process). Pure: the
// engine's Recorder decides when to take one and reads the values.
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
#include <max_rss/procfs/procfs.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace max_rss {

using StatmSample = procfs::Statm;

// How one process's sample counts toward the tree (pure; unit-tested).
struct SampledProcess {
    uint32_t index = 0;                 // into RunResult::processes
    ImageOrigin origin = ImageOrigin::Exec;
    StatmSample inherited;              // Fork: statm at its first stop
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

}  // namespace max_rss
