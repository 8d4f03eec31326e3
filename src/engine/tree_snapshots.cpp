// The tree's total at one moment (a release point, a tick), and what is
// kept of it: the best so far, the bounds, the timeline. snapshot.hpp sums
// it; family_reads.cpp and file_reads.cpp resolve its shared parts.
#include <max_rss/engine/policy.hpp>
#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/clock.hpp>

#include <algorithm>

namespace max_rss {

void Recorder::tree_total_seen(int64_t t_ns, uint64_t total_bytes) {
    tally_.best_bytes = std::max(tally_.best_bytes.value_or(0), total_bytes);
    append_bounded(result_.timeline, TimelinePoint{t_ns, total_bytes, {}}, options_.max_timeline_points);
}

void Recorder::snapshot(SnapshotCause cause, pid_t releasing_tid) {
    if (totals_from_backend_) return;
    auto& live = table_.live_processes();
    if (live.empty()) return;
    const int64_t t = now_ns();
    if (cause == SnapshotCause::Timer) {
        const int64_t gap = policy::snapshot_gap_ns(0, last_snapshot_cost_ns_);
        if (gap > 0 && t - last_snapshot_ns_ < gap) return;
    } else {
        const int64_t expected = last_snapshot_processes_ == 0
                                     ? 0
                                     : last_snapshot_cost_ns_ / static_cast<int64_t>(last_snapshot_processes_) *
                                           static_cast<int64_t>(live.size());
        if (!policy::snapshot_affordable(snapshot_spent_ns_, t, expected)) {
            tally_.release_points_skipped++;
            return;
        }
        tally_.release_points++;
    }
    last_snapshot_ns_ = t;
    // What a snapshot costs is max_rss's CPU time in it (its reads of /proc,
    // the page-table walks of smaps_rollup), not its wall time: on a busy
    // machine the wall time grows with whatever else runs, and the same
    // program would be measured exactly or not by the load beside it.
    const int64_t cpu_start_ns = os::thread_cpu_ns();
    SnapshotSum sum;
    std::unordered_map<uint32_t, FamilyTally> families;  // those with two or more live members
    for (auto& [index, cached] : file_runs_cache_) cached.seen_shared_bytes = UINT64_MAX;  // read below
    for (auto&& [pid, process] : live) {
        if (process.mm_released) continue;
        const auto statm = probe_.statm(process.reader_tid);
        if (!statm) continue;
        process.max_resident_bytes = std::max(process.max_resident_bytes, statm->resident_bytes);
        // A CLONE_VM child reads its creator's address space, whose falls
        // are the creator's.
        if (!table_.process(process.sampled.index).shares_mm_with) resident_read(process, statm->resident_bytes);
        if (!file_runs_cache_.empty())
            if (auto cached = file_runs_cache_.find(process.sampled.index); cached != file_runs_cache_.end())
                cached->second.seen_shared_bytes = statm->shared_bytes;
        if (table_.family_size(process.sampled.family) > 1) {
            families[process.sampled.family].add(process.sampled, *statm);
            sum.add_member_shared(process.sampled, *statm);
            process.family_lower_bytes = member_lower_bytes(process.sampled, *statm);
        } else {
            sum.add_alone(process.sampled, *statm);
        }
    }
    if (!families.empty()) add_families(sum, families);
    if (!sum.shared_resolved()) add_file_union(sum, cpu_start_ns, releasing_tid);
    SnapshotTotal total = std::move(sum).finish();
    last_snapshot_cost_ns_ = os::thread_cpu_ns() - cpu_start_ns;
    last_snapshot_processes_ = live.size();
    snapshot_spent_ns_ += last_snapshot_cost_ns_;
    tally_.best_bytes = std::max(tally_.best_bytes.value_or(0), total.total_bytes);
    if (!total.exact() && total.upper_bytes > *tally_.best_bytes) {
        tally_.unresolved_upper_bytes = std::max(tally_.unresolved_upper_bytes, total.upper_bytes);
        tally_.unresolved_by_file_pages = tally_.unresolved_by_file_pages || !total.file_pages_exact;
        // Bounds beyond what the file pages' bounds explain: a family's.
        const uint64_t file_gap =
            total.file_pages_exact ? 0 : total.file_pages_upper_bytes - total.file_pages_lower_bytes;
        tally_.unresolved_by_families =
            tally_.unresolved_by_families || total.upper_bytes - total.total_bytes > file_gap;
    }
    // Nothing owned yet (the root before its first exec is max_rss's own
    // copy): no point, rather than a zero that reads as "measured, empty".
    if (total.total_bytes == 0) return;
    append_bounded(result_.timeline, TimelinePoint{t, total.total_bytes, std::move(total.top)},
                   options_.max_timeline_points);
}

}  // namespace max_rss
