// The ptrace backend's class, shared by its two files: ptrace_backend.cpp
// (the loop and the stops' handlers) and release_points.cpp (measuring the
// tree where memory may fall, behind the release gate). Private to the
// backend: the rest of max_rss knows it as make_ptrace_backend().
#pragma once

#include "actions.hpp"
#include "release_filter_rollout.hpp"
#include "release_gate.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/os/wait_status.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace max_rss::ptrace_backend {

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
    void on_seccomp(pid_t tid);
    void on_exec(pid_t tid);
    bool brk_lowers(pid_t tid);
    void on_ptrace_call(pid_t tid);
    void on_exit_stop(pid_t tid);
    void at_release_point(pid_t tid, ReleasePoint point);
    void measure_release(pid_t tid, ReleasePoint point);
    void measure_held_releases();
    void unstick_held_releases();
    void measure_held(const ReleaseGate::Held& held);
    void measure_all_held();
    void on_reaped(pid_t tid, WaitStatus ws, const std::optional<rusage>& usage);
    void hold(pid_t tid);
    void adopt_held();
    void resume(pid_t tid, int sig = 0) { queue_resume(actions_, tid, sig); }
    void apply();  // the one place that resumes tasks
    void kill_all();
    void kill_everything_now();

    RunContext* context_ = nullptr;
    std::optional<Forwarder> forwarder_;
    pid_t root_pid_ = 0;
    int report_fd_ = -1;
    bool root_exec_seen_ = false;
    bool killing_ = false;
    int64_t next_sample_ns_ = 0;
    // New processes whose first stop came before their creator's fork event:
    // held stopped until the event says what they are (pid -> creator's pid),
    // or until the creator is seen to end without it (killed mid-fork).
    std::unordered_map<pid_t, pid_t> held_;
    Actions actions_;  // queued by handlers, drained by apply()
    // The last break each process asked for (by process record index; an
    // exec starts a new one): a brk below it may free memory.
    std::unordered_map<uint32_t, unsigned long> brk_;
    bool ptrace_refused_ = false;  // said once a run: the advice is the same for every caller
    // New tasks whose first stop was a group-stop (tid -> its stop signal).
    std::unordered_map<pid_t, int> group_stopped_first_;
    // The release filter: installed when the tree first has two processes.
    std::optional<ReleaseFilterRollout> rollout_;
    ReleaseGate gate_;
};

}  // namespace max_rss::ptrace_backend
