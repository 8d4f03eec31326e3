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
    // A tree this wide is measured by bounds: reading thousands of
    // processes at each release point costs more than the budget allows
    // (and the time it takes lets the tree run far ahead of the tracer,
    // which grows max_rss's own memory).
    if (table_.live_processes().size() > kMostProcessesUnited) return;
    // Thousands of processes, few of them read lately: what reading them
    // would cost, by what reads cost lately, is weighed first, so that a read
    // the budget cannot finish is not begun (the snapshot keeps bounds).
    if (file_read_cost_ns_ > 0) {
        int64_t to_read = 0;
        for (auto&& [pid, process] : table_.live_processes())
            if (!process.mm_released && process.sampled.origin != ImageOrigin::SharedMm &&
                !file_runs_cache_.contains(process.sampled.index))
                ++to_read;
        if (!policy::snapshot_affordable(snapshot_spent_ns_ + (os::thread_cpu_ns() - cpu_start_ns), now_ns(),
                                         to_read * file_read_cost_ns_))
            return;
    }
    static const uint64_t page_bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    file_runs_.clear();
    size_t merged_runs = 0;
    size_t processes_read = 0;
    for (auto&& [pid, process] : table_.live_processes()) {
        if (process.mm_released || process.sampled.origin == ImageOrigin::SharedMm) continue;
        const auto cached = file_runs_cache_.find(process.sampled.index);
        if (cached != file_runs_cache_.end()) {
            // Its statm as this snapshot read it, a moment ago.
            if (cached->second.seen_shared_bytes == cached->second.shared_bytes) {
                file_runs_.insert(file_runs_.end(), cached->second.runs.begin(), cached->second.runs.end());
                continue;
            }
            drop_cached_file_runs(process.sampled.index);
        }
        const size_t first_run = file_runs_.size();
        const int64_t read_start_ns = os::thread_cpu_ns();
        // Kept for the next snapshots unless it is the task at the release
        // point (what it maps changes now) or the cache is full.
        const TaskEntry* task = releasing_tid != 0 ? table_.task(releasing_tid) : nullptr;
        const bool keep = (!task || task->process != process.sampled.index) &&
                          file_runs_cache_.size() < kMostCachedFileRuns;
        std::optional<uint64_t> shared_before;
        if (keep)
            if (const auto statm = probe_.statm(process.reader_tid)) shared_before = statm->shared_bytes;
        const bool read = probe_.file_pages(process.reader_tid, file_runs_);
        const int64_t read_cost_ns = os::thread_cpu_ns() - read_start_ns;
        file_read_cost_ns_ = file_read_cost_ns_ == 0 ? read_cost_ns : (3 * file_read_cost_ns_ + read_cost_ns) / 4;
        if (!read) {
            file_runs_.resize(first_run);  // what was read of it before it failed
            // Gone since its statm was read: it holds nothing now.
            if (!probe_.statm(process.reader_tid)) continue;
            return;
        }
        // Kept only when its shared figure did not move while it was read
        // (read before and after): then these runs are all of its pages.
        const size_t runs = file_runs_.size() - first_run;
        if (shared_before && runs <= kMostRunsOfOneCached && cached_runs_ + runs <= kMostCachedRuns) {
            const auto after = probe_.statm(process.reader_tid);
            if (after && after->shared_bytes == *shared_before) {
                file_runs_cache_.emplace(process.sampled.index,
                                         CachedFileRuns{*shared_before, UINT64_MAX,
                                                        {file_runs_.begin() + static_cast<std::ptrdiff_t>(first_run),
                                                         file_runs_.end()}});
                cached_runs_ += runs;
            }
        }
        // Most runs are the same libraries in every process: merged as they
        // come, a wide tree's runs take the room of their union, not of
        // every process's copy (max_rss's own memory).
        if (file_runs_.size() > 2 * merged_runs + 512) {
            procfs::merge_file_page_runs(file_runs_);
            merged_runs = file_runs_.size();
        }
        if (++processes_read % 64 == 0 && !affordable()) return;
    }
    sum.set_shared_union(procfs::merge_file_page_runs(file_runs_) * page_bytes);
    // A large read's room is not kept for the rest of the run.
    if (file_runs_.capacity() > 1024) std::vector<procfs::FilePageRun>().swap(file_runs_);
}

void Recorder::forget_file_runs(pid_t tid, bool its_address_space) {
    const TaskEntry* task = file_runs_cache_.empty() ? nullptr : table_.task(tid);
    if (!task) return;
    drop_cached_file_runs(task->process);
    if (!its_address_space) return;
    if (const auto& owner = table_.process(task->process).shares_mm_with)
        if (const auto index = table_.live_index(*owner)) drop_cached_file_runs(*index);
}

void Recorder::drop_cached_file_runs(uint32_t index) {
    if (const auto it = file_runs_cache_.find(index); it != file_runs_cache_.end()) {
        cached_runs_ -= it->second.runs.size();
        file_runs_cache_.erase(it);
    }
}

void Recorder::clear_cached_file_runs() {
    file_runs_cache_.clear();
    cached_runs_ = 0;
}

}  // namespace max_rss
