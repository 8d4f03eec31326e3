// The event loop: init(); while (dispatch(next_event())); finish();
//
// One place waits (wait4 on every task, blocking), one place resumes (resume()).
// Every task is stopped by the kernel at the moments that matter for memory:
//   - execve entry (our seccomp filter): the old image's VmHWM is read;
//   - PTRACE_EVENT_EXIT, before exit_mm: the image's VmHWM and a breakdown;
//   - a new task's first stop: a forked child's inherited resident size.
// Nothing polls and nothing sleeps.
#include <max_rss/cgroup.hpp>
#include <max_rss/launch.hpp>
#include <max_rss/procfs.hpp>
#include <max_rss/sampler.hpp>
#include <max_rss/tracer.hpp>
#include <max_rss/wait_status.hpp>

#include <dirent.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <max_rss/log.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <ctime>
#include <unordered_map>
#include <unordered_set>

namespace max_rss {
namespace {

constexpr unsigned long kPtraceOptions =
    PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP;

int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// --- Signal forwarding -------------------------------------------------------
// The handler forwards straight to the root (kill is async-signal-safe). Signals
// the terminal generated (si_code > 0) already reached the whole foreground
// process group, the program included, so they are not sent twice.
std::atomic<pid_t> g_forward_pid{0};
std::atomic<int> g_pending_signal{0};
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void forward_handler(int sig, siginfo_t* info, void*) {
    if (info && info->si_code > 0) return;  // from the kernel/terminal
    pid_t target = g_forward_pid.load();
    if (target > 0) {
        ::kill(target, sig);
    } else {
        g_pending_signal.store(sig);  // root gone: the loop forwards to the survivors
    }
}

class SignalForwarding {
public:
    explicit SignalForwarding(bool enabled) : enabled_(enabled) {
        if (!enabled_) return;
        struct sigaction sa {};
        sa.sa_sigaction = forward_handler;
        sa.sa_flags = SA_SIGINFO;  // no SA_RESTART: wait4 returns EINTR
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
            ::sigaction(kForwardedSignals[i], &sa, &saved_[i]);
    }
    ~SignalForwarding() {
        g_forward_pid.store(0);
        if (!enabled_) return;
        for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
            ::sigaction(kForwardedSignals[i], &saved_[i], nullptr);
    }
    SignalForwarding(const SignalForwarding&) = delete;
    SignalForwarding& operator=(const SignalForwarding&) = delete;

private:
    bool enabled_;
    struct sigaction saved_[std::size(kForwardedSignals)] {};
};

// --- Clone flags ---------------------------------------------------------------
// Which kind of child a fork/clone event made. The ptrace event alone does not
// say: clone(CLONE_VM|SIGCHLD) is reported as a fork.
struct CloneKind {
    bool thread = false;     // CLONE_THREAD: a task of the same process
    bool shares_mm = false;  // CLONE_VM without CLONE_THREAD: vfork, posix_spawn, clone_vm
    bool known = true;
};

CloneKind decode_clone(pid_t parent, StopKind event, pid_t child) {
    if (event == StopKind::Vfork) return {false, true, true};
#if defined(__x86_64__)
    user_regs_struct regs{};
    if (::ptrace(PTRACE_GETREGS, parent, nullptr, &regs) == 0) {
        uint64_t flags = 0;
        switch (regs.orig_rax) {
            case SYS_fork: return {false, false, true};
            case SYS_vfork: return {false, true, true};
            case SYS_clone: flags = regs.rdi; break;
            case SYS_clone3: {
                // struct clone_args starts with the u64 flags.
                iovec local{&flags, sizeof flags};
                iovec remote{reinterpret_cast<void*>(regs.rdi), sizeof flags};
                if (::process_vm_readv(parent, &local, 1, &remote, 1, 0) != sizeof flags) flags = 0;
                break;
            }
            default: flags = 0;
        }
        return {(flags & CLONE_THREAD) != 0, (flags & CLONE_VM) != 0 && !(flags & CLONE_THREAD), true};
    }
#endif
    // Portable fallback: /proc says whether it is a thread, kcmp whether the mm is shared.
    CloneKind k;
    auto st = procfs::read_status(child);
    auto pst = procfs::read_status(parent);
    if (st && pst && st->tgid && pst->tgid) k.thread = *st->tgid == *pst->tgid;
    else k.known = false;
    if (!k.thread) {
        constexpr int kKcmpVm = 1;
        long same = ::syscall(SYS_kcmp, parent, child, kKcmpVm, 0, 0);
        k.shares_mm = same == 0;
    }
    return k;
}

// --- Tracer state --------------------------------------------------------------------

// A task (thread) the tracer follows.
// One per live task, in a hash map: 8 bytes (a 10,000-process-wide tree
// keeps 10,000 of them).
struct Task {
    uint32_t process = 0;        // index into result_.processes
    bool awaiting_first_stop = true;
    bool exiting = false;        // has passed its PTRACE_EVENT_EXIT stop
};

// Tracer-side bookkeeping of a process, beside the model's Process. One per
// process for the whole run: 12 bytes, in a deque (no copy-and-double spike).
struct ProcessTrack {
    static constexpr uint32_t kNoParent = UINT32_MAX;
    uint32_t parent = kNoParent;  // index of the creating process
    uint32_t live_tasks = 0;      // tasks seen, not yet at their exit stop
    bool exec_seen = false;
};

// One Program per distinct (exe, argv): a shell loop that runs the same
// command 10,000 times keeps one copy of it, not 10,000.
class ProgramInterner {
public:
    std::shared_ptr<const Program> intern(Program program) {
        auto candidate = std::make_shared<const Program>(std::move(program));
        return *programs_.insert(std::move(candidate)).first;
    }

private:
    struct Hash {
        size_t operator()(const std::shared_ptr<const Program>& p) const noexcept {
            size_t h = std::hash<std::string>{}(p->exe);
            for (const auto& arg : p->argv) h = h * 1000003u ^ std::hash<std::string>{}(arg);
            return h;
        }
    };
    struct Equal {
        bool operator()(const std::shared_ptr<const Program>& a, const std::shared_ptr<const Program>& b) const {
            return a->exe == b->exe && a->argv == b->argv;
        }
    };
    std::unordered_set<std::shared_ptr<const Program>, Hash, Equal> programs_;
};

class Tracer {
public:
    explicit Tracer(const TraceOptions& options) : options_(options) {}

