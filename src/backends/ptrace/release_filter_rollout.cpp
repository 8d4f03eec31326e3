#include "release_filter_rollout.hpp"

#include "seccomp_filter.hpp"

#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <cerrno>
#include <cstring>

namespace max_rss::ptrace_backend {
namespace {

const SeccompFilter& release_filter() {
    static const SeccompFilter filter(SeccompFilter::Part::Release);
    return filter;
}

}  // namespace

ReleaseFilterRollout::ReleaseFilterRollout(Recorder& recorder, Actions& actions)
    : recorder_(recorder),
      actions_(actions),
      injector_(release_filter().fprog()),
      pending_(FilterInjector::supported()) {}

void ReleaseFilterRollout::start(pid_t creator_tid, pid_t child, StopKind event, bool child_held) {
    pending_ = false;
    if (event == StopKind::Vfork) vfork_child_ = child;
    first_child_ = child;
    ProcessTable& table = recorder_.table();
    // Another process already running (a child adopted before its creator's
    // event: CLONE_PARENT) cannot be reached now: say so rather than miss its
    // releases silently.
    if (table.live_count() > 1) missing(creator_tid, EBUSY, false);
    if (const TaskEntry* task = table.task(creator_tid)) {
        installer_process_ = task->process;
        if (const LiveProcess* live = table.live(table.process(task->process).pid); live && live->live_tasks > 1)
            threaded_installer_ = task->process;
    }
    installer_tid_ = creator_tid;
    injector_.start_after_syscall(creator_tid);
    actions_.push_back(Action{creator_tid, Action::Kind::Syscall, 0});
    if (const TaskEntry* copy = table.task(child); copy && !copy->awaiting_first_stop && !child_held)
        missing(child, EBUSY, false);
    else
        at_first_stop_.insert(child);
}

void ReleaseFilterRollout::new_process(pid_t creator_tid, pid_t child) {
    if (child_missed_filter(creator_tid, child)) at_first_stop_.insert(child);
}

// Another thread of the installing process forked while the filter was on
// its way: its child may have copied the filters from before.
bool ReleaseFilterRollout::child_missed_filter(pid_t creator_tid, pid_t child) const {
    if (!threaded_installer_) return false;
    const TaskEntry* task = recorder_.table().task(creator_tid);
    if (!task || task->process != *threaded_installer_) return false;
    if (injector_.busy(installer_tid_)) return true;
    const auto creator = procfs::read_status(creator_tid);
    const auto copy = procfs::read_status(child);
    return creator && copy && creator->seccomp_filters && copy->seccomp_filters &&
           *copy->seccomp_filters < *creator->seccomp_filters;
}

bool ReleaseFilterRollout::install_at_first_stop(pid_t tid, int group_signal) {
    if (!at_first_stop_.erase(tid)) return false;
    // Installed first; a group-stop's signal is raised again after.
    FilterInjector::Step step = injector_.start_now(tid);
    if (!step.done && group_signal != 0) injector_.hold_signal(tid, group_signal);
    go_on(tid, step, group_signal != 0);
    return true;
}

void ReleaseFilterRollout::go_on(pid_t tid, FilterInjector::Step step, bool group_stop) {
    if (!step.done) {
        actions_.push_back(Action{tid, Action::Kind::Syscall, 0});
        return;
    }
    if (step.error != 0 && step.error != ESRCH) missing(tid, step.error, step.own_filters);
    if (tid == installer_tid_) {
        queue_resume(actions_, tid);
        installer_done();
        return;
    }
    if (group_stop) {
        // Never started: the task stays in its group-stop.
        actions_.push_back(Action{tid, Action::Kind::Listen, 0});
        return;
    }
    // A vfork or CLONE_VM child runs in the installer's memory, or the
    // installer waits for its exec (CLONE_VFORK): it waits at its exec instead.
    const TaskEntry* task = recorder_.table().task(tid);
    if (tid == vfork_child_ || (task && recorder_.table().process(task->process).shares_mm_with)) {
        queue_resume(actions_, tid);
        return;
    }
    resume_or_wait(tid);
}

void ReleaseFilterRollout::resume_or_wait(pid_t tid) {
    const TaskEntry* task = recorder_.table().task(tid);
    if (installer_busy() && task && task->process != installer_process_) waiting_.push_back(tid);
    else queue_resume(actions_, tid);
}

void ReleaseFilterRollout::installer_done() {
    // Its threads ran without the filter until now: what they freed is not
    // a fall unseen.
    if (installer_tid_ != 0) recorder_.release_filter_installed(installer_tid_);
    for (pid_t waiting : waiting_) queue_resume(actions_, waiting);
    waiting_.clear();
}

// A task that was running the installation exits: its process was killed
// (nothing missed), or another of its threads execs, which ends every other
// thread (the process lives on without the filter: said at that exec).
void ReleaseFilterRollout::interrupted(pid_t tid) {
    injector_.forget(tid);
    ProcessTable& table = recorder_.table();
    if (const TaskEntry* task = table.task(tid)) {
        const LiveProcess* live = table.live(table.process(task->process).pid);
        if (live && live->live_tasks > 1) interrupted_process_ = task->process;
    }
    if (tid == installer_tid_) installer_done();
}

void ReleaseFilterRollout::task_gone(pid_t tid) {
    if (injector_.busy(tid)) interrupted(tid);
    at_first_stop_.erase(tid);
    exit_stop(tid);
}

void ReleaseFilterRollout::resume_after_exec(pid_t tid) {
    if (interrupted_process_) {
        if (const TaskEntry* task = recorder_.table().task(tid); task && task->process == *interrupted_process_) {
            interrupted_process_.reset();
            missing(tid, EINTR, false);
        }
    }
    // The first child, if a vfork one, has its own memory from now on: it
    // waits for the installer like a forked child. (Only it: a process it
    // started meanwhile may be what it waits for before its exec.)
    if (tid == first_child_) resume_or_wait(tid);
    else queue_resume(actions_, tid);
}

void ReleaseFilterRollout::missing(pid_t tid, int error, bool own_filters) {
    const TaskEntry* task = recorder_.table().task(tid);
    const pid_t pid = task ? recorder_.table().process(task->process).pid : tid;
    log::debug("pid {}: release filter not installed: {}", pid, own_filters ? "filters of its own" : std::strerror(error));
    if (!refused_)
        recorder_.warn(Warning{Warning::Kind::NoReleaseFilter, pid, 0, 0, error,
                               own_filters ? "it has seccomp filters of its own" : ""});
    refused_ = true;
    recorder_.release_points_unavailable();
}

}  // namespace max_rss::ptrace_backend
