// Falls of a process's memory where the ptrace backend does not stop (a
// file mmap(MAP_FIXED), io_uring's madvise, reclaim): seen afterwards as a
// reading lower than the one before with no release call of its own that
// could explain it (policy::fell_between_reads). This file keeps which
// release calls are in flight, and so which falls are excused.
#include <max_rss/engine/policy.hpp>
#include <max_rss/engine/recorder.hpp>
#include <max_rss/util/log.hpp>

namespace max_rss {

bool Recorder::watching_unseen_falls() const {
    return tree_had_two_processes_ && !totals_from_backend_ && tally_.release_points_reported;
}

void Recorder::resident_read(LiveProcess& live, uint64_t resident_bytes) {
    // A release call is resumed at its stop and not followed to its end: the
    // task may not have run it yet, or be in the middle of it, at any
    // reading before its next stop.
    const bool releasing = live.tasks_in_release > 0 || tasks_releasing_any_ > 0;
    if (!releasing && !live.rebase_next_read && watching_unseen_falls() &&
        policy::fell_between_reads(live.last_read_resident_bytes, resident_bytes)) {
        log::debug("pid {}: {} resident bytes, {} when last read, with no release call between: a fall unseen",
                   table_.process(live.sampled.index).pid, resident_bytes, live.last_read_resident_bytes);
        tally_.falls_unseen++;
    }
    live.last_read_resident_bytes = resident_bytes;
    if (!releasing) live.rebase_next_read = false;
}

LiveProcess* Recorder::mm_owner(uint32_t index) {
    const Process& proc = table_.process(index);
    return table_.live(proc.shares_mm_with.value_or(proc.pid));  // a CLONE_VM child frees in the mm it shares
}

void Recorder::released_after_snapshot(pid_t tid, ReleaseReach reach) {
    TaskEntry* task = table_.task(tid);
    if (!task || task->in_release) return;
    task->in_release = true;
    task->release_reaches_any = reach == ReleaseReach::AnyProcess;
    if (task->release_reaches_any) tasks_releasing_any_++;
    else if (LiveProcess* owner = mm_owner(task->process)) owner->tasks_in_release++;
}

void Recorder::task_stopped(TaskEntry& task) {
    if (task.in_release) release_ended(task);
}

void Recorder::release_ended(TaskEntry& task) {
    task.in_release = false;
    // What the call freed fell before the next reading, unread: that one
    // only takes the size again.
    if (task.release_reaches_any) {
        if (tasks_releasing_any_ > 0 && --tasks_releasing_any_ == 0)
            for (auto&& [pid, live] : table_.live_processes()) live.rebase_next_read = true;
        return;
    }
    if (LiveProcess* owner = mm_owner(task.process)) {
        if (owner->tasks_in_release > 0) owner->tasks_in_release--;
        owner->rebase_next_read = true;
    }
}

void Recorder::release_filter_installed(pid_t tid) {
    if (const TaskEntry* task = table_.task(tid))
        if (LiveProcess* owner = mm_owner(task->process)) owner->rebase_next_read = true;
}

}  // namespace max_rss