    RunResult run();

private:
    void dispatch(pid_t tid, WaitStatus ws, const rusage& ru);
    void on_new_task_event(pid_t parent_tid, StopKind event);
    void on_first_stop(pid_t tid, Task& task);
    void on_exec(pid_t tid);
    void on_exec_entry(pid_t tid, Task& task);
    void on_exit_stop(pid_t tid, Task& task);
    void on_reaped(pid_t tid, WaitStatus ws, const rusage& ru);
    void adopt_held_tasks(pid_t exiting_tgid);
    void forward_pending_signal();
    // The next stop or death of any task (blocking), with wait4's semantics.
    pid_t next_event(int& status, rusage& ru);

    size_t new_process(pid_t pid, pid_t ppid, ImageOrigin origin,
                       std::shared_ptr<const Program> program, std::optional<pid_t> shares_mm_with);
    void add_task(pid_t tid, size_t process_index);
    // Reads VmHWM (and, on the final exit, the breakdown) of a stopped task into
    // its process's current image.
    void measure_image(pid_t tid, size_t process_index, bool final_exit);
    void resume(pid_t tid, int sig = 0);
    void listen(pid_t tid);
    int64_t now() const { return monotonic_ns() - start_ns_; }
    void kill_everything();
    // End times, orphans, the timeline and the tree peak, once the tree is gone.
    void finish();
    [[noreturn]] void throw_launch_error(int exec_errno) const;
    // ptrace refused: run the program anyway, measured by sampling /proc and wait4.
    RunResult run_untraced(int seize_errno);
    void poll_untraced_tree();

