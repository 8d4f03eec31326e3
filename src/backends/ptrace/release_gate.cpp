#include "release_gate.hpp"

#include <algorithm>
#include <utility>

namespace max_rss::ptrace_backend {

pid_t release_ends_at_event_of(ProcessTable& table, pid_t tid, ReleasePoint point) {
    const TaskEntry* task = table.task(tid);
    if (!task) return 0;
    const Process& proc = table.process(task->process);
    // A CLONE_VM child frees in its creator's address space.
    const pid_t owner = proc.shares_mm_with.value_or(proc.pid);
    const LiveProcess* live = table.live(owner);
    if (!live || live->mm_released || table.family_size(live->sampled.family) < 2) return 0;
    // An exit: the address space is torn down before the leader is reaped.
    if (point == ReleasePoint::Exit) return proc.shares_mm_with ? 0 : proc.pid;
    return tid;  // its syscall-exit stop or exec event
}

bool ReleaseGate::admit(pid_t tid, ReleasePoint point, int64_t now_ns) {
    // Behind those already held, whatever is under way: measured in the order
    // they stopped.
    if (under_way_.empty() && held_.empty()) return true;
    held_.push_back(Held{tid, point, now_ns});
    return false;
}

void ReleaseGate::event_of(pid_t tid) {
    under_way_.erase(tid);
    unfollowed_.erase(tid);
    std::erase_if(held_, [tid](const Held& h) { return h.tid == tid; });
}

std::optional<ReleaseGate::Held> ReleaseGate::next_ready() {
    if (!under_way_.empty() || held_.empty()) return std::nullopt;
    Held next = held_.front();
    held_.pop_front();
    return next;
}

void ReleaseGate::stop_following() {
    for (const auto& [pid, value] : under_way_) unfollowed_.assign(pid, value);
    under_way_ = {};
}

std::optional<int64_t> ReleaseGate::oldest_held_since_ns() const {
    if (held_.empty()) return std::nullopt;
    return held_.front().since_ns;
}

std::deque<ReleaseGate::Held> ReleaseGate::take_all_held() { return std::exchange(held_, {}); }

}  // namespace max_rss::ptrace_backend
