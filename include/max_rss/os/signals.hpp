// The one owner of max_rss's signal handling while it measures, and the one
// place that waits for the tree's events.
#pragma once

#include <max_rss/os/wait_status.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace max_rss::os {

// The signals max_rss passes on to the program when they are sent to max_rss
// itself (kill, systemd, a CI runner's timeout).
inline constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// Signals max_rss passes on to the program without ending anything: a
// program's own requests (dd's progress, a server's log reopening). Their
// default action would kill max_rss, and with it the tree and its report.
inline constexpr int kPassedSignals[] = {SIGUSR1, SIGUSR2};

[[nodiscard]] inline bool is_termination_signal(int sig) {
    for (int t : kTerminationSignals)
        if (t == sig) return true;
    return false;
}

// One signal max_rss received, as the kernel described it.
struct ReceivedSignal {
    int signo = 0;
    int code = 0;       // si_code: > 0 from the kernel (a terminal's ^C), <= 0 from kill/sigqueue
    pid_t sender = 0;   // si_pid for signals sent by a process

    // A terminal's ^C, ^\ or hang-up: the kernel sent it to the whole
    // foreground process group, the program included.
    [[nodiscard]] bool from_terminal() const { return code > 0; }
};

// What one wait returned: a value, never a pid plus errno.
struct WaitResult {
    enum class Kind {
        Event,        // pid changed state: status says how
        Interrupted,  // a signal arrived (take_received(), take_tick())
        NoChildren,   // ECHILD: nothing left to wait for
    };
    Kind kind = Kind::NoChildren;
    pid_t pid = 0;
    WaitStatus status{0};
    // Filled only when the wait reaped a process and usage was asked for.
    std::optional<rusage> usage;
};

// While it exists, for the whole process (it is meant to live inside one
// measured run; nothing else in max_rss touches these):
//  - SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are caught and
//    recorded, except those the caller ignored (under nohup SIGHUP stays
//    ignored, for max_rss and, since ignored signals survive exec, for the
//    program);
//  - SIGALRM is caught for a periodic ITIMER_REAL tick, when tick_ns > 0;
//  - all of these are blocked except while wait_any() waits, so a handler
//    never runs in the middle of the caller's work.
// The destructor restores the dispositions, the signal mask and the timer.
// Only one may exist at a time.
class SignalHub {
public:
    struct Options {
        bool catch_termination = true;
        // Period of the tick; 0 = none. It also bounds how long a wait can
        // miss a signal that lands between its unblocking and wait4.
        int64_t tick_ns = 0;
    };
    explicit SignalHub(Options options);
    ~SignalHub();
    SignalHub(const SignalHub&) = delete;
    SignalHub& operator=(const SignalHub&) = delete;

    // The signal mask max_rss was started with: what a program it starts must
    // start with (the hub's own blocking is max_rss's business).
    [[nodiscard]] const sigset_t& original_mask() const { return original_mask_; }

    // Waits for the next state change of any child or tracee: wait4(-1,
    // __WALL). rusage is asked for only when the event reaps a process if
    // usage_only_when_reaping (wait4 with rusage sums CPU time over every
    // thread of a stopped task's process: quadratic in threads).
    WaitResult wait_any(bool usage_only_when_reaping);

    // Signals recorded since the last call, oldest first.
    std::vector<ReceivedSignal> take_received();
    // The same, and then those that arrived since the last wait and wait,
    // blocked, to be handled: for a decision that cannot wait for the next
    // wait_any() (the ebpf backend's hand-off from its early tracer).
    std::vector<ReceivedSignal> take_pending();
    // True once per tick that fired since the last call.
    bool take_tick();
    // Records signo as if it had just been received from kill(2): handled by
    // the next take_received(). For a signal a caller caught before the hub
    // existed.
    void inject(int signo);
    // Starts (or changes) the periodic tick (ns > 0).
    void set_tick_ns(int64_t ns);
    // Stops the tick and collects, without delivering them, the signals still
    // pending: what arrived after the last wait. Call before destruction, or
    // a signal pending then would be delivered to the caller's old handler
    // (the default: death) once the mask is restored.
    std::vector<ReceivedSignal> drain();

private:
    void block();
    void unblock();

    Options options_;
    sigset_t original_mask_{};
    sigset_t handled_{};
    std::vector<std::pair<int, struct sigaction>> saved_;
    bool timer_armed_ = false;
};

}  // namespace max_rss::os