    const TraceOptions& options_;
    RunResult result_;
    std::deque<ProcessTrack> track_;
    std::unordered_map<pid_t, Task> tasks_;
    std::unordered_map<pid_t, uint32_t> live_process_by_pid_;
    // Tasks whose first stop came before their creator's fork/clone event:
    // held stopped until the event says what they are.
    std::unordered_set<pid_t> held_;
    pid_t root_pid_ = 0;
    int report_fd_ = -1;
    int64_t start_ns_ = 0;
    uint32_t next_serial_ = 1;
    std::unique_ptr<Sampler> sampler_;
    ProgramInterner programs_;
    std::unordered_set<pid_t> untraced_parents_;  // degraded mode: processes seen with children
};

size_t Tracer::new_process(pid_t pid, pid_t ppid, ImageOrigin origin,
                           std::shared_ptr<const Program> program,
                           std::optional<pid_t> shares_mm_with) {
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    p.serial = next_serial_++;
    p.threads = 0;
    p.start_ns = now();
    p.shares_mm_with = shares_mm_with;
    if (program) {
        Image img;
        img.program = std::move(program);
        img.origin = origin;
        img.start_ns = p.start_ns;
        p.images.push_back(std::move(img));
    }
    result_.processes.push_back(std::move(p));
    track_.emplace_back();
    if (auto it = live_process_by_pid_.find(ppid); ppid != 0 && it != live_process_by_pid_.end())
        track_.back().parent = static_cast<uint32_t>(it->second);
    size_t index = result_.processes.size() - 1;
    live_process_by_pid_[pid] = static_cast<uint32_t>(index);
    // Counted as owning nothing until it is known what it owns: the root
    // before its first exec is max_rss's own fork, and a forked child's
    // inherited pages are only known at its first stop (on_first_stop).
    const bool owns_nothing_yet = result_.processes[index].images.empty() || origin == ImageOrigin::Fork;
    const ImageOrigin sampled_as = owns_nothing_yet ? ImageOrigin::SharedMm : origin;
    sampler_->add(pid, SampledProcess{static_cast<uint32_t>(index), sampled_as, {}});
    return index;
}

void Tracer::add_task(pid_t tid, size_t process_index) {
    tasks_[tid] = Task{static_cast<uint32_t>(process_index), true, false};
    track_[process_index].live_tasks++;
    result_.processes[process_index].threads++;
}

void Tracer::resume(pid_t tid, int sig) {
    if (::ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig))) != 0) {
        // ESRCH: the task vanished (SIGKILL); its death is reported by wait4.
        if (errno != ESRCH) log::debug("PTRACE_CONT {}: {}", tid, std::strerror(errno));
    }
}

void Tracer::listen(pid_t tid) {
    if (::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr) != 0 && errno != ESRCH) {
        log::debug("PTRACE_LISTEN {}: {}", tid, std::strerror(errno));
        resume(tid);
    }
}

void Tracer::measure_image(pid_t tid, size_t process_index, bool final_exit) {
    Process& proc = result_.processes[process_index];
    if (proc.images.empty()) return;  // the root before its first exec: max_rss's own copy
    Image& img = proc.images.back();
    if (img.origin == ImageOrigin::SharedMm) {
        // Its memory is the mm's owner's, measured at the owner's stops.
        img.measured = true;
        return;
    }
    auto status = procfs::read_status(tid);
    if (!status || !status->hwm_bytes) {
        log::debug("pid {}: no VmHWM at stop (task gone?)", tid);
        return;
    }
    img.hwm_bytes = std::max(img.hwm_bytes.value_or(0), *status->hwm_bytes);
    // VmHWM never falls unless the program reset it (echo 5 > /proc/self/clear_refs):
    // then a snapshot that saw more is the better figure, and the user is told.
    const uint64_t sampled_max = tid == proc.pid ? sampler_->max_resident_bytes(tid) : 0;
    constexpr uint64_t kHwmSlackBytes = 1 << 20;  // VmHWM may read a few hundred KiB low
    if (sampled_max > *img.hwm_bytes + kHwmSlackBytes) {
        result_.warnings.push_back("pid " + std::to_string(proc.pid) + ": VmHWM " +
                                   std::to_string(*img.hwm_bytes >> 10) + " KiB is below a sampled RSS of " +
                                   std::to_string(sampled_max >> 10) +
                                   " KiB: the program reset it (clear_refs); its peak is the sampled figure, "
                                   "which may itself be low");
        img.hwm_bytes = sampled_max;
    }
    std::optional<procfs::SmapsRollup> smaps;
    // smaps_rollup walks the page tables: read it only for the final
    // breakdown, never at execve entry (every fork+exec of a shell passes
    // there). At a forked child's exit it is also what sees copy-on-write
    // copies of inherited pages (Private_Dirty grows, RSS does not). Private
    // pages are resident pages, so below 1 MiB resident what it could add is
    // under 1 MiB: skipped there (fork_loop 2000: 1.76x -> ~1.6x traced).
    // An exec'd image's peak is its VmHWM: there smaps_rollup only adds the
    // report's PSS/private split, read for images of 4 MiB or more (a shell
    // loop's thousands of small commands skip it: exec-heavy runs faster, and
    // the record of each is 96 bytes smaller).
    constexpr uint64_t kForkBreakdownWorthyBytes = 1 << 20;
    constexpr uint64_t kExecBreakdownWorthyBytes = 4 << 20;
    const uint64_t breakdown_worthy =
        img.origin == ImageOrigin::Fork ? kForkBreakdownWorthyBytes : kExecBreakdownWorthyBytes;
    if (final_exit && status->rss_bytes.value_or(breakdown_worthy) >= breakdown_worthy)
        smaps = procfs::read_smaps_rollup(tid);
    uint64_t peak = *img.hwm_bytes;
    const uint64_t inherited = img.inherited_rss_bytes.value_or(0);
    if (img.origin == ImageOrigin::Fork) {
        // A forked child's VmHWM starts at its parent's resident size. Its own
        // memory: what it added to that, or (at its exit) what is private to it.
        uint64_t grown = peak > inherited ? peak - inherited : 0;
        uint64_t private_now = 0;
        if (smaps && smaps->private_clean_bytes && smaps->private_dirty_bytes)
            private_now = *smaps->private_clean_bytes + *smaps->private_dirty_bytes;
        peak = std::max(grown, private_now);
    }
    img.peak_rss_bytes = std::max(img.peak_rss_bytes, peak);
    img.measured = true;
    proc.peak_rss_bytes = std::max(proc.peak_rss_bytes, img.peak_rss_bytes);
    if (final_exit) proc.at_exit = procfs::make_breakdown(status, smaps);
}

