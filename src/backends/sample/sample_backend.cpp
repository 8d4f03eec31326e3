// The sample backend: no ptrace. The tree is found in /proc at every tick,
// each live process's VmHWM is read (it holds every peak reached so far,
// however short), wait4 reports the processes max_rss may wait for (its child
// and, as a child subreaper, the orphans). An exec is seen at the next tick,
// by the image's layout in /proc/PID/stat. What it cannot see: processes that
// live less than a tick, the last moments of a process that has children, the
// images an exec replaced within a tick. Used when ptrace is refused
// (degraded) or chosen with --backend sample.
#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/engine/policy.hpp>
#include <max_rss/util/log.hpp>
#include <max_rss/os/launch.hpp>
#include <max_rss/os/process_signal.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/report/words.hpp>

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace max_rss {
namespace {

// The pids listed in /proc/<pid>/task/<tid>/children for every thread of pid.
std::vector<pid_t> proc_children(pid_t pid) {
    std::vector<pid_t> out;
    const auto tids = procfs::read_task_ids(pid);
    if (!tids) return out;
    for (const pid_t tid : *tids) {
        const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/children";
        auto text = procfs::read_file(path.c_str());
        if (!text) continue;
        const char* p = text->c_str();
        char* end = nullptr;
        for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
            out.push_back(static_cast<pid_t>(v));
            p = end;
        }
    }
    return out;
}

class SampleBackend final : public Backend {
public:
    explicit SampleBackend(std::optional<os::Launched> launched) : launched_(launched) {}
    void run(RunContext& context) override;

private:
    void poll();
    // What one read of a live process's /proc/PID/stat says of it.
    enum class Look { Same, Gone, Execed };
    // Gone (its pid is nobody's or another process's now) or Same, with the
    // layout read (not known where the line could not be read).
    Look check(pid_t pid, procfs::ImageLayout& layout) const;
    // check(), and whether it exec'd since the last look.
    Look look(pid_t pid);
    bool ru_maxrss_is_its_own(pid_t pid, OptionalBytes ru_maxrss) const;
    bool is_the_programs(pid_t pid, uint64_t ru_maxrss_bytes) const;
    // Each live process's start time, read when it was found: a pid whose
    // start time is another's now was reaped by its parent and reused.
    void found(pid_t child, pid_t parent);
    void root_found();
    [[nodiscard]] bool still_there(pid_t pid) const;
    void signal(pid_t pid, int sig) const;

    RunContext* context_ = nullptr;
    std::optional<os::Launched> launched_;  // set when ptrace was refused after the fork
    pid_t root_pid_ = 0;
    uint64_t root_pre_exec_max_rss_bytes_ = 0;  // the copy of max_rss the root was until its exec
    std::optional<uint64_t> root_start_ticks_;
    std::unordered_set<pid_t> parents_;  // processes seen with children of their own
    struct Known {
        // nullopt: its /proc/PID/stat could not be read (hidepid, no free
        // descriptor), so it is known by its pid alone; and the root's, whose
        // pid stays its own until max_rss reaps it.
        std::optional<uint64_t> start_ticks;
        procfs::ImageLayout layout;  // when last read: another one means an exec
        bool execed = false;         // an exec was seen: its ru_maxrss may be an earlier image's
    };
    std::unordered_map<pid_t, Known> known_;
};

bool gone_error(int err) { return err == ENOENT || err == ESRCH; }

// child was listed as parent's: taken into the tree if it is still
// parent's child (its pid not reaped and reused, it not reparented since
// the listing; the next sample looks again), with its start time.
void SampleBackend::found(pid_t child, pid_t parent) {
    const auto identity = procfs::read_stat_identity(child);
    if (!identity && gone_error(errno)) return;
    if (identity && identity->ppid != (parent == 0 ? ::getpid() : parent)) return;
    // An orphan that reparented to max_rss is the tree's only if it started
    // after the root (bench runs other programs, whose orphans may come too).
    if (parent == 0 && identity && root_start_ticks_ && identity->start_ticks < *root_start_ticks_) return;
    if (parent != 0) parents_.insert(parent);
    context_->recorder.process_adopted(child, parent, true);
    known_[child] = identity ? Known{identity->start_ticks, identity->layout} : Known{};
}

void SampleBackend::root_found() {
    const auto identity = procfs::read_stat_identity(root_pid_);
    known_[root_pid_] = Known{std::nullopt, identity ? identity->layout : procfs::ImageLayout{}, false};
    if (identity) root_start_ticks_ = identity->start_ticks;
}

SampleBackend::Look SampleBackend::check(pid_t pid, procfs::ImageLayout& layout) const {
    const auto found = known_.find(pid);
    const Known* known = found != known_.end() ? &found->second : nullptr;
    const bool by_start = known && known->start_ticks.has_value();
    const auto identity = procfs::read_stat_identity(pid);
    if (!identity) {
        if (by_start && gone_error(errno)) return Look::Gone;
        return ::kill(pid, 0) == 0 || errno != ESRCH ? Look::Same : Look::Gone;
    }
    if (by_start && identity->start_ticks != *known->start_ticks) return Look::Gone;
    layout = identity->layout;
    return Look::Same;
}

SampleBackend::Look SampleBackend::look(pid_t pid) {
    procfs::ImageLayout layout;
    if (check(pid, layout) == Look::Gone) return Look::Gone;
    if (!layout.known()) return Look::Same;  // a zombie, or not max_rss's to read
    Known& known = known_[pid];
    const bool execed = known.layout.known() && layout != known.layout;
    known.layout = layout;
    known.execed = known.execed || execed;
    return execed ? Look::Execed : Look::Same;
}

// The root is max_rss's child: its pid stays its own until max_rss reaps it.
bool SampleBackend::still_there(pid_t pid) const {
    procfs::ImageLayout unused;
    return check(pid, unused) != Look::Gone;
}

// A live process of the table may have ended since the last sample, and its
// pid gone to an unrelated process: only the process found gets the signal.
void SampleBackend::signal(pid_t pid, int sig) const {
    if (pid == root_pid_) ::kill(pid, sig);
    else os::signal_if(pid, sig, [&] { return still_there(pid); });
}

// wait4's ru_maxrss is a process's own figure if it waited for no children
// (theirs would be in it). The root's also covers the copy of max_rss it was
// before its exec: only a figure above that copy's is the program's.
bool SampleBackend::ru_maxrss_is_its_own(pid_t pid, OptionalBytes ru_maxrss) const {
    if (!ru_maxrss || parents_.count(pid)) return false;
    // After an exec seen by sampling, it may be an earlier image's, whose
    // last moments no sample read: it is not the last image's (it still
    // raises the tree's floor, reaped_max_rss).
    if (const auto known = known_.find(pid); known != known_.end() && known->second.execed) return false;
    return is_the_programs(pid, *ru_maxrss);
}

// Whoever's it is (the process's own or a waited descendant's), a process's
// ru_maxrss is one moment of the tree's memory, but for the root's copy of
// max_rss before its exec.
bool SampleBackend::is_the_programs(pid_t pid, uint64_t ru_maxrss_bytes) const {
    return pid != root_pid_ || policy::rose_after(ru_maxrss_bytes, root_pre_exec_max_rss_bytes_);
}

// Sampling needs a period even when snapshots were turned off (--interval 0).
constexpr int64_t kDefaultPeriodNs = 20'000'000;

void SampleBackend::run(RunContext& context) {
    context_ = &context;
    Recorder& recorder = context.recorder;
    recorder.set_backend(BackendKind::Sample);
    recorder.release_points_unavailable();  // it stops nobody: snapshots are samples
    recorder.processes_sampled();
    if (!launched_) {
        os::LaunchSpec spec;
        spec.argv = context.argv;
        spec.child_mask = context.signals.original_mask();
        spec.before_release = context.before_release;
        launched_ = os::launch(spec);
    } else {
        const Degradation why{launched_->seize_errno};
        recorder.degrade(why);
        // The one line the user sees, even with -q.
        log::warn("cannot trace ({}): measuring by sampling /proc instead; the report is marked degraded",
                  describe_ptrace_refusal(why.seize_errno));
    }
    // Orphans reparent to max_rss, which can then wait for them (wait4's
    // ru_maxrss covers their last moments).
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    root_pid_ = launched_->pid;
    // Without ptrace the exec is not seen: wait for it (the report pipe closes
    // on exec) or for the child's report of why it failed.
    const os::LaunchReport report = os::read_launch_report(launched_->report_fd);
    if (report.exec_errno != 0) {
        ::waitpid(root_pid_, nullptr, 0);
        os::throw_launch_error(context.argv.at(0), report.exec_errno);
    }
    root_pre_exec_max_rss_bytes_ = report.pre_exec_max_rss_bytes;
    recorder.root_started(root_pid_, true);
    root_found();
    Forwarder forwarder(recorder);
    forwarder.set_root(root_pid_);
    forwarder.set_sender([this](pid_t pid, int sig) { signal(pid, sig); });
    const int64_t period_ns = context.sample_interval_ns > 0 ? context.sample_interval_ns : kDefaultPeriodNs;
    if (context.sample_interval_ns <= 0) context.signals.set_tick_ns(period_ns);
    int64_t next_poll_ns = 0;
    bool killing = false;
    for (;;) {
        if (recorder.now_ns() >= next_poll_ns) {
            poll();
            next_poll_ns = recorder.now_ns() + period_ns;
        }
        context.signals.take_tick();
        forwarder.handle(context.signals.take_received(), [this](const os::ReceivedSignal& sig) { return signal_pending(root_pid_, sig.signo); });
        if (auto deadline = forwarder.deadline_ns(); deadline && !killing && recorder.now_ns() >= *deadline) {
            recorder.warn(Warning{Warning::Kind::SurvivorsKilled, 0, recorder.table().live_count(), 0, 0, {}});
            for (const auto& [pid, live] : recorder.table().live_processes()) signal(pid, SIGKILL);
            killing = true;
        }
        const os::WaitResult w = context.signals.wait_any(false);
        if (w.kind == os::WaitResult::Kind::NoChildren) break;
        if (w.kind == os::WaitResult::Kind::Interrupted || !w.status.is_terminal()) continue;
        // Sampling misses a process's last moments; wait4's figure covers them.
        const OptionalBytes ru_maxrss = ru_maxrss_bytes(w.usage);
        recorder.task_reaped(w.pid, w.status.exit_status(), ru_maxrss, ru_maxrss_is_its_own(w.pid, ru_maxrss));
        // Only a process found as the tree's: one never found may be
        // another program's orphan.
        if (ru_maxrss && known_.count(w.pid) && is_the_programs(w.pid, *ru_maxrss)) recorder.reaped_max_rss(*ru_maxrss);
        known_.erase(w.pid);
    }
    // bench runs other programs in this process: their orphans are not ours.
    ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

void SampleBackend::poll() {
    Recorder& recorder = context_->recorder;
    ProcessTable& table = recorder.table();
    // A process that is no longer there was reaped by its own parent: it
    // ended (status unknown). Its pid may be another's now, whose children
    // are not the tree's: this comes before they are looked for.
    // One that exec'd since runs a new image from now on (what it ran in
    // between is missed).
    std::vector<pid_t> gone, execed;
    for (const auto& [pid, live] : table.live_processes()) {
        const Look seen = look(pid);
        if (seen == Look::Gone) gone.push_back(pid);
        else if (seen == Look::Execed) execed.push_back(pid);
    }
    for (pid_t pid : gone) {
        recorder.task_reaped(pid, ExitStatus{}, std::nullopt);
        known_.erase(pid);
    }
    for (pid_t pid : execed) recorder.exec_done(pid, 0);
    // Discover: the children of every live process, and our own (orphans
    // reparent to us, the subreaper).
    std::vector<pid_t> parents{::getpid()};
    for (const auto& [pid, live] : table.live_processes()) parents.push_back(pid);
    for (pid_t parent : parents) {
        for (pid_t child : proc_children(parent)) {
            if (!table.live(child)) found(child, parent == ::getpid() ? 0 : parent);
        }
    }
    // VmHWM is monotonic: reading it while a process lives catches every peak
    // it reached before this moment, however short.
    for (const auto& [pid, live] : table.live_processes()) recorder.seen_alive(pid);
    recorder.tick();
}

}  // namespace

std::unique_ptr<Backend> make_sample_backend_following(const os::Launched& launched) {
    return std::make_unique<SampleBackend>(launched);
}

std::unique_ptr<Backend> make_sample_backend() { return std::make_unique<SampleBackend>(std::nullopt); }

}  // namespace max_rss
