// The measurement engine: turns the stream of process events a backend reports
// into the run's model (RunResult), applying the one measurement policy. It
// reads memory only through a MemoryProbe, at the moments the events mark, and
// knows nothing of ptrace, eBPF, JSON or terminals.
//
// The events, in the order the kernel reports them for one task:
//   root_started | task_created | process_adopted   a task came to be
//   first_stop                      it has not run yet (a fork child's inherited pages)
//   exec_entry, exec_done           an image ends, a new one begins
//   memory_released                 about to unmap or discard memory
//   task_exiting                    its last moment with its memory intact
//   task_reaped                     gone, with its exit status and rusage
// and, for the whole tree: tick (the periodic timer), seen_alive (a live
// process read without being stopped: the sample backend).
//
// The tree peak: the tree's memory falls only at release points (exec_entry,
// memory_released, task_exiting), so a snapshot at each, taken while that
// task waits, sees every maximum (see snapshot.hpp for how one counts).
#pragma once

#include <max_rss/engine/probe.hpp>
#include <max_rss/engine/process_table.hpp>
#include <max_rss/engine/tree_peak.hpp>
#include <max_rss/engine/unseen_children.hpp>
#include <max_rss/model.hpp>

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace max_rss {

// What kind of task a fork/clone made.
enum class CloneKind : uint8_t {
    Thread,    // CLONE_THREAD: a task of the same process
    Fork,      // a new process with a copy-on-write copy of its creator's memory
    SharedMm,  // vfork, posix_spawn, CLONE_VM: a new process in its creator's address space
};

// Whose pages a release call may drop: its caller's address space only
// (munmap, madvise, a lowering brk, ...), or any process's (a file's
// truncation or hole, which every mapping of the file loses; another
// process's memory, by process_madvise or process_mrelease).
enum class ReleaseReach : uint8_t { Own, AnyProcess };

struct RecorderOptions {
    std::vector<std::string> command;
    int64_t sample_interval_ns = 20'000'000;  // recorded in the timeline
    size_t max_timeline_points = 2048;        // ~70-180 bytes a point
};

class Recorder {
public:
    Recorder(RecorderOptions options, MemoryProbe& probe);
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    // Nanoseconds since the Recorder was made (the run's clock).
    [[nodiscard]] int64_t now_ns() const;

    // The launched program. Before its exec (!exec_seen) it owns nothing: the
    // image it runs is max_rss's own fork. After it (a backend that cannot see
    // the exec), its program is read from the probe.
    void root_started(pid_t pid, bool exec_seen = false);
    // creator_tid made child. False (and nothing recorded) when the creator is
    // not a known task.
    bool task_created(pid_t child, pid_t creator_tid, CloneKind kind);
    // A process whose creation was not seen: its creator died in the middle of
    // fork (ptrace), or it was found in /proc (sampling; program read from
    // there, ppid 0 when it is max_rss's own child). It runs its creator's
    // program (origin Fork) unless exec_seen.
    void process_adopted(pid_t pid, pid_t ppid, bool exec_seen);
    // A thread whose creation was not seen (its creator died mid-clone).
    void thread_adopted(pid_t tid, pid_t tgid);
    // tid's first stop, before it ran an instruction.
    void first_stop(pid_t tid);
    // tid is about to exec: its image is still intact.
    void exec_entry(pid_t tid);
    // tid (now the thread group's leader) exec'd; former_tid is the thread
    // that called exec (== tid unless a non-leader thread exec'd).
    void exec_done(pid_t tid, pid_t former_tid);
    // A backend that counts a process's tasks itself (ebpf) says how many it had.
    void tasks_counted(pid_t pid, uint32_t tasks);
    // tid reached its exit, its address space still intact.
    void task_exiting(pid_t tid);
    // tid is gone. For a leader, the process is over: exit and rusage are its.
    // ru_maxrss_is_its_own: the process waited for no children, so ru_maxrss
    // covers only it (sampling uses it for the moments it missed).
    void task_reaped(pid_t tid, const ExitStatus& exit, OptionalBytes ru_maxrss_bytes,
                     bool ru_maxrss_is_its_own = false);
    // tid is stopped before a system call that may unmap or discard memory
    // (munmap, madvise(DONTNEED), a shrinking brk, ...): a release point.
    void memory_released(pid_t tid, ReleaseReach reach = ReleaseReach::Own);
    // Any stop of a task of the tree (before what the stop reports): a
    // release call it was resumed into is over.
    void task_stopped(TaskEntry& task);
    // Every thread of tid's process has the release filter now (until then
    // they could free memory where nothing stops them).
    void release_filter_installed(pid_t tid);
    // The backend cannot report release points (no seccomp filter): the tree
    // peak can only be bounded.
    void release_points_unavailable() { tally_.release_points_reported = false; }
    // The backend finds processes by sampling /proc (some may never be
    // seen): the tree peak is a lower bound with nothing above it.
    void processes_sampled() { tally_.processes_sampled = true; }
    // A reaped process's ru_maxrss that is the program's (not a copy of
    // max_rss): the tree peak is at least that.
    void reaped_max_rss(uint64_t bytes) { tally_.reaped_max_rss_bytes = std::max(tally_.reaped_max_rss_bytes, bytes); }
    // Release points not measured so far (what they would have cost).
    [[nodiscard]] uint64_t release_points_skipped() const { return tally_.release_points_skipped; }
    // false: a fork family member may be inside a release call, so no
    // family's sharing is resolved (smaps_rollup) until true again: its
    // Pss_Anon figures move while they are read (the snapshot keeps bounds).
    void set_family_reads_settled(bool settled) { family_reads_settled_ = settled; }
    // The periodic timer: a snapshot of the live tree.
    void tick();
    // pid is alive and running: read its VmHWM, which holds every peak it
    // reached so far (the sample backend).
    void seen_alive(pid_t pid);

    void warn(Warning warning) { result_.warnings.push_back(std::move(warning)); }
    void degrade(Degradation degradation);
    void set_backend(BackendKind kind) { result_.backend = kind; }
    // The backend measures the tree's total itself (eBPF: at every counter
    // change, in the kernel): no snapshot is taken from the probe, and
    // tree_total_seen() records the backend's figures instead.
    void totals_from_backend() { totals_from_backend_ = true; }
    void tree_total_seen(int64_t t_ns, uint64_t total_bytes);
    // The backend could not count copy-on-write copies exactly (cow), or
    // could not count the file and shmem pages several processes held once
    // each (file_pages): the tree may have held up to upper_bytes (the peak
    // becomes a lower bound if above it).
    void tree_upper_bound(uint64_t upper_bytes, bool cow, bool file_pages) {
        tally_.unresolved_upper_bytes = std::max(tally_.unresolved_upper_bytes, upper_bytes);
        tally_.unresolved_by_families = tally_.unresolved_by_families || cow;
        tally_.unresolved_by_file_pages = tally_.unresolved_by_file_pages || file_pages;
    }
    // Some processes could not be followed at all: the peak is a lower bound
    // with no upper one.
    void processes_untracked() { tally_.processes_untracked = true; }
    // max_rss itself failed (what): the run is reported as far as it went.
    void fail(std::string what) { result_.internal_error = std::move(what); }
    void set_cgroup_peak(std::optional<uint64_t> bytes) { cgroup_peak_bytes_ = bytes; }
    // max_rss was sent a termination signal during the run (the first counts).
    void interrupted(int signo) {
        if (!result_.interrupted_by_signal) result_.interrupted_by_signal = signo;
    }

    // End times, orphans, the timeline and the tree peak, once the tree is gone
    // (or the backend gave up: then what was measured so far).
    RunResult finish();

    [[nodiscard]] ProcessTable& table() { return table_; }
    [[nodiscard]] const Process* live_process(pid_t pid) const;
    [[nodiscard]] bool root_exited() const { return root_exited_; }
    // How the root ended (once root_exited()).
    [[nodiscard]] const ExitStatus& root_exit() const { return result_.exit; }

private:
    uint32_t new_process(pid_t pid, pid_t ppid, ImageOrigin origin, std::shared_ptr<const Program> program,
                         std::optional<pid_t> shares_mm_with);
    // Reads a stopped task's VmHWM (and, on its final exit, the breakdown) into
    // its process's current image.
    void measure_image(pid_t tid, uint32_t index, bool final_exit);
    // The process owner_pid leaves its address space (its exit, or its exec)
    // while CLONE_VM children of it still run there: the oldest of them
    // holds it from now on (it is counted and measured there), and the
    // others share it with that one.
    void hand_on_mm(pid_t owner_pid);
    // A snapshot of every live process now: at a release point (within
    // policy::snapshot_affordable), or from the timer (policy::snapshot_gap_ns).
    enum class SnapshotCause : uint8_t { Release, Timer };
    // releasing_tid: the task at the release point (0: none), whose file
    // pages are not kept for the next snapshot (they change now).
    void snapshot(SnapshotCause cause, pid_t releasing_tid = 0);
    // Adds the fork families to sum: exactly (smaps_rollup of each member)
    // when they could lift the snapshot above the best so far.
    void add_families(SnapshotSum& sum, std::unordered_map<uint32_t, FamilyTally>& families);
    // Every member's Pss_Anon, in live_processes() order, and those of the
    // families' children not reported yet (unseen_children.hpp); nullopt when
    // no read was whole: a child was made in the family while it was read.
    struct UnseenRead {
        SampledProcess how;
        StatmSample statm;
        std::optional<uint64_t> pss_anon_bytes;
    };
    struct FamilyReads {
        static constexpr uint64_t kNotRead = UINT64_MAX;  // 8 bytes a member, not 16: 10,000 members
        std::vector<uint64_t> members;
        std::vector<UnseenRead> unseen;
    };
    std::optional<FamilyReads> read_families(const std::unordered_map<uint32_t, FamilyTally>& families);
    // Counts the tree's file-backed and shmem pages once each (the union of
    // every live process's set, file_pages.hpp) when more than one process
    // holds such pages and they could lift the snapshot above the best so
    // far; else they stay bounds. cpu_start_ns: the snapshot's start (its
    // cost so far counts against the budget).
    void add_file_union(SnapshotSum& sum, int64_t cpu_start_ns, pid_t releasing_tid);
    // The live process whose address space creator_pid runs in (itself, or
    // the one it shares with), or nullptr: not a live process of the tree.
    const LiveProcess* creator_owner(pid_t creator_pid);
    // The family a fork child made in owner's address space shares pages
    // with (as it was when that address space went).
    static uint32_t family_for_children(const LiveProcess& owner);
    std::shared_ptr<const Program> intern(Program program);
    // The tree gets its second process from creator_pid: until now that
    // process was the tree, and its VmHWM (the tree's peak so far) is a size
    // known of it, as a snapshot's is (policy::fell_unseen).
    void second_process_from(pid_t creator_pid);
    // A reading of the live process's resident size (in its current image):
    // counts a fall between it and the last reading that no release point
    // explains (policy::fell_between_reads).
    void resident_read(LiveProcess& live, uint64_t resident_bytes);
    // Whether falls max_rss does not stop at are looked for now: the tree
    // has had two processes (before, its one process's VmHWM is the tree's
    // peak), and the backend stops at release points.
    [[nodiscard]] bool watching_unseen_falls() const;
    // A release point's snapshot is taken (or skipped): tid is resumed into
    // the call, and its process's memory (with AnyProcess, anyone's) may
    // fall until tid stops again (task_stopped).
    void released_after_snapshot(pid_t tid, ReleaseReach reach);
    void release_ended(TaskEntry& task);
    // The live process whose address space the process at index runs in.
    LiveProcess* mm_owner(uint32_t index);

    RecorderOptions options_;
    MemoryProbe& probe_;
    int64_t start_ns_;
    RunResult result_;
    ProcessTable table_;
    UnseenChildren unseen_;
    pid_t root_pid_ = 0;
    bool root_exited_ = false;
    bool totals_from_backend_ = false;
    bool tree_had_two_processes_ = false;
    uint32_t tasks_releasing_any_ = 0;  // tasks inside a ReleaseReach::AnyProcess call
    bool family_reads_settled_ = true;
    uint32_t next_serial_ = 1;
    std::optional<uint64_t> cgroup_peak_bytes_;
    std::vector<procfs::FilePageRun> file_runs_;  // add_file_union's, kept for its capacity
    // The file pages of some processes as last read, by process index, with
    // their statm shared figure then: a process's file pages only grow
    // between its release points, so while that figure is the same, so are
    // its pages (a fork loop's parent is not read again at each child's
    // exit). Dropped at any release point, and at its exec and exit; at
    // most kMostCachedFileRuns processes and kMostCachedRuns runs (max_rss's
    // own memory: 10,000 live processes must not grow it).
    struct CachedFileRuns {
        uint64_t shared_bytes = 0;
        uint64_t seen_shared_bytes = UINT64_MAX;  // this snapshot's statm figure (UINT64_MAX: not read)
        std::vector<procfs::FilePageRun> runs;
    };
    static constexpr size_t kMostProcessesUnited = 1024;  // live processes; more: the file part stays bounds
    static constexpr size_t kMostCachedFileRuns = 32;    // processes
    static constexpr size_t kMostCachedRuns = 4096;      // runs in all (128 KiB)
    static constexpr size_t kMostRunsOfOneCached = 1024;  // a process with more is read each time
    std::unordered_map<uint32_t, CachedFileRuns> file_runs_cache_;
    size_t cached_runs_ = 0;
    int64_t file_read_cost_ns_ = 0;  // what reading one process's file pages cost, lately (CPU)
    // tid's process's kept set; with its_address_space, also that of the
    // address space's owner when tid's process is a CLONE_VM sharer (its
    // munmap changes the owner's pages; its exec or exit does not).
    void forget_file_runs(pid_t tid, bool its_address_space = false);
    void drop_cached_file_runs(uint32_t index);
    void clear_cached_file_runs();
    SnapshotTally tally_;
    int64_t snapshot_spent_ns_ = 0;  // CPU time (this thread) spent in snapshots so far
    int64_t last_snapshot_ns_ = INT64_MIN / 2;
    int64_t last_snapshot_cost_ns_ = 0;
    size_t last_snapshot_processes_ = 0;
    // One Program per distinct (exe, argv): a shell loop that runs the same
    // command 10,000 times keeps one copy of it.
    struct ProgramHash {
        size_t operator()(const std::shared_ptr<const Program>& p) const noexcept;
    };
    struct ProgramEqual {
        bool operator()(const std::shared_ptr<const Program>& a, const std::shared_ptr<const Program>& b) const;
    };
    std::unordered_set<std::shared_ptr<const Program>, ProgramHash, ProgramEqual> programs_;
};

}  // namespace max_rss
