// The ptrace backend: init(); while (dispatch(next_event())); finish();
//
// One place waits (SignalHub::wait_any), handlers return what to do with the
// stopped task, one place does it (apply). The kernel stops every task at the
// moments that matter for memory:
//   - execve entry (our seccomp filter): the old image's VmHWM;
//   - PTRACE_EVENT_EXIT, before exit_mm: the image's VmHWM and a breakdown;
//   - a new task's first stop: a forked child's inherited resident size.
// Nothing polls and nothing sleeps.
#include "clone_kind.hpp"
#include "seccomp_filter.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/log.hpp>
#include <max_rss/os/launch.hpp>

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <unordered_set>
#include <vector>

namespace max_rss {

std::unique_ptr<Backend> make_sample_backend_following(const os::Launched& launched);

namespace ptrace_backend {
namespace {

constexpr unsigned long kPtraceOptions =
    PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP;

// What to do with a stopped task once its stop is handled.
struct Action {
    enum class Kind : uint8_t {
        Resume,  // PTRACE_CONT with signal (0: none)
        Listen,  // a group-stop: stay stopped, as untraced, until SIGCONT
    };
    pid_t tid = 0;
    Kind kind = Kind::Resume;
    int signal = 0;
};

class PtraceBackend final : public Backend {
public:
    void run(RunContext& context) override;

private:
    void loop();
    // Handlers: each says what to do with the task(s) it handled by queueing
    // actions; apply() carries them out. A task not queued stays stopped (held).
    void dispatch(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage);
    void on_new_task_event(pid_t creator_tid, StopKind event);
    void on_first_stop(pid_t tid);
    void on_exec(pid_t tid);
    void on_exit_stop(pid_t tid);
    void on_reaped(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage);
    void adopt_held_tasks(pid_t exiting_tgid);
    void resume(pid_t tid, int sig = 0) { actions_.push_back(Action{tid, Action::Kind::Resume, sig}); }
    void apply();  // the one place that resumes tasks
    void kill_everything();

    RunContext* context_ = nullptr;
    pid_t root_pid_ = 0;
    int report_fd_ = -1;
    bool root_exec_seen_ = false;
    // Tasks whose first stop came before their creator's fork/clone event:
    // held stopped until the event says what they are.
    std::unordered_set<pid_t> held_;
    std::vector<Action> actions_;  // queued by handlers, drained by apply()
};

void PtraceBackend::run(RunContext& context) {
    context_ = &context;
    static const SeccompFilter filter;
    os::LaunchSpec spec;
    spec.argv = context.argv;
    spec.child_mask = context.signals.original_mask();
    spec.ptrace_options = kPtraceOptions;
    spec.seccomp_filter = filter.fprog();
    spec.before_release = context.before_release;
    os::Launched launched = os::launch(spec);
    if (!launched.traced) {
        // ptrace refused: measure what sampling /proc can, and say so.
        make_sample_backend_following(launched)->run(context);
        return;
    }
    root_pid_ = launched.pid;
    report_fd_ = launched.report_fd;
    context.recorder.root_started(root_pid_);
    try {
        loop();
    } catch (...) {
        kill_everything();
        if (report_fd_ >= 0) ::close(report_fd_);
        throw;
    }
    if (report_fd_ >= 0) ::close(report_fd_);
}

void PtraceBackend::loop() {
    Recorder& recorder = context_->recorder;
    os::SignalHub& signals = context_->signals;
    // With many threads about, wait4's rusage is asked for only when reaping.
    constexpr size_t kManyThreads = 16;
    for (;;) {
        if (signals.take_tick()) recorder.tick();
        forward_received(signals.take_received(), recorder, root_pid_);
        const ProcessTable& table = recorder.table();
        const bool many_threads = table.task_count() > table.live_count() + kManyThreads;
        const os::WaitResult w = signals.wait_any(many_threads);
        if (w.kind == os::WaitResult::Kind::NoChildren) return;
        if (w.kind == os::WaitResult::Kind::Interrupted) continue;
        dispatch(w.pid, w.status, w.usage);
        apply();
    }
}

void PtraceBackend::apply() {
    for (const Action& action : actions_) {
        long r = 0;
        if (action.kind == Action::Kind::Listen) {
            r = ::ptrace(PTRACE_LISTEN, action.tid, nullptr, nullptr);
            // LISTEN refused (not a group-stop after all): let it run.
            if (r != 0 && errno != ESRCH) r = ::ptrace(PTRACE_CONT, action.tid, nullptr, nullptr);
        } else {
            r = ::ptrace(PTRACE_CONT, action.tid, nullptr,
                         reinterpret_cast<void*>(static_cast<intptr_t>(action.signal)));
        }
        // ESRCH: the task vanished (SIGKILL); wait4 reports its death.
        if (r != 0 && errno != ESRCH) log::debug("ptrace resume {}: {}", action.tid, std::strerror(errno));
    }
    actions_.clear();
}

void PtraceBackend::dispatch(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage) {
    const StopKind kind = ws.kind();
    if (log::enabled(log::Level::trace)) log::trace("{}: {}", tid, ws.describe());
    if (ws.is_terminal()) {
        on_reaped(tid, ws, usage);
        return;
    }
    TaskEntry* task = context_->recorder.table().task(tid);
    if (!task) {
        if (kind == StopKind::EventStop || kind == StopKind::GroupStop) {
            held_.insert(tid);  // first stop before the creator's event: hold it
        } else {
            resume(tid, kind == StopKind::SignalDelivery ? ws.signal() : 0);
        }
        return;
    }
    switch (kind) {
        case StopKind::EventStop:
            if (task->awaiting_first_stop) on_first_stop(tid);
            else resume(tid);  // end of a LISTEN, or a stray INTERRUPT
            return;
        case StopKind::GroupStop:
            task->awaiting_first_stop = false;
            actions_.push_back(Action{tid, Action::Kind::Listen, 0});
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
            context_->recorder.exec_entry(tid);
            resume(tid);
            return;
        case StopKind::Exec:
            on_exec(tid);
            return;
        case StopKind::Exit:
            on_exit_stop(tid);
            return;
        case StopKind::VforkDone:
        case StopKind::SyscallStop:
        case StopKind::Exited:
        case StopKind::Killed:
        case StopKind::Unknown:
            resume(tid);
            return;
    }
}

void PtraceBackend::on_new_task_event(pid_t creator_tid, StopKind event) {
    unsigned long msg = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, creator_tid, nullptr, &msg) != 0) {
        resume(creator_tid);
        return;
    }
    const auto child = static_cast<pid_t>(msg);
    const CloneKind kind = decode_clone(creator_tid, event, child);
    resume(creator_tid);
    if (!context_->recorder.task_created(child, creator_tid, kind)) return;
    if (held_.erase(child)) on_first_stop(child);
}

void PtraceBackend::on_first_stop(pid_t tid) {
    context_->recorder.first_stop(tid);
    resume(tid);
}

void PtraceBackend::on_exec(pid_t tid) {
    unsigned long former = 0;
    ::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former);
    if (tid == root_pid_ && !root_exec_seen_) {
        root_exec_seen_ = true;
        const os::LaunchReport report = os::read_launch_report(report_fd_);
        if (report.seccomp_errno != 0)
            context_->recorder.warn(Warning{Warning::Kind::NoExecFilter, tid, 0, 0, report.seccomp_errno, {}});
    }
    context_->recorder.exec_done(tid, static_cast<pid_t>(former));
    resume(tid);
}

