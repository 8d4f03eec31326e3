// Where memory may fall (a release point: a release call's entry, an
// execve's, a process's last exit stop), the ptrace backend measures the
// tree, unless a fork family member is still inside a release call: then
// the task is held and measured after it, in stopping order
// (release_gate.hpp says why).
#include "ptrace_backend.hpp"

#include "syscall_edit.hpp"

#include <max_rss/util/log.hpp>

namespace max_rss::ptrace_backend {

// A task stopped where memory may fall: measured now, or held until no fork
// family member is inside a release call (release_gate.hpp).
void PtraceBackend::at_release_point(pid_t tid, ReleasePoint point) {
    if (gate_.admit(tid, point, context_->recorder.now_ns())) measure_release(tid, point);
}

// The tree measured at tid's release point, then tid goes on into it:
// followed to its end when the release changes how a family's pages divide.
void PtraceBackend::measure_release(pid_t tid, ReleasePoint point) {
    const pid_t key = release_ends_at_event_of(context_->recorder.table(), tid, point);
    Recorder& recorder = context_->recorder;
    const uint64_t skipped_before = recorder.release_points_skipped();
    recorder.set_family_reads_settled(gate_.family_reads_settled());
    switch (point) {
        case ReleasePoint::Syscall: recorder.memory_released(tid, ReleaseReach::Own); break;
        case ReleasePoint::SharedSyscall: recorder.memory_released(tid, ReleaseReach::AnyProcess); break;
        case ReleasePoint::ExecEntry: recorder.exec_entry(tid); break;
        case ReleasePoint::Exit:
            recorder.task_exiting(tid);
            if (!held_.empty()) adopt_held();
            break;
    }
    recorder.set_family_reads_settled(true);
    const bool at_seccomp = point != ReleasePoint::Exit;
    if (key == 0) {
        actions_.push_back(Action{tid, Action::Kind::Resume, 0, at_seccomp});
        return;
    }
    // Not measured here (the budget is spent): a second stop would buy
    // nothing now (gate's header).
    if ((point == ReleasePoint::Syscall || point == ReleasePoint::SharedSyscall) &&
        recorder.release_points_skipped() != skipped_before) {
        gate_.entered_unfollowed(tid);
        actions_.push_back(Action{tid, Action::Kind::Resume, 0, true});
        return;
    }
    gate_.entered(key);
    // A call's end is its syscall-exit stop (an exec's, its exec event; a
    // failed exec's, its syscall exit); an exit's, its leader's reaping.
    actions_.push_back(Action{tid, at_seccomp ? Action::Kind::Syscall : Action::Kind::Resume, 0, at_seccomp});
}

// A release call that never seems to end (a munmap waiting for a userfaultfd
// monitor that is itself held, say) must not hang the tree: after a while
// the held tasks are measured anyway, without resolving any fork family's
// sharing until it ends (so the peak may be reported as bounds, never as
// more than was held).
void PtraceBackend::unstick_held_releases() {
    constexpr int64_t kLongestReleaseNs = 10'000'000'000;
    const auto since = gate_.oldest_held_since_ns();
    if (!since || context_->recorder.now_ns() - *since < kLongestReleaseNs) return;
    log::debug("a release call has not ended in {} s: measuring the {} held task(s) without family reads",
               kLongestReleaseNs / 1'000'000'000, gate_.held_count());
    gate_.stop_following();
    measure_all_held();
}

// Every held task measured, in the order they stopped, and resumed in
// batches: thousands can be held at once (10,000 children exiting together
// on a loaded machine, where the oldest waits past kLongestReleaseNs), and
// one queue of all their resumes was max_rss's largest allocation then
// (~0.2 MiB for 10,000, in the queue's last doubling).
void PtraceBackend::measure_all_held() {
    constexpr size_t kResumeBatch = 256;
    for (const ReleaseGate::Held& h : gate_.take_all_held()) {
        measure_held(h);
        if (actions_.size() >= kResumeBatch) apply();
    }
}

// A held task is measured where it stopped, if it is still there: a SIGKILL
// wakes it, and a resume now would pass over its exit stop unreported.
// (Only at an exit stop does a killed task stay until resumed.)
void PtraceBackend::measure_held(const ReleaseGate::Held& held) {
    if (held.point != ReleasePoint::Exit && !still_at_seccomp_stop(held.tid)) return;  // its next stop will come
    measure_release(held.tid, held.point);
}

// Held release points, in the order they stopped, once nothing is under way.
void PtraceBackend::measure_held_releases() {
    if (killing_) {
        // Killed tasks do not free where they stopped: measured as they are.
        gate_.stop_following();
        measure_all_held();
        return;
    }
    while (const auto next = gate_.next_ready()) measure_held(*next);
}

}  // namespace max_rss::ptrace_backend