void Tracer::on_new_task_event(pid_t parent_tid, StopKind event) {
    unsigned long msg = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, parent_tid, nullptr, &msg) != 0) {
        resume(parent_tid);
        return;
    }
    const auto child = static_cast<pid_t>(msg);
    auto pit = tasks_.find(parent_tid);
    if (pit == tasks_.end()) {
        resume(parent_tid);
        return;
    }
    const size_t parent_index = pit->second.process;
    CloneKind kind = decode_clone(parent_tid, event, child);
    resume(parent_tid);
    if (tasks_.count(child)) return;  // already adopted (held, then resolved)

    if (kind.thread) {
        add_task(child, parent_index);
    } else {
        const Process& parent = result_.processes[parent_index];
        auto program = parent.images.empty() ? nullptr : parent.images.back().program;
        const ImageOrigin origin = kind.shares_mm ? ImageOrigin::SharedMm : ImageOrigin::Fork;
        std::optional<pid_t> shares;
        if (kind.shares_mm) shares = parent.shares_mm_with.value_or(parent.pid);
        size_t index = new_process(child, parent.pid, origin, std::move(program), shares);
        add_task(child, index);
    }
    if (held_.erase(child)) on_first_stop(child, tasks_[child]);
}

void Tracer::on_first_stop(pid_t tid, Task& task) {
    task.awaiting_first_stop = false;
    Process& proc = result_.processes[task.process];
    if (tid == proc.pid && !proc.images.empty() && proc.images.back().origin == ImageOrigin::Fork) {
        // Before the child runs a single instruction, its resident size is all
        // inherited (copied page tables).
        const StatmSample inherited = procfs::read_statm(tid).value_or(StatmSample{});
        proc.images.back().inherited_rss_bytes = inherited.resident_bytes;
        sampler_->set_origin(tid, ImageOrigin::Fork, inherited);
    }
    resume(tid);
}

void Tracer::on_exec_entry(pid_t tid, Task& task) {
    // The old image is intact until the syscall runs: read its peak now. A
    // failing execve (PATH search) just reads it again later.
    measure_image(tid, task.process, false);
    resume(tid);
}

void Tracer::on_exec(pid_t tid) {
    unsigned long former = 0;
    ::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former);
    const auto former_tid = static_cast<pid_t>(former);
    auto it = tasks_.find(former_tid != 0 ? former_tid : tid);
    if (it == tasks_.end()) it = tasks_.find(tid);
    if (it == tasks_.end()) {
        resume(tid);
        return;
    }
    const size_t index = it->second.process;
    if (former_tid != 0 && former_tid != tid) {
        // A non-leader thread exec'd: it took over the leader's tid. The old
        // leader already reported its exit stop and will never be reaped; the
        // live count is right as it is (the leader left it, the exec'ing
        // thread is still in it).
        tasks_.erase(former_tid);
        tasks_[tid] = Task{static_cast<uint32_t>(index), false, false};
    }
    Process& proc = result_.processes[index];
    ProcessTrack& tr = track_[index];
    const int64_t t = now();
    if (!proc.images.empty()) proc.images.back().end_ns = t;
    if (tid == root_pid_ && !tr.exec_seen && report_fd_ >= 0) {
        auto report = read_launch_report(report_fd_);
        ::close(report_fd_);
        report_fd_ = -1;
        if (report.seccomp_errno != 0) {
            result_.warnings.push_back(std::string("could not stop at execve entry (seccomp: ") +
                                       std::strerror(report.seccomp_errno) +
                                       "): images replaced by exec are not measured");
        }
    }
    tr.exec_seen = true;
    proc.shares_mm_with.reset();  // exec gives the process its own mm
    Image img;
    img.program = programs_.intern(Program{procfs::read_cmdline(tid), procfs::read_exe(tid)});
    img.origin = ImageOrigin::Exec;
    img.start_ns = t;
    proc.images.push_back(std::move(img));
    sampler_->set_origin(tid, ImageOrigin::Exec);
    resume(tid);
}

