// Plain data: what a traced run produced. No behaviour, no I/O, no ptrace.
// Every size is in bytes, every time in seconds or nanoseconds as named.
#pragma once

#include <max_rss/optional_bytes.hpp>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace max_rss {

// How a process or a run ended: exactly one of code/signal is set once it ended.
struct ExitStatus {
    std::optional<int> code;    // exit(code)
    std::optional<int> signal;  // killed by this signal
    bool core_dumped = false;

    // The shell convention: code, or 128 + signal. 0 when unknown.
    [[nodiscard]] int shell_code() const {
        if (code) return *code;
        if (signal) return 128 + *signal;
        return 0;
    }
};

// What smaps_rollup adds to status: proportional and private/shared splits.
// Reading it walks the page tables, so it is read only at a process's final
// exit, and only when it has at least 1 MiB resident.
struct SmapsBreakdown {
    OptionalBytes pss_bytes;
    OptionalBytes pss_anon_bytes;
    OptionalBytes pss_file_bytes;
    OptionalBytes pss_shmem_bytes;
    OptionalBytes private_bytes;    // Private_Clean + Private_Dirty
    OptionalBytes shared_bytes;     // Shared_Clean + Shared_Dirty
    OptionalBytes anonymous_bytes;  // Anonymous
    OptionalBytes swap_pss_bytes;   // SwapPss
};

// One snapshot of an address space, from /proc/<tid>/status and smaps_rollup.
// Fields a source did not provide stay unset ("not measured", never 0).
// OptionalBytes, not std::optional, and the smaps part out of line only when
// read: one of these is kept per process for the whole run.
struct MemoryBreakdown {
    // from status
    OptionalBytes hwm_bytes;        // VmHWM: peak resident of this mm
    OptionalBytes rss_bytes;        // VmRSS
    OptionalBytes rss_anon_bytes;   // RssAnon
    OptionalBytes rss_file_bytes;   // RssFile
    OptionalBytes rss_shmem_bytes;  // RssShmem
    OptionalBytes swap_bytes;       // VmSwap
    // from smaps_rollup; null when it was not read
    std::shared_ptr<const SmapsBreakdown> smaps;
};

// What an exec started: shared between the images of forked children, which
// keep running their parent's program until they exec themselves.
struct Program {
    std::vector<std::string> argv;
    std::string exe;  // /proc/<pid>/exe after exec
};

// How an image came to be.
enum class ImageOrigin : uint8_t {
    Exec,         // a successful execve: the memory is the program's own
    Fork,         // a fork child before (or without) exec: starts as a copy-on-write
                  // copy of its parent; only what it added counts as its own
    SharedMm,     // vfork / CLONE_VM child before exec: runs in its parent's mm,
                  // owns no memory of its own (until its parent exits or execs
                  // and leaves the mm to it: then the mm is its)
};

// One program image run by a process: from fork or exec to the next exec or exit.
struct Image {
    std::shared_ptr<const Program> program;
    // The image's own true peak. Exec: VmHWM at its last stop (execve entry or
    // exit). Fork: max(VmHWM - inherited_rss_bytes, private at last stop).
    // SharedMm: 0 (the memory belongs to the process whose mm it borrows),
    // or the mm's VmHWM once its creator left the mm to it.
    uint64_t peak_rss_bytes = 0;
    // Raw VmHWM as the kernel gave it (for Fork images this includes the
    // parent's pages; it is what ru_maxrss is built from).
    OptionalBytes hwm_bytes;
    // Fork images: resident pages the child already had when it first stopped.
    OptionalBytes inherited_rss_bytes;
    int64_t start_ns = 0;   // since the run started
    int64_t end_ns = 0;
    ImageOrigin origin = ImageOrigin::Exec;
    bool measured = false;  // false: no stop of this image could be read
};

// Fields ordered largest first: one record per process is kept for the
// whole run, and padding would cost every one of them.
struct Process {
    pid_t pid = 0;
    pid_t ppid = 0;          // the process that created it (0 for the root)
    uint32_t serial = 0;     // unique in a run; pids may be reused
    uint32_t threads = 1;    // tasks ever seen in this thread group
    std::vector<Image> images;
    // The process's own peak: the max over its images' peak_rss_bytes.
    uint64_t peak_rss_bytes = 0;
    OptionalBytes ru_maxrss_bytes;  // from wait4 when max_rss reaped it
    MemoryBreakdown at_exit;  // at the final exit stop
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    std::optional<pid_t> shares_mm_with;  // CLONE_VM without exec: counted there (while that one is in the mm)
    ExitStatus exit;
    bool orphaned = false;  // outlived its parent and was reparented to max_rss
};

// How TreePeak::tree_bytes was derived (report/ turns it into words).
enum class PeakMethod : uint8_t {
    Exact,             // measured at every point where the tree's memory can fall: the maximum itself
    LowerBound,        // some of those points could not be measured exactly: tree_bytes <= truth <= upper_bound_bytes
    DegradedSampling,  // ptrace was refused: /proc sampled, see RunResult::degradation
};

// Why a tree peak is a bound and not exact.
enum class InexactReason : uint8_t {
    None,
    NoReleasePoints,     // the backend could not stop the program where memory falls (no seccomp filter)
    SnapshotsSkipped,    // release points skipped: measuring each would have cost too much of the run
    FamiliesUnresolved,  // copy-on-write sharing in a fork family left unresolved (smaps too costly)
    FilePagesUnresolved,  // file/shmem pages several processes hold not united (reads failed or cost too much; ebpf never unites them)
    ProcessesUntracked,  // some processes could not be followed at all (eBPF tables full): no upper bound
    ExitsUnseen,         // processes ended without the stop at their exit: the moment before was not measured
    FallsUnseen,         // an image's memory fell where the backend does not stop (mmap MAP_FIXED of a file, O_TRUNC, reclaim)
};

