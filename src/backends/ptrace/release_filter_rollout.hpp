// When and where the ptrace backend installs the release filter (the seccomp
// filter that stops a task where its memory may fall), and who waits for it.
//
// While the tree has one process, its VmHWM is the tree's total at every
// instant: no filter is needed. At its second process, the fork's parent (at
// the exit of its fork) and the child (at its first stop) get the filter
// before they run on, by FilterInjector; every process they start inherits
// it. Until every thread of the installing process has it, those threads
// could free memory unseen: the other processes wait, stopped. The awkward
// cases, each said (NoReleaseFilter warning, the peak a lower bound) rather
// than missed: a vfork child (its parent waits for its exec, so it waits at
// its exec instead), a fork by another thread of the installer while the
// filter is on its way, an installer that dies or whose process execs in the
// middle, a process that already runs (CLONE_PARENT), filters of the
// program's own.
#pragma once

#include "actions.hpp"
#include "filter_injection.hpp"

#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/wait_status.hpp>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

namespace max_rss::ptrace_backend {

class ReleaseFilterRollout {
public:
    // Tasks it resumes (or lets run a system call) go to actions.
    ReleaseFilterRollout(Recorder& recorder, Actions& actions);

    // How many seccomp filters a process of the tree has when it has none of
    // its own (FilterInjector::expect_filters).
    void expect_filters(std::optional<uint32_t> expected) { injector_.expect_filters(expected); }
    // Not installed yet, and it can be.
    [[nodiscard]] bool pending() const { return pending_; }
    // The launch filter is missing: there will be no release filter either.
    void cancel() { pending_ = false; }

    // The tree's second process (child) was made by creator_tid, stopped at
    // its fork/vfork/clone event: installs in both. child_held: its first
    // stop came already (the backend holds it).
    void start(pid_t creator_tid, pid_t child, StopKind event, bool child_held);
    // Any other new process (none of its business unless the filter is on
    // its way in a threaded installer); its creator is resumed by the caller.
    void new_process(pid_t creator_tid, pid_t child);

    // tid is running the installation: every stop but its exit stop goes to on_stop.
    [[nodiscard]] bool busy(pid_t tid) const { return injector_.busy(tid); }
    void on_stop(pid_t tid, StopKind kind, int signal) { go_on(tid, injector_.on_stop(tid, kind, signal)); }
    // A busy task stopped at its exit, or died.
    void interrupted(pid_t tid);
    // tid stopped at its exit: it waits for nothing any more.
    void exit_stop(pid_t tid) { std::erase(waiting_, tid); }
    // tid died (its wait status is terminal): forgotten everywhere.
    void task_gone(pid_t tid);

    // tid's first stop is where it gets the filter.
    [[nodiscard]] bool installs_at_first_stop(pid_t tid) const { return at_first_stop_.contains(tid); }
    // At tid's first stop (group_signal: the stop signal of a group-stop, or
    // 0): true if it installs there (the rollout then takes care of the task:
    // a system call, a Listen, a resume or a wait), false if the caller goes
    // on with the task.
    bool install_at_first_stop(pid_t tid, int group_signal);
    // tid exec'd: queues its resume, or makes it wait for the installer; if
    // its process lost the filter to an interrupted installation (another
    // thread exec'd in the middle), says so.
    void resume_after_exec(pid_t tid);

private:
    void go_on(pid_t tid, FilterInjector::Step step, bool group_stop = false);
    bool child_missed_filter(pid_t creator_tid, pid_t child) const;
    void missing(pid_t tid, int error, bool own_filters);
    bool installer_busy() const { return installer_tid_ != 0 && injector_.busy(installer_tid_); }
    void installer_done();
    void resume_or_wait(pid_t tid);

    Recorder& recorder_;
    Actions& actions_;
    FilterInjector injector_;
    bool pending_;
    bool refused_ = false;  // said once a run: the parent and the child usually fail alike
    std::unordered_set<pid_t> at_first_stop_;
    // The process that installed it, when it had several threads: a fork by
    // another of its threads may have copied its filters just before.
    std::optional<uint32_t> threaded_installer_;
    pid_t installer_tid_ = 0;
    uint32_t installer_process_ = 0;
    pid_t vfork_child_ = 0;  // the first child, when its parent waits for its exec (CLONE_VFORK)
    pid_t first_child_ = 0;  // the first child: it waits at its exec while the installer is busy
    // A process whose installing thread ended while others lived on: if one
    // of them execs (which ends every other thread), the process is without
    // the filter; if they all end, nothing was missed.
    std::optional<uint32_t> interrupted_process_;
    // Processes of their own (forked children, exec'd vfork children) that
    // wait, stopped, until every thread of the installer has the filter:
    // until then those threads could free memory unseen while they run.
    std::vector<pid_t> waiting_;
};

}  // namespace max_rss::ptrace_backend