void Tracer::on_exit_stop(pid_t tid, Task& task) {
    if (!task.exiting) {
        task.exiting = true;
        ProcessTrack& tr = track_[task.process];
        if (tr.live_tasks > 0) tr.live_tasks--;
        // All threads share the mm, and VmHWM is the mm's: the last task to
        // stop reads it (and the breakdown) once, for everyone.
        if (tr.live_tasks == 0) {
            measure_image(tid, task.process, true);
            // The moment a process ends, its memory and everyone else's are
            // all still in place: the snapshot that catches short overlaps.
            // Skipped for a process that holds less than 1 MiB of its own
            // (it cannot add much; others are caught at their own exits and
            // by the timer), which keeps fork- and exec-heavy loads cheap.
            // "Its own": a fork image's peak is already only what it added;
            // an exec'd image's VmHWM counts the libraries it maps (every
            // /bin/true passes 1 MiB), so its anonymous and shmem pages at
            // exit decide. The sampler limits its own cost in wide trees.
            const Process& proc = result_.processes[task.process];
            constexpr uint64_t kSnapshotWorthyBytes = 1 << 20;
            uint64_t own_bytes = proc.images.empty() ? 0 : proc.images.back().peak_rss_bytes;
            if (!proc.images.empty() && proc.images.back().origin == ImageOrigin::Exec && proc.at_exit.rss_anon_bytes)
                own_bytes = *proc.at_exit.rss_anon_bytes + proc.at_exit.rss_shmem_bytes.value_or(0);
            if (own_bytes >= kSnapshotWorthyBytes) {
                // A forked child's private pages at exit (smaps) include the
                // copy-on-write copies it made, which statm cannot see.
                std::optional<std::pair<pid_t, uint64_t>> floor;
                const auto& smaps = proc.at_exit.smaps;
                if (proc.images.back().origin == ImageOrigin::Fork && smaps && smaps->private_bytes)
                    floor.emplace(proc.pid, *smaps->private_bytes);
                sampler_->snapshot(0, floor);
            }
        }
    }
    // A held child whose creating process is ending will not get its fork
    // event if the creator was SIGKILLed in the middle of fork.
    if (!held_.empty() && track_[task.process].live_tasks == 0) adopt_held_tasks(result_.processes[task.process].pid);
    resume(tid);
}

// A task held at its first stop whose creator is exiting will never see its
// creator's fork event (a SIGKILLed parent skips it): identify it from /proc.
void Tracer::adopt_held_tasks(pid_t exiting_tgid) {
    std::vector<pid_t> held(held_.begin(), held_.end());
    for (pid_t tid : held) {
        auto st = procfs::read_status(tid);
        if (!st || !st->tgid) continue;
        if (*st->tgid != tid) {
            auto pit = live_process_by_pid_.find(*st->tgid);
            if (pit == live_process_by_pid_.end()) continue;
            add_task(tid, pit->second);
        } else {
            if (!st->ppid || *st->ppid != exiting_tgid) continue;
            auto pit = live_process_by_pid_.find(exiting_tgid);
            std::shared_ptr<const Program> program;
            if (pit != live_process_by_pid_.end() && !result_.processes[pit->second].images.empty())
                program = result_.processes[pit->second].images.back().program;
            size_t index = new_process(tid, exiting_tgid, ImageOrigin::Fork, std::move(program), std::nullopt);
            add_task(tid, index);
        }
        held_.erase(tid);
        on_first_stop(tid, tasks_[tid]);
    }
}

void Tracer::on_reaped(pid_t tid, WaitStatus ws, const rusage& ru) {
    held_.erase(tid);
    auto it = tasks_.find(tid);
    if (it == tasks_.end()) return;
    const size_t index = it->second.process;
    const bool was_exiting = it->second.exiting;
    tasks_.erase(it);
    Process& proc = result_.processes[index];
    ProcessTrack& tr = track_[index];
    if (!was_exiting && tr.live_tasks > 0) tr.live_tasks--;  // died without an exit stop
    if (tid != proc.pid) return;  // a thread; the leader is reported last

    // The leader is reaped only once its whole thread group is gone.
    proc.end_ns = now();
    if (!proc.images.empty() && proc.images.back().end_ns == 0) proc.images.back().end_ns = proc.end_ns;
    if (ws.kind() == StopKind::Exited) proc.exit.code = ws.code();
    else {
        proc.exit.signal = ws.signal();
        proc.exit.core_dumped = ws.core_dumped();
    }
    proc.ru_maxrss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
    live_process_by_pid_.erase(proc.pid);
    sampler_->remove(proc.pid);
    if (tid == root_pid_) {
        g_forward_pid.store(0);
        result_.exit = proc.exit;
        result_.ru_maxrss_bytes = proc.ru_maxrss_bytes;
        if (!tr.exec_seen && report_fd_ >= 0) {
            auto report = read_launch_report(report_fd_);
            ::close(report_fd_);
            report_fd_ = -1;
            if (report.exec_errno != 0) throw_launch_error(report.exec_errno);
        }
    }
}

