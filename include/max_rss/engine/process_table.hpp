// The one table of the tree's tasks and live processes, shared by every
// backend through the Recorder. Records of every process (live or not) are the
// model's Process entries; the table adds what is needed only while a process
// lives, keyed by pid (pids are recycled only after max_rss reaped them).
#pragma once

#include <max_rss/engine/pid_table.hpp>
#include <max_rss/engine/snapshot.hpp>
#include <max_rss/model.hpp>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

namespace max_rss {

// A task (thread) of the tree. 8 bytes: a 10,000-process tree keeps 10,000.
struct TaskEntry {
    uint32_t process = 0;             // index into RunResult::processes
    bool awaiting_first_stop = true;  // a new task's first stop has not come yet
    bool exiting = false;             // it passed its exit stop
    // Resumed into a release call it stopped at, until its next stop (the
    // call is over by then, and its falls with it); reaches_any: a call that
    // may drop other processes' pages (ReleaseReach::AnyProcess).
    bool in_release = false;
    bool release_reaches_any = false;
};

// What is kept about a process while it lives, beside its model record.
// 80 bytes, largest fields first so that none is padded: a tree of 10,000
// processes alive at once keeps 10,000.
struct LiveProcess {
    SampledProcess sampled;  // how snapshots count it (sampled.index: its record)
    // The largest resident size any snapshot saw in its current image: a VmHWM
    // below it was reset (clear_refs).
    uint64_t max_resident_bytes = 0;
    // In a fork family: what it adds by the lower bound, at the last snapshot.
    uint64_t family_lower_bytes = 0;
    // Its resident size when last read (a snapshot, an exec's or exit's
    // stop). A lower reading fell where max_rss does not stop
    // (policy::fell_between_reads), unless a release call may have lowered
    // it: one of its tasks is inside one (tasks_in_release; any task of the
    // tree, for calls that reach other processes), or one ended since the
    // last reading (rebase_next_read: that reading only takes its size
    // again; so do readings while its threads ran without the release filter).
    uint64_t last_read_resident_bytes = 0;
    uint32_t tasks_in_release = 0;
    uint32_t live_tasks = 0;  // tasks seen and not yet at their exit stop
    // The task its memory is read through: the leader, until the leader ends
    // before the other threads (a zombie leader's /proc files read zeros).
    pid_t reader_tid = 0;
    // A fork child's creator's family at the fork: joined at its first stop,
    // once what it inherited is known.
    uint32_t fork_family = kNoFamily;
    // Its family when its address space went (its exit): a child whose fork
    // is reported only after that (its creator SIGKILLed in the middle of
    // fork) still shares that family's pages.
    uint32_t family_at_release = kNoFamily;
    bool rebase_next_read = false;
    // Past its final exit stop: its address space is gone, it holds nothing
    // until it is reaped.
    bool mm_released = false;
    // A CLONE_VM child that holds the address space it was created in, after
    // its creator left it (exited or exec'd): measured as the mm's owner.
    bool holds_creators_mm = false;
    // A CLONE_VM child was made in its current address space: only then can
    // leaving that address space hand it on (Recorder::hand_on_mm), so no
    // other exit or exec looks for sharers.
    bool lent_mm = false;
};
static_assert(sizeof(LiveProcess) <= 80, "LiveProcess is kept for every live process: mind its size");
static_assert(sizeof(TaskEntry) <= 8, "TaskEntry is kept for every live task: mind its size");

class ProcessTable {
public:
    static constexpr uint32_t kNoParent = UINT32_MAX;

    explicit ProcessTable(std::deque<Process>& processes) : processes_(processes) {}

    // Appends p (its pid not live yet) as a live process and returns its index.
    uint32_t add_process(Process p, uint32_t parent_index, SampledProcess sampled);
    // tid becomes a task of the process at index.
    void add_task(pid_t tid, uint32_t index, bool awaiting_first_stop);

    [[nodiscard]] TaskEntry* task(pid_t tid);
    [[nodiscard]] LiveProcess* live(pid_t pid);
    [[nodiscard]] std::optional<uint32_t> live_index(pid_t pid) const;
    [[nodiscard]] Process& process(uint32_t index) { return processes_[index]; }
    [[nodiscard]] const Process& process(uint32_t index) const { return processes_[index]; }
    // The index of the process that created the one at index, or kNoParent.
    [[nodiscard]] uint32_t parent_of(uint32_t index) const { return parents_[index]; }

    void remove_task(pid_t tid) { tasks_.erase(tid); }
    // A non-leader thread exec'd: it now has the leader's tid (from the former one).
    void retid_task(pid_t former_tid, pid_t tid);
    void remove_live(pid_t pid);
    // The fork family (see snapshot.hpp) the live process pid belongs to now.
    void set_family(pid_t pid, uint32_t family);
    // How many live processes share the family's pages (0 for kNoFamily).
    [[nodiscard]] uint32_t family_size(uint32_t family) const;
    // Another live task of the process at index than tid (0 if none).
    [[nodiscard]] pid_t other_task(uint32_t index, pid_t tid) const;

    [[nodiscard]] size_t task_count() const { return tasks_.size(); }
    [[nodiscard]] size_t live_count() const { return live_.size(); }
    [[nodiscard]] const PidTable<TaskEntry>& tasks() const { return tasks_; }
    [[nodiscard]] PidTable<LiveProcess>& live_processes() { return live_; }
    [[nodiscard]] const std::deque<Process>& processes() const { return processes_; }

private:
    std::deque<Process>& processes_;
    std::deque<uint32_t> parents_;  // per process, live or not (4 bytes each)
    PidTable<TaskEntry> tasks_;
    PidTable<LiveProcess> live_;
    std::unordered_map<uint32_t, uint32_t> family_sizes_;  // only families with live members
};

}  // namespace max_rss
