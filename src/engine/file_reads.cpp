// How a snapshot counts the file-backed and shmem pages of the tree: each
// page once, as the union of every live process's set (snapshot.hpp).
#include <max_rss/engine/policy.hpp>
#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/clock.hpp>

#include <unistd.h>

namespace max_rss {

void Recorder::add_file_union(SnapshotSum& sum, int64_t cpu_start_ns, pid_t releasing_tid) {
    // Even with every process's file pages counted in full, this moment is
    // not above the best so far: nothing to resolve (the usual case between
    // the tree's peaks).
    if (sum.upper_with(0) <= tally_.best_bytes.value_or(0)) return;
    // A family member inside a release call may be unmapping pages while
    // they are read; and past the budget, the snapshot keeps its bounds.
    const auto affordable = [&] {
        return policy::snapshot_affordable(snapshot_spent_ns_ + (os::thread_cpu_ns() - cpu_start_ns), now_ns(), 0);
    };
    if (!family_reads_settled_ || !affordable()) return;
    static const uint64_t page_bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    file_runs_.clear();
    size_t merged_runs = 0;
    size_t read = 0;
    for (auto&& [pid, process] : table_.live_processes()) {
        if (process.mm_released || process.sampled.origin == ImageOrigin::SharedMm) continue;
        const auto cached = file_runs_cache_.find(process.sampled.index);
        if (cached != file_runs_cache_.end()) {
            // Its statm as this snapshot read it, a moment ago.
            const bool same = cached->second.seen_shared_bytes == cached->second.shared_bytes;
            cached->second.seen_shared_bytes = UINT64_MAX;
            if (same) {
                file_runs_.insert(file_runs_.end(), cached->second.runs.begin(), cached->second.runs.end());
                continue;
            }
            file_runs_cache_.erase(cached);
        }
        const size_t first_run = file_runs_.size();
        // Kept for the next snapshots unless it is the task at the release
        // point (what it maps changes now) or the cache is full.
        const TaskEntry* task = releasing_tid != 0 ? table_.task(releasing_tid) : nullptr;
        const bool keep = (!task || task->process != process.sampled.index) &&
                          file_runs_cache_.size() < kMostCachedFileRuns;
        std::optional<uint64_t> shared_before;
        if (keep)
            if (const auto statm = probe_.statm(process.reader_tid)) shared_before = statm->shared_bytes;
        if (!probe_.file_pages(process.reader_tid, file_runs_)) {
            // Gone since its statm was read: it holds nothing now.
            if (!probe_.statm(process.reader_tid)) continue;
            return;
        }
        // Kept only when its shared figure did not move while it was read
        // (read before and after): then these runs are all of its pages.
        if (shared_before) {
            const auto after = probe_.statm(process.reader_tid);
            if (after && after->shared_bytes == *shared_before)
                file_runs_cache_.emplace(process.sampled.index,
                                         CachedFileRuns{*shared_before, UINT64_MAX,
                                                        {file_runs_.begin() + static_cast<std::ptrdiff_t>(first_run),
                                                         file_runs_.end()}});
        }
        // Most runs are the same libraries in every process: merged as they
        // come, a wide tree's runs take the room of their union, not of
        // every process's copy (max_rss's own memory).
        if (file_runs_.size() > 2 * merged_runs + 4096) {
            procfs::merge_file_page_runs(file_runs_);
            merged_runs = file_runs_.size();
        }
        if (++read % 64 == 0 && !affordable()) return;
    }
    sum.set_shared_union(procfs::merge_file_page_runs(file_runs_) * page_bytes);
}

void Recorder::forget_file_runs(pid_t tid) {
    if (file_runs_cache_.empty()) return;
    if (const TaskEntry* task = table_.task(tid)) file_runs_cache_.erase(task->process);
}

}  // namespace max_rss