void Tracer::dispatch(pid_t tid, WaitStatus ws, const rusage& ru) {
    const StopKind kind = ws.kind();
    if (log::enabled(log::Level::trace)) log::trace("{}: {}", tid, ws.describe());
    if (ws.is_terminal()) {
        on_reaped(tid, ws, ru);
        return;
    }
    auto it = tasks_.find(tid);
    if (it == tasks_.end()) {
        if (kind == StopKind::EventStop || kind == StopKind::GroupStop) {
            held_.insert(tid);  // first stop before the creator's event: hold it
        } else {
            resume(tid, kind == StopKind::SignalDelivery ? ws.signal() : 0);
        }
        return;
    }
    Task& task = it->second;
    switch (kind) {
        case StopKind::EventStop:
            if (task.awaiting_first_stop) on_first_stop(tid, task);
            else resume(tid);  // end of a LISTEN, or a stray INTERRUPT
            return;
        case StopKind::GroupStop:
            if (task.awaiting_first_stop) task.awaiting_first_stop = false;
            listen(tid);  // stays stopped, as it would untraced, until SIGCONT
            return;
        case StopKind::SignalDelivery:
            resume(tid, ws.signal());  // re-inject exactly once
            return;
        case StopKind::Fork:
        case StopKind::Vfork:
        case StopKind::Clone:
            on_new_task_event(tid, kind);
            return;
        case StopKind::Seccomp:
            on_exec_entry(tid, task);
            return;
        case StopKind::Exec:
            on_exec(tid);
            return;
        case StopKind::Exit:
            on_exit_stop(tid, task);
            return;
        case StopKind::VforkDone:
        case StopKind::SyscallStop:
        case StopKind::Unknown:
        default:
            resume(tid);
            return;
    }
}

pid_t Tracer::next_event(int& status, rusage& ru) {
    // wait4 with a rusage pointer makes the kernel sum CPU time over every
    // thread of the stopped task's process at every stop: quadratic in the
    // threads (10,000 threads: 8.9 s). rusage only matters when a process is
    // reaped, so with many threads about, peek first and ask for it only then.
    constexpr size_t kManyThreads = 16;
    if (tasks_.size() <= live_process_by_pid_.size() + kManyThreads) return ::wait4(-1, &status, __WALL, &ru);
    siginfo_t si{};
    if (::waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT) != 0) return -1;
    const bool reaping = si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED;
    return ::wait4(si.si_pid, &status, __WALL, reaping ? &ru : nullptr);
}

void Tracer::forward_pending_signal() {
    int sig = g_pending_signal.exchange(0);
    if (sig == 0) return;
    // The root has gone; the survivors (daemons, orphans) get the signal.
    for (const auto& [pid, index] : live_process_by_pid_) ::kill(pid, sig);
}

void Tracer::kill_everything() {
    for (const auto& [tid, task] : tasks_) ::kill(tid, SIGKILL);
    for (pid_t tid : held_) ::kill(tid, SIGKILL);
    // Drain: every tracee reports its death to us (we trace them all).
    int status = 0;
    while (::waitpid(-1, &status, __WALL) > 0 || errno == EINTR) {
    }
}

