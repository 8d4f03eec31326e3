#include <max_rss/backends/forwarding.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace max_rss {

bool signal_pending(pid_t pid, int sig) {
    const auto status = procfs::read_status(pid);
    return status && status->pending_signals && (*status->pending_signals & (uint64_t{1} << (sig - 1)));
}

bool traced_root_has_copy(pid_t pid, int sig) {
    if (signal_pending(pid, sig)) return true;
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
           info.si_pid == pid && info.si_code == CLD_TRAPPED && info.si_status == sig;
}

void Forwarder::send_to_survivors(const os::ReceivedSignal& sig, bool group_has_it) {
    const pid_t own_group = ::getpgrp();
    for (const auto& [pid, live] : recorder_.table().live_processes()) {
        if (group_has_it && ::getpgid(pid) == own_group) continue;        // it has the terminal's or the group's
        if (signal_pending(pid, sig.signo)) continue;                     // it has a group kill's
        send_(pid, sig.signo);
    }
}

void Forwarder::handle(const std::vector<os::ReceivedSignal>& received,
                       const std::function<bool(const os::ReceivedSignal&)>& root_has_copy) {
    for (const os::ReceivedSignal& sig : received) {
        const bool stops_run = os::is_termination_signal(sig.signo);
        if (stops_run) recorder_.interrupted(sig.signo);
        const bool delivered = delivered_mask_ & (uint64_t{1} << (sig.signo - 1));
        if (!recorder_.root_exited()) {
            const bool root_has_it = sig.from_terminal() || delivered || root_has_copy(sig);
            if (stops_run && !stop_for_survivors_) stop_for_survivors_ = Stop{sig, root_has_it};
            if (!root_has_it) ::kill(root_, sig.signo);
            continue;
        }
        // The command has ended: what still runs gets the signal, and a
        // termination signal ends the run (SIGUSR1/2 end nothing).
        send_to_survivors(sig, sig.from_terminal());
        if (stops_run && !deadline_ns_) deadline_ns_ = recorder_.now_ns() + kGraceNs;
        stop_for_survivors_.reset();  // they have this one
    }
    delivered_mask_ = 0;
    // The command was killed after it was asked to stop: the rest of it is
    // asked too. (Killed by the signal's default action, it passed nothing on.)
    if (stop_for_survivors_ && recorder_.root_exited()) {
        const std::optional<int> killed_by = recorder_.root_exit().signal;
        if (killed_by && os::is_termination_signal(*killed_by))
            send_to_survivors(stop_for_survivors_->sig, stop_for_survivors_->group_has_it);
        stop_for_survivors_.reset();
    }
}

}  // namespace max_rss
