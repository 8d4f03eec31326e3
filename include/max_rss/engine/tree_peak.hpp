// The tree-wide figures of a finished run (pure; unit-tested).
#pragma once

#include <max_rss/model.hpp>

#include <cstdint>
#include <deque>
#include <optional>

namespace max_rss {

// What the run's snapshots found (the Recorder's tally).
struct SnapshotTally {
    std::optional<uint64_t> best_bytes;  // the largest snapshot (its lower bound when not exact)
    // The largest upper bound of a snapshot whose fork families stayed
    // unresolved and that could have been above best_bytes.
    uint64_t unresolved_upper_bytes = 0;
    // What left those snapshots unresolved: a fork family's sharing, and/or
    // the file pages several processes hold (neither set: the backend's own
    // bound, tree_upper_bound).
    bool unresolved_by_families = false;
    bool unresolved_by_file_pages = false;
    uint64_t release_points = 0;          // snapshots taken where memory was about to fall
    uint64_t release_points_skipped = 0;  // release points not measured (cost)
    bool release_points_reported = true;  // false: the backend cannot see them
    bool processes_untracked = false;     // some processes were not followed at all
    // Processes are found by sampling /proc: one that lived between two
    // samples, or read once before its peak, is not in the records, so their
    // high-water marks bound nothing from above.
    bool processes_sampled = false;
    // The largest wait4 ru_maxrss of a reaped process known to be the
    // program's (one process's high-water mark, or one of its waited
    // descendants'): the tree held at least that much at some moment.
    uint64_t reaped_max_rss_bytes = 0;
    uint64_t exits_unseen = 0;            // processes whose memory went without their exit stop
    uint64_t falls_unseen = 0;            // images whose memory fell where no stop was (policy::fell_unseen)
};

// Derives the tree's peak figures from every process's record and the
// snapshots. The tree's memory falls only at release points (munmap, exec,
// exit, ...): when each was measured exactly, the largest snapshot is the
// peak (PeakMethod::Exact, never below the largest single process's peak).
// Otherwise the headline is that lower bound and upper_bound_bytes says how
// far the truth can be above it (PeakMethod::LowerBound).
TreePeak compute_tree_peak(const std::deque<Process>& processes, const SnapshotTally& tally);

}  // namespace max_rss