RunResult Tracer::run() {
    if (options_.argv.empty()) throw TracerError("no command given");
    result_.command = options_.argv;
    // Orphaned descendants reparent to us and stay traced, so daemons are measured.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    SignalForwarding forwarding(options_.forward_signals);
    start_ns_ = monotonic_ns();
    sampler_ = std::make_unique<Sampler>(options_.sample_interval_ns, start_ns_);
    std::string cgroup_why_not;
    std::optional<MemoryCgroup> cgroup =
        options_.use_cgroup ? MemoryCgroup::create(cgroup_why_not) : std::nullopt;
    if (options_.use_cgroup && !cgroup)
        result_.warnings.push_back("--cgroup: " + cgroup_why_not + "; no cgroup peak");
    auto join_cgroup = [&](pid_t pid) {
        std::string why_not;
        if (cgroup && !cgroup->add(pid, why_not)) {
            result_.warnings.push_back("--cgroup: " + why_not + "; no cgroup peak");
            cgroup.reset();
        }
    };
    Launched launched = launch(options_.argv, kPtraceOptions, join_cgroup);
    root_pid_ = launched.pid;
    report_fd_ = launched.report_fd;
    g_forward_pid.store(root_pid_);
    if (!launched.traced) {
        RunResult r = run_untraced(launched.seize_errno);
        if (cgroup) r.peak.cgroup_bytes = cgroup->peak_bytes();
        return r;
    }
    // The root's image before its first exec is max_rss's own fork: not created.
    size_t root_index = new_process(root_pid_, 0, ImageOrigin::Exec, nullptr, std::nullopt);
    add_task(root_pid_, root_index);
    tasks_[root_pid_].awaiting_first_stop = false;  // SEIZE: no initial stop
    sampler_->start();

    try {
        for (;;) {
            int status = 0;
            rusage ru{};
            if (Sampler::due()) sampler_->snapshot();
            pid_t tid = next_event(status, ru);
            if (tid < 0) {
                if (errno == EINTR) {
                    forward_pending_signal();
                    continue;
                }
                if (errno == ECHILD) break;
                throw TracerError(std::string("wait4: ") + std::strerror(errno));
            }
            dispatch(tid, WaitStatus(status), ru);
        }
    } catch (...) {
        sampler_->stop();
        kill_everything();
        if (report_fd_ >= 0) ::close(report_fd_);
        throw;
    }
    if (report_fd_ >= 0) ::close(report_fd_);
    finish();
    if (cgroup) result_.peak.cgroup_bytes = cgroup->peak_bytes();
    return std::move(result_);
}

void Tracer::finish() {
    sampler_->stop();
    const int64_t end = now();
    result_.wall_seconds = static_cast<double>(end) / 1e9;
    for (size_t i = 0; i < result_.processes.size(); ++i) {
        Process& p = result_.processes[i];
        if (p.end_ns == 0) p.end_ns = end;
        if (const uint32_t parent = track_[i].parent; parent != ProcessTrack::kNoParent)
            p.orphaned = result_.processes[parent].end_ns < p.end_ns;
        for (auto& img : p.images)
            if (img.end_ns == 0) img.end_ns = p.end_ns;
        if (!p.images.empty() && std::none_of(p.images.begin(), p.images.end(),
                                              [](const Image& image) { return image.measured; }))
            result_.warnings.push_back("pid " + std::to_string(p.pid) + ": no stop could be measured");
    }
    std::optional<uint64_t> sampled;
    result_.timeline = sampler_->take_timeline();
    if (!result_.timeline.points.empty()) sampled = sampler_->peak_bytes();
    result_.peak = compute_tree_peak(result_.processes, sampled);
}

void Tracer::throw_launch_error(int exec_errno) const {
    const bool not_found = exec_errno == ENOENT || exec_errno == ENOTDIR;
    throw LaunchError(options_.argv[0] + ": " + (not_found ? "command not found" : std::strerror(exec_errno)),
                      not_found ? 127 : 126);
}

namespace {
std::string why_ptrace_failed(int err) {
    if (err == EPERM)
        return "max_rss is itself being traced (strace, gdb), or Yama ptrace_scope or a container's seccomp "
               "profile forbids ptrace";
    if (err == ENOSYS) return "this kernel or sandbox has no ptrace";
    return std::strerror(err);
}

// The pids listed in /proc/<pid>/task/<tid>/children for every thread of pid.
std::vector<pid_t> proc_children(pid_t pid) {
    std::vector<pid_t> out;
    const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(task_dir.c_str());
    if (!dir) return out;
    while (dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        auto text = procfs::read_file((task_dir + "/" + entry->d_name + "/children").c_str());
        if (!text) continue;
        const char* p = text->c_str();
        char* end = nullptr;
        for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
            out.push_back(static_cast<pid_t>(v));
            p = end;
        }
    }
    ::closedir(dir);
    return out;
}
}  // namespace

