// Keeps the tree from being read while a fork family's member is inside a
// call that frees memory.
//
// A snapshot reads a fork family's members one after another, and their
// smaps_rollup Pss_Anon divides each shared page among the members that map
// it at the moment it is read. A member still unmapping shared pages (resumed
// from an earlier release stop: munmap, exec, its exit) changes that division
// while the others are read: those read after it count the page at a larger
// share than it had when it was read, and the family's sum counts more than it
// held at any moment (a 300 MiB tree read 321 MiB, labelled exact).
//
// So a member of a family is followed into its release call: resumed with
// PTRACE_SYSCALL, its release ends at its next stop (the syscall's exit, its
// exec event) or, for its exit, when its leader is reaped (the address space
// is torn down before that). Meanwhile any other task that stops at a release
// point is held, stopped, and measured once no release is under way, in the
// order they stopped. A process that shares no page with a live relative is
// not followed: its release changes no one else's figures.
//
// Following a munmap costs a second stop. When the snapshot at its stop was
// skipped (the snapshots' CPU budget is spent: the run is a lower bound
// anyway), it is not followed, only noted: until that task stops again, no
// snapshot resolves a family's sharing (a family keeps its bounds).
//
// Pure bookkeeping: the ptrace backend asks and acts (unit-tested).
#pragma once

#include <max_rss/engine/pid_table.hpp>
#include <max_rss/engine/process_table.hpp>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>

namespace max_rss::ptrace_backend {

enum class ReleasePoint : uint8_t {
    Syscall,        // munmap, madvise, a lowering brk, ... (the release filter)
    SharedSyscall,  // one that may lower other processes' memory too (StopTag::ReleaseShared)
    ExecEntry,  // execve: the old image goes
    Exit,       // the last task's exit stop: the address space goes
};

// Whose next event ends tid's release at point, if that release can change a
// fork family's figures; 0: it cannot (tid shares no page with a live
// relative, or its exit leaves an address space others still use).
pid_t release_ends_at_event_of(ProcessTable& table, pid_t tid, ReleasePoint point);

class ReleaseGate {
public:
    struct Held {
        pid_t tid = 0;
        ReleasePoint point = ReleasePoint::Syscall;
        int64_t since_ns = 0;  // when it stopped (the run's clock)
    };

    // A task stopped at a release point: true if it may be measured now;
    // false: it is held (in stopping order) until no release is under way.
    bool admit(pid_t tid, ReleasePoint point, int64_t now_ns);
    // A measured family member goes on into its release: until the next event
    // of `until_event_of` (the task, or for an exit its process's leader) the
    // tree is not read.
    void entered(pid_t until_event_of) { under_way_.assign(until_event_of, true); }
    // A family member went into a release call unfollowed: until its next
    // event, family reads are not settled.
    void entered_unfollowed(pid_t tid) { unfollowed_.assign(tid, true); }
    // Whether a family's Pss_Anon may be read now: no member in a release
    // call that was not followed (those followed hold every reader).
    [[nodiscard]] bool family_reads_settled() const { return unfollowed_.empty(); }
    // Any event (stop or end) of tid: a release it was under ends; a stop it
    // was held at is over (only SIGKILL moves a held task: its exit comes
    // next; the backend checks a held task is still where it stopped before
    // it measures it, in case that exit stop is not reported yet).
    void event_of(pid_t tid);
    // The next held stop to measure, once no release is under way.
    std::optional<Held> next_ready();
    [[nodiscard]] bool release_under_way() const { return !under_way_.empty(); }
    [[nodiscard]] size_t held_count() const { return held_.size(); }
    [[nodiscard]] std::optional<int64_t> oldest_held_since_ns() const;
    // Every held stop, to be measured as it is (max_rss is killing the tree,
    // or a release has not ended for too long).
    std::deque<Held> take_all_held();
    // Stops holding anyone for the releases under way (one that never seems
    // to end; the tree being killed): they count as unfollowed from now.
    void stop_following();

private:
    // Sets of pids, as compact as the process table's (10,000 forked
    // children exiting at once are 10,000 releases under way).
    PidTable<bool> under_way_;
    PidTable<bool> unfollowed_;
    std::deque<Held> held_;
};

}  // namespace max_rss::ptrace_backend
