// What every backend does with the termination signals (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT) max_rss receives, so that the program gets each exactly
// once, as it would without max_rss, and the run always ends when asked.
#pragma once

#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/signals.hpp>

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace max_rss {

class Forwarder {
public:
    // How long processes still running after the command ended get, once
    // max_rss is asked to stop, before they are killed.
    static constexpr int64_t kGraceNs = 500'000'000;

    explicit Forwarder(Recorder& recorder) : recorder_(recorder) {}

    void set_root(pid_t root) { root_ = root; }
    // How a signal reaches a process of the tree other than the root: ::kill
    // unless the backend says otherwise. ptrace's tracees cannot be reaped
    // behind its back, so their pids cannot be reused; sample and ebpf pass a
    // sender that checks, pid pinned, that it is still the process they follow.
    using Sender = std::function<void(pid_t pid, int sig)>;
    void set_sender(Sender send) { send_ = std::move(send); }
    // The root took a delivery of sig (a ptrace signal-delivery stop).
    void root_delivered(int sig) { delivered_mask_ |= uint64_t{1} << (sig - 1); }

    // For each signal max_rss received, in order:
    //  - the root still runs: the signal is sent to it, unless it already has
    //    a copy of its own: from the terminal (^C reaches the whole foreground
    //    process group), or from a process-group kill (kill -INT -PGID reaches
    //    it directly). root_has_copy(signal) tells the latter (pending in
    //    its /proc status, delivered since the last call, or, under ebpf,
    //    generated for it by the same sender);
    //  - SIGUSR1 and SIGUSR2 are passed on the same way, and never end the
    //    run (once the command has ended, what still runs gets them);
    //  - the command has ended but processes it started still run (daemons,
    //    orphans): they get the signal (those in max_rss's own process group
    //    already have a terminal's), and a termination signal ends the run:
    //    whatever still runs kGraceNs later is killed (deadline_ns());
    //  - the command is killed by a termination signal after one came while
    //    it ran (a shell killed by SIGTERM, whose program runs on): what
    //    still runs gets the first such signal once, so that one signal
    //    stops the whole command. A command that handled the signal and
    //    exited (a supervisor that passes it on itself) leaves its processes
    //    alone; what ignores or outlives the signal ends the run only at the
    //    next one, as above.
    // Called only from the backend's loop, with signals blocked: the root
    // cannot have been reaped, and its pid reused, behind the loop's back.
    void handle(const std::vector<os::ReceivedSignal>& received,
                const std::function<bool(const os::ReceivedSignal&)>& root_has_copy);

    // When the run must end, if it must (see handle()).
    [[nodiscard]] std::optional<int64_t> deadline_ns() const { return deadline_ns_; }

private:
    Recorder& recorder_;
    pid_t root_ = 0;
    uint64_t delivered_mask_ = 0;
    std::optional<int64_t> deadline_ns_;
    Sender send_ = [](pid_t pid, int sig) { ::kill(pid, sig); };
    // The first termination signal that came while the command ran, until
    // what outlives the command has it; group_has_it: it reached max_rss's
    // process group (a terminal's, or a group kill that the root had too).
    struct Stop {
        os::ReceivedSignal sig;
        bool group_has_it = false;
    };
    std::optional<Stop> stop_for_survivors_;
    // sig to every live process of the tree but those that have it already.
    void send_to_survivors(const os::ReceivedSignal& sig, bool group_has_it);
};

// True when sig is pending for pid (its /proc status: SigPnd or ShdPnd).
bool signal_pending(pid_t pid, int sig);
// For a root max_rss traces: sig pending, or already dequeued into a
// signal-delivery stop still waiting in max_rss's wait queue.
bool traced_root_has_copy(pid_t pid, int sig);

}  // namespace max_rss
