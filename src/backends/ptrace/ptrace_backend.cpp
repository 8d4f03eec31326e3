// The ptrace backend: init(); while (dispatch(next_event())); finish();
//
// One place waits (SignalHub::wait_any), handlers return what to do with the
// stopped task, one place does it (apply). The kernel stops every task at the
// moments that matter for memory:
//   - execve entry (our seccomp filter): the old image's VmHWM;
//   - PTRACE_EVENT_EXIT, before exit_mm: the image's VmHWM and a breakdown;
//   - a new task's first stop: a forked child's inherited resident size;
//   - once the tree has two processes, where memory may fall (munmap, ...):
//     the release filter, installed then (release_filter_rollout.hpp).
// A fork family is never read while one of its members is still inside such
// a call (release_gate.hpp). Nothing polls and nothing sleeps.
#include "ptrace_backend.hpp"

#include "clone_kind.hpp"
#include "filter_injection.hpp"
#include "seccomp_filter.hpp"
#include "syscall_edit.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/util/log.hpp>
#include <max_rss/os/launch.hpp>

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace max_rss {

std::unique_ptr<Backend> make_sample_backend_following(const os::Launched& launched);

namespace ptrace_backend {
namespace {

constexpr unsigned long kPtraceOptions =
    PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD;

}  // namespace

void PtraceBackend::run(RunContext& context) {
    context_ = &context;
    rollout_.emplace(context.recorder, actions_);
    // Filters of max_rss's own (a container's) are inherited; with the launch
    // filter, that is what a process of the tree has unless it added its own.
    if (const auto self = procfs::read_status(::getpid()); self && self->seccomp_filters)
        rollout_->expect_filters(*self->seccomp_filters + 1);
    static const SeccompFilter filter(FilterInjector::supported() ? SeccompFilter::Part::Launch
                                                                  : SeccompFilter::Part::All);
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
    forwarder_.emplace(context.recorder);
    forwarder_->set_root(root_pid_);
    try {
        loop();
    } catch (...) {
        kill_everything_now();
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
        if (signals.take_tick()) {
            // Not while a family member is inside a release call: its
            // figures are moving (release_gate.hpp); the next tick will do.
            if (context_->sample_interval_ns > 0 && recorder.now_ns() >= next_sample_ns_ &&
                !gate_.release_under_way()) {
                recorder.set_family_reads_settled(gate_.family_reads_settled());
                recorder.tick();
                recorder.set_family_reads_settled(true);
                next_sample_ns_ = recorder.now_ns() + context_->sample_interval_ns;
            }
            if (!held_.empty()) adopt_held();
            unstick_held_releases();
            apply();
        }
        forwarder_->handle(signals.take_received(), [this](const os::ReceivedSignal& sig) { return traced_root_has_copy(root_pid_, sig.signo); });
        if (auto deadline = forwarder_->deadline_ns(); deadline && !killing_ && recorder.now_ns() >= *deadline) {
            // Asked to stop after the command ended: what still runs is
            // killed, and its exit stops are measured as any other.
            recorder.warn(Warning{Warning::Kind::SurvivorsKilled, 0, recorder.table().live_count(), 0, 0, {}});
            kill_all();
        }
        const ProcessTable& table = recorder.table();
        const bool many_threads = table.task_count() > table.live_count() + kManyThreads;
        const os::WaitResult w = signals.wait_any(many_threads);
        if (w.kind == os::WaitResult::Kind::NoChildren) return;
        if (w.kind == os::WaitResult::Kind::Interrupted) continue;
        dispatch(w.pid, w.status, w.usage);
        // The stopped task goes on first: measuring held tasks takes a while,
        // and a SIGKILL meanwhile would move it to an exit stop the resume
        // then passes over (the stop that ended a release is the usual one).
        apply();
        measure_held_releases();
        apply();
    }
}

void PtraceBackend::apply() {
    for (const Action& action : actions_) {
        if (action.from_seccomp_stop && !still_at_seccomp_stop(action.tid)) continue;  // its next stop will come
        long r = 0;
        if (action.kind == Action::Kind::Listen) {
            r = ::ptrace(PTRACE_LISTEN, action.tid, nullptr, nullptr);
            // LISTEN refused (not a group-stop after all): let it run.
            if (r != 0 && errno != ESRCH) r = ::ptrace(PTRACE_CONT, action.tid, nullptr, nullptr);
        } else if (action.kind == Action::Kind::Syscall) {
            r = ::ptrace(PTRACE_SYSCALL, action.tid, nullptr, nullptr);
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
    gate_.event_of(tid);
    if (ws.is_terminal()) {
        rollout_->task_gone(tid);
        group_stopped_first_.erase(tid);
        on_reaped(tid, ws, usage);
        return;
    }
    if (rollout_->busy(tid)) {
        if (kind != StopKind::Exit) {
            rollout_->on_stop(tid, kind, ws.signal());
            return;
        }
        rollout_->interrupted(tid);  // killed in the middle: nothing to put back
    }
    if (kind == StopKind::Exit) rollout_->exit_stop(tid);
    TaskEntry* task = context_->recorder.table().task(tid);
    if (!task) {
        if (kind == StopKind::EventStop || kind == StopKind::GroupStop) {
            if (kind == StopKind::GroupStop) group_stopped_first_[tid] = ws.signal();
            hold(tid);  // first stop before the creator's event
        } else {
            resume(tid, kind == StopKind::SignalDelivery ? ws.signal() : 0);
        }
        return;
    }
    context_->recorder.task_stopped(*task);
    switch (kind) {
        case StopKind::EventStop:
            if (task->awaiting_first_stop) on_first_stop(tid);
            else resume(tid);  // end of a LISTEN, or a stray INTERRUPT
            return;
        case StopKind::GroupStop:
            if (task->awaiting_first_stop && rollout_->installs_at_first_stop(tid)) {
                group_stopped_first_[tid] = ws.signal();
                on_first_stop(tid);
                return;
            }
            task->awaiting_first_stop = false;
            actions_.push_back(Action{tid, Action::Kind::Listen, 0});
            return;
        case StopKind::SignalDelivery:
            if (tid == root_pid_) forwarder_->root_delivered(ws.signal());
            resume(tid, ws.signal());  // re-inject exactly once
            return;
        case StopKind::Fork:
        case StopKind::Vfork:
        case StopKind::Clone:
            on_new_task_event(tid, kind);
            return;
        case StopKind::Seccomp:
            on_seccomp(tid);
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
    if (kind != CloneKind::Thread && rollout_->pending()) {
        rollout_->start(creator_tid, child, event, held_.contains(child));
    } else {
        if (kind != CloneKind::Thread) rollout_->new_process(creator_tid, child);
        resume(creator_tid);
    }
    if (!context_->recorder.task_created(child, creator_tid, kind)) return;
    if (held_.erase(child)) on_first_stop(child);
}

void PtraceBackend::on_first_stop(pid_t tid) {
    context_->recorder.first_stop(tid);
    int group_signal = 0;
    if (auto it = group_stopped_first_.find(tid); it != group_stopped_first_.end()) {
        group_signal = it->second;
        group_stopped_first_.erase(it);
    }
    if (rollout_->install_at_first_stop(tid, group_signal)) return;
    if (group_signal != 0) {
        actions_.push_back(Action{tid, Action::Kind::Listen, 0});  // it stays in its group-stop
        return;
    }
    resume(tid);
}

void PtraceBackend::on_seccomp(pid_t tid) {
    unsigned long data = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &data) != 0) {
        resume(tid);
        return;
    }
    switch (static_cast<StopTag>(data)) {
        case StopTag::Exec:
            at_release_point(tid, ReleasePoint::ExecEntry);
            return;
        case StopTag::Untraced:
        case StopTag::Clone3:
            clear_clone_untraced(tid, static_cast<StopTag>(data) == StopTag::Clone3);
            break;
        case StopTag::Release:
            at_release_point(tid, ReleasePoint::Syscall);
            return;
        case StopTag::ReleaseShared:
            at_release_point(tid, ReleasePoint::SharedSyscall);
            return;
        case StopTag::Brk:
            if (brk_lowers(tid)) {
                at_release_point(tid, ReleasePoint::Syscall);
                return;
            }
            break;
        case StopTag::Strict:
            context_->recorder.warn(Warning{Warning::Kind::StrictSeccomp, tid, 0, 0, EINVAL, {}});
            log::warn("pid {} asks for seccomp strict mode, which the kernel refuses (EINVAL) to a program "
                      "under max_rss's ptrace backend: measure it with --backend sample",
                      tid);
            break;
        case StopTag::Ptrace:
            on_ptrace_call(tid);
            break;
        default:
            // A SECCOMP_RET_TRACE of the program's own filter: without max_rss
            // nobody would trace it, and the kernel fails the call with ENOSYS.
            fail_syscall(tid, ENOSYS);
            break;
    }
    resume(tid);
}

bool PtraceBackend::brk_lowers(pid_t tid) {
    const TaskEntry* task = context_->recorder.table().task(tid);
    const auto wanted = first_argument(tid);
    if (!task || !wanted) return true;  // unknown: measure
    if (*wanted == 0) return false;     // brk(0) asks where the break is
    // The first one seen (the release filter may come mid-life): measure.
    auto [it, first] = brk_.try_emplace(task->process, *wanted);
    const bool lowers = first || *wanted < it->second;
    it->second = *wanted;
    return lowers;
}

// A task can have one tracer, and every task of the tree has max_rss: the
// kernel refuses (EPERM) PTRACE_TRACEME from any of them, and an attach to
// any of them. The program's own error message rarely says why, so the
// summary does, once a run (strace probes with several processes, and
// LeakSanitizer attaches to every thread). An attach to a process outside the
// tree may succeed: nothing is said.
void PtraceBackend::on_ptrace_call(pid_t tid) {
    PtraceCall call;
    if (!read_ptrace_call(tid, call)) return;
    const char* request = call.request == PTRACE_TRACEME  ? "PTRACE_TRACEME"
                          : call.request == PTRACE_ATTACH ? "PTRACE_ATTACH"
                          : call.request == PTRACE_SEIZE  ? "PTRACE_SEIZE"
                                                          : nullptr;
    if (!request) return;
    Recorder& recorder = context_->recorder;
    if (call.request != PTRACE_TRACEME && !recorder.table().task(call.target)) return;
    if (ptrace_refused_) return;
    ptrace_refused_ = true;
    const TaskEntry* caller = recorder.table().task(tid);
    const pid_t pid = caller ? recorder.table().process(caller->process).pid : tid;
    recorder.warn(Warning{Warning::Kind::PtraceRefused, pid, 0, 0, EPERM, request});
}

void PtraceBackend::on_exec(pid_t tid) {
    unsigned long former = 0;
    ::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former);
    // A thread that exec'd has its leader's tid now: its release ended here.
    if (former != 0) gate_.event_of(static_cast<pid_t>(former));
    if (tid == root_pid_ && !root_exec_seen_) {
        root_exec_seen_ = true;
        const os::LaunchReport report = os::read_launch_report(report_fd_);
        if (report.seccomp_errno != 0) {
            context_->recorder.warn(Warning{Warning::Kind::NoExecFilter, tid, 0, 0, report.seccomp_errno, {}});
            context_->recorder.release_points_unavailable();
            rollout_->cancel();
        }
    }
    if (const TaskEntry* task = context_->recorder.table().task(static_cast<pid_t>(former) ? static_cast<pid_t>(former) : tid))
        brk_.erase(task->process);
    context_->recorder.exec_done(tid, static_cast<pid_t>(former));
    rollout_->resume_after_exec(tid);
}

void PtraceBackend::on_exit_stop(pid_t tid) {
    // Only the last task's exit lets the address space go (the others' just
    // leave it): only that one is measured with the tree.
    ProcessTable& table = context_->recorder.table();
    const TaskEntry* task = table.task(tid);
    const LiveProcess* live = task ? table.live(table.process(task->process).pid) : nullptr;
    if (live && !task->exiting && live->live_tasks == 1) {
        at_release_point(tid, ReleasePoint::Exit);
        return;
    }
    context_->recorder.task_exiting(tid);
    if (!held_.empty()) adopt_held();
    resume(tid);
}

// A new task's first stop came before its creator's fork/clone event. A
// thread is known for what it is (its thread group, from /proc): it is taken
// in at once. A process is held until its creator's event says whether it
// shares its creator's memory, or until the creator is seen to end without
// that event (SIGKILLed in the middle of fork): then it is a fork.
void PtraceBackend::hold(pid_t tid) {
    const auto st = procfs::read_status(tid);
    if (st && st->tgid && *st->tgid != tid) {
        context_->recorder.thread_adopted(tid, *st->tgid);
        if (context_->recorder.table().task(tid)) {
            on_first_stop(tid);
            return;
        }
    }
    held_[tid] = st && st->ppid ? *st->ppid : 0;
    adopt_held();
}

void PtraceBackend::adopt_held() {
    Recorder& recorder = context_->recorder;
    std::vector<pid_t> adopted;
    for (const auto& [tid, creator] : held_) {
        const LiveProcess* live = creator != 0 ? recorder.table().live(creator) : nullptr;
        if (live && live->live_tasks > 0) continue;  // its creator may still report the event
        recorder.process_adopted(tid, creator, false);
        adopted.push_back(tid);
    }
    for (pid_t tid : adopted) {
        held_.erase(tid);
        on_first_stop(tid);
    }
}

void PtraceBackend::on_reaped(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage) {
    held_.erase(tid);
    if (!held_.empty()) adopt_held();
    if (const TaskEntry* task = context_->recorder.table().task(tid);
        task && context_->recorder.table().process(task->process).pid == tid)
        brk_.erase(task->process);
    context_->recorder.task_reaped(tid, ws.exit_status(), ru_maxrss_bytes(usage));
    if (tid == root_pid_ && !root_exec_seen_) {
        // The root died before its exec: did the exec fail?
        const os::LaunchReport report = os::read_launch_report(report_fd_);
        if (report.exec_errno != 0) os::throw_launch_error(context_->argv.at(0), report.exec_errno);
    }
}

// SIGKILL for every task; the loop goes on, measures their exit stops and
// reaps them.
void PtraceBackend::kill_all() {
    killing_ = true;
    for (const auto& [tid, task] : context_->recorder.table().tasks()) ::kill(tid, SIGKILL);
    for (const auto& [tid, creator] : held_) ::kill(tid, SIGKILL);
}

// For when the loop cannot go on (max_rss's own failure): SIGKILL for every
// task, then drain. A SIGKILLed tracee still stops at its exit (since Linux
// 6.1 it stays there until resumed), so every stop is resumed.
void PtraceBackend::kill_everything_now() {
    kill_all();
    int status = 0;
    for (;;) {
        const pid_t pid = ::waitpid(-1, &status, __WALL);
        if (pid < 0 && errno == EINTR) continue;
        if (pid < 0) break;
        if (WIFSTOPPED(status)) ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
    }
}

}  // namespace ptrace_backend

std::unique_ptr<Backend> make_ptrace_backend() { return std::make_unique<ptrace_backend::PtraceBackend>(); }

}  // namespace max_rss