void PtraceBackend::on_exit_stop(pid_t tid) {
    Recorder& recorder = context_->recorder;
    recorder.task_exiting(tid);
    // A held child whose creating process is ending will not get its fork
    // event if the creator was SIGKILLed in the middle of fork.
    if (!held_.empty()) {
        if (const TaskEntry* task = recorder.table().task(tid)) {
            const Process& proc = recorder.table().process(task->process);
            const LiveProcess* live = recorder.table().live(proc.pid);
            if (!live || live->live_tasks == 0) adopt_held_tasks(proc.pid);
        }
    }
    resume(tid);
}

// A task held at its first stop whose creator is exiting will never see its
// creator's fork event (a SIGKILLed parent skips it): identify it from /proc.
void PtraceBackend::adopt_held_tasks(pid_t exiting_tgid) {
    Recorder& recorder = context_->recorder;
    const std::vector<pid_t> held(held_.begin(), held_.end());
    for (pid_t tid : held) {
        auto st = procfs::read_status(tid);
        if (!st || !st->tgid) continue;
        if (*st->tgid != tid) {
            recorder.thread_adopted(tid, *st->tgid);
        } else {
            if (!st->ppid || *st->ppid != exiting_tgid) continue;
            recorder.process_adopted(tid, exiting_tgid, false);
        }
        if (!recorder.table().task(tid)) continue;
        held_.erase(tid);
        on_first_stop(tid);
    }
}

void PtraceBackend::on_reaped(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage) {
    held_.erase(tid);
    ExitStatus exit;
    if (ws.kind() == StopKind::Exited) {
        exit.code = ws.code();
    } else {
        exit.signal = ws.signal();
        exit.core_dumped = ws.core_dumped();
    }
    OptionalBytes ru_maxrss;
    if (usage) ru_maxrss = static_cast<uint64_t>(usage->ru_maxrss) * 1024;
    context_->recorder.task_reaped(tid, exit, ru_maxrss);
    if (tid == root_pid_ && !root_exec_seen_) {
        // The root died before its exec: did the exec fail?
        const os::LaunchReport report = os::read_launch_report(report_fd_);
        if (report.exec_errno != 0) os::throw_launch_error(context_->argv.at(0), report.exec_errno);
    }
}

void PtraceBackend::kill_everything() {
    for (const auto& [tid, task] : context_->recorder.table().tasks()) ::kill(tid, SIGKILL);
    for (pid_t tid : held_) ::kill(tid, SIGKILL);
    // Drain: every tracee reports its death to us (we trace them all).
    int status = 0;
    while (::waitpid(-1, &status, __WALL) > 0 || errno == EINTR) {
    }
}

}  // namespace
}  // namespace ptrace_backend

std::unique_ptr<Backend> make_ptrace_backend() { return std::make_unique<ptrace_backend::PtraceBackend>(); }

}  // namespace max_rss