void Tracer::poll_untraced_tree() {
    // Discover: the children of every live process, and our own (orphans
    // reparent to us, the subreaper).
    std::vector<pid_t> parents{::getpid()};
    for (const auto& [pid, index] : live_process_by_pid_) parents.push_back(pid);
    for (pid_t parent : parents) {
        for (pid_t child : proc_children(parent)) {
            if (live_process_by_pid_.count(child)) continue;
            auto program = programs_.intern(Program{procfs::read_cmdline(child), procfs::read_exe(child)});
            const pid_t ppid = parent == ::getpid() ? 0 : parent;
            if (ppid != 0) untraced_parents_.insert(ppid);
            size_t index = new_process(child, ppid, ImageOrigin::Exec, std::move(program), std::nullopt);
            result_.processes[index].threads = 1;
        }
    }
    // VmHWM is monotonic: reading it while a process lives catches every peak
    // it reached before this moment, however short.
    for (const auto& [pid, index] : live_process_by_pid_) {
        auto status = procfs::read_status(pid);
        if (!status || !status->hwm_bytes) continue;
        Process& proc = result_.processes[index];
        if (status->threads) proc.threads = std::max(proc.threads, *status->threads);
        Image& img = proc.images.back();
        img.hwm_bytes = std::max(img.hwm_bytes.value_or(0), *status->hwm_bytes);
        img.peak_rss_bytes = *img.hwm_bytes;
        img.measured = true;
        proc.peak_rss_bytes = std::max(proc.peak_rss_bytes, img.peak_rss_bytes);
        proc.at_exit = procfs::make_breakdown(status, std::nullopt);
    }
    sampler_->snapshot();
}

RunResult Tracer::run_untraced(int seize_errno) {
    result_.degraded = true;
    result_.degraded_reason = "PTRACE_SEIZE: " + std::string(std::strerror(seize_errno)) + " (" +
                              why_ptrace_failed(seize_errno) +
                              "); figures come from sampling /proc and wait4: a process's last moments and "
                              "processes shorter than the sampling interval can be missed";
    // The one line the user sees, even with -q.
    log::warn("cannot trace ({}): measuring by sampling /proc instead; the report is marked degraded",
                 why_ptrace_failed(seize_errno));
    // Without ptrace the exec is not seen: wait for it (the report pipe closes
    // on exec) or for the child's report of why it failed.
    auto report = read_launch_report(report_fd_);
    ::close(report_fd_);
    report_fd_ = -1;
    if (report.exec_errno != 0) {
        ::waitpid(root_pid_, nullptr, 0);
        throw_launch_error(report.exec_errno);
    }
    auto program = programs_.intern(Program{options_.argv, procfs::read_exe(root_pid_)});
    size_t root_index = new_process(root_pid_, 0, ImageOrigin::Exec, std::move(program), std::nullopt);
    result_.processes[root_index].threads = 1;
    sampler_ = std::make_unique<Sampler>(options_.sample_interval_ns > 0 ? options_.sample_interval_ns : 20'000'000,
                                         start_ns_);
    sampler_->add(root_pid_, SampledProcess{static_cast<uint32_t>(root_index), ImageOrigin::Exec, {}});
    sampler_->start();
    poll_untraced_tree();
    for (;;) {
        if (Sampler::due()) poll_untraced_tree();
        int status = 0;
        rusage ru{};
        pid_t pid = ::wait4(-1, &status, __WALL, &ru);
        if (pid < 0) {
            if (errno == EINTR) {
                forward_pending_signal();
                continue;
            }
            if (errno == ECHILD) break;
            throw TracerError(std::string("wait4: ") + std::strerror(errno));
        }
        auto it = live_process_by_pid_.find(pid);
        if (it == live_process_by_pid_.end()) continue;
        Process& proc = result_.processes[it->second];
        WaitStatus ws(status);
        if (ws.kind() == StopKind::Exited) proc.exit.code = ws.code();
        else if (ws.kind() == StopKind::Killed) proc.exit.signal = ws.signal();
        else continue;
        proc.end_ns = now();
        proc.images.back().end_ns = proc.end_ns;
        proc.ru_maxrss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
        // Sampling misses a process's last moments; wait4's figure covers
        // them, and is the process's own only if it waited for no children.
        if (!untraced_parents_.count(pid) && *proc.ru_maxrss_bytes > proc.peak_rss_bytes) {
            proc.peak_rss_bytes = *proc.ru_maxrss_bytes;
            proc.images.back().peak_rss_bytes = *proc.ru_maxrss_bytes;
            proc.images.back().measured = true;
        }
        live_process_by_pid_.erase(pid);
        sampler_->remove(pid);
        if (pid == root_pid_) {
            g_forward_pid.store(0);
            result_.exit = proc.exit;
            result_.ru_maxrss_bytes = proc.ru_maxrss_bytes;
        }
    }
    finish();
    result_.peak.method = "degraded-sampling";
    return std::move(result_);
}

}  // namespace

RunResult trace(const TraceOptions& options) {
    Tracer tracer(options);
    return tracer.run();
}

}  // namespace max_rss