struct TreePeak {
    uint64_t tree_bytes = 0;            // the headline figure: exact, or a lower bound (method)
    PeakMethod method = PeakMethod::Exact;
    InexactReason inexact_reason = InexactReason::None;
    // When not exact: the tree never held more than this.
    std::optional<uint64_t> upper_bound_bytes;
    uint64_t largest_process_bytes = 0; // max over processes of peak_rss_bytes: a lower bound
    pid_t largest_pid = 0;
    // The largest sum of image high-water marks (VmHWM) whose lifetimes
    // overlap: an upper bound (each image never holds more than its VmHWM;
    // shared pages counted in every process).
    uint64_t overlapping_peaks_bytes = 0;
    uint64_t sum_of_process_peaks_bytes = 0;  // the naive figure: counts sequential peaks too
    std::optional<uint64_t> sampled_bytes;    // the largest snapshot of the live tree
    uint64_t release_points = 0;              // snapshots taken where memory was about to fall
    uint64_t release_points_skipped = 0;      // ... and skipped for their cost
    // --cgroup: the tree's memory cgroup peak. Includes page cache, tmpfs/shmem
    // and kernel memory charged to the tree: a cross-check, not resident memory.
    std::optional<uint64_t> cgroup_bytes;
};

// Memory of the live tree over time, sampled by the tracer. Bounded in size
// however long the run: when full, neighbouring points are merged keeping the
// one with the larger total, so peaks survive.
struct TimelinePoint {
    int64_t t_ns = 0;          // since the run started
    uint64_t total_bytes = 0;  // the whole live tree at t (shared pages once)
    // The largest contributors at t: (index into RunResult::processes, bytes).
    // The rest of total_bytes belongs to other processes.
    std::vector<std::pair<uint32_t, uint64_t>> top;
};

struct Timeline {
    int64_t interval_ns = 0;   // the sampling interval asked for
    std::vector<TimelinePoint> points;
};

// Something the user should know about a run, as a kind and its figures;
// report/ turns it into words.
struct Warning {
    enum class Kind : uint8_t {
        HwmReset,           // pid's VmHWM (bytes) fell below a resident size a snapshot saw
                            // (other_bytes): the program reset it; its peak is the sampled figure
        Unmeasured,         // no stop of pid could be read (it vanished at every one)
        NoExecFilter,       // the exec seccomp filter could not be installed (error):
                            // images replaced by exec are not measured
        CgroupUnavailable,  // --cgroup could not be used: detail says why
        StrictSeccomp,      // pid asked for seccomp strict mode: refused (error) under ptrace
        SurvivorsKilled,    // max_rss was asked to stop after the command ended: bytes = how
                            // many processes it started still ran, and were killed
        EventsLost,         // eBPF: bytes = kernel records the ring buffer had no room for
        CowBounds,          // eBPF: copy-on-write copies could not be followed: the tree
                            // peak (bytes) is a lower bound, other_bytes an upper one
        PtraceRefused,      // pid called ptrace (detail: the request, e.g. PTRACE_TRACEME) in a
                            // way the kernel refuses (error) because max_rss traces it:
                            // debuggers, strace, LeakSanitizer cannot work under ptrace;
                            // only the first such call of a run
        NoReleaseFilter,    // the release-point filter could not be installed in pid when the
                            // tree first had two processes (error): the tree peak is a lower bound
        Untracked,          // eBPF: bytes = processes or address spaces its full tables (other_bytes
                            // entries) could not follow: their memory is missing, the peak a lower bound
    };
    Kind kind = Kind::Unmeasured;
    pid_t pid = 0;
    uint64_t bytes = 0;
    uint64_t other_bytes = 0;
    int error = 0;       // an errno
    std::string detail;  // a system's own words (a cgroup path and its error)

    friend bool operator==(const Warning&, const Warning&) = default;
};

// How a run's tree was followed (backends/).
enum class BackendKind : uint8_t {
    Ptrace,  // stops each task at its birth, exec and exit (default; no privileges)
    Sample,  // no ptrace: samples /proc and waits for what it can
    Ebpf,    // kernel events (BPF): nobody stopped; needs root (or CAP_BPF + CAP_PERFMON) and BTF
};

// Why a run was not traced (RunResult::degraded).
struct Degradation {
    int seize_errno = 0;  // what PTRACE_SEIZE failed with
};

struct RunResult {
    std::vector<std::string> command;
    ExitStatus exit;                 // the root process's
    double wall_seconds = 0;
    OptionalBytes ru_maxrss_bytes;  // wait4 of the root: what GNU time says
    TreePeak peak;
    // In order of creation; [0] is the root. A deque: a tree of 10,000
    // processes grows it without the copy-and-double spike of a vector.
    std::deque<Process> processes;
    Timeline timeline;
    std::vector<Warning> warnings;   // things the user should know
    BackendKind backend = BackendKind::Ptrace;  // the one that measured it
    bool degraded = false;           // ptrace was unavailable: figures are partial
    Degradation degradation;         // why (when degraded)
    // The first of SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to max_rss during
    // the run, if any (it was passed on to the program).
    std::optional<int> interrupted_by_signal;
    // max_rss itself failed during the run (a system call that should not
    // fail): what was measured until then, and the error.
    std::optional<std::string> internal_error;
};

}  // namespace max_rss
