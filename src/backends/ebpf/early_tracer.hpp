// The root's first milliseconds under ptrace, while the kernel side loads.
//
// Loading the eBPF programs costs ~25-40 ms here (the verifier, attaching
// eight tracepoints); a program that waited for it paid all of it, which a
// compute-bound program of one second feels (1.025x). Instead the root is
// seized at its launch (before its exec) and runs at once while a thread
// loads. Until the programs are in place, every stop that would change the
// tree, or take it out of the kernel side's sight, is held:
//   - fork, vfork, clone, clone3 (threads too, and LeakSanitizer's
//     CLONE_UNTRACED clone), execve and execveat after the first, ptrace (a
//     debugger, strace, a sanitizer): at their syscall entry;
//   - a signal's delivery (it is delivered at the detach, as it would have
//     been), and the exit (PTRACE_EVENT_EXIT, before exit_mm).
// So the root stays alone with its one image, and its VmHWM is the tree's
// peak so far. Once loaded, the root is stopped (held already, or by
// PTRACE_INTERRUPT), adopted (BpfProgram::adopt) and detached: the held
// system call then runs, the held signal is delivered, as if never traced.
// A program that makes none of these calls in those milliseconds is never
// held; every other one waits no longer than it did before.
#pragma once

#include <max_rss/os/signals.hpp>

#include <sys/types.h>

#include <functional>
#include <optional>

namespace max_rss {
class Forwarder;
}

namespace max_rss::ebpf {

class EarlyTracer {
public:
    // Seizes pid (forked, not yet exec'd): its exec is the first stop.
    // False, with errno, when the kernel refuses (Yama, a seccomp policy).
    static bool seize(pid_t pid);

    EarlyTracer(pid_t root, os::SignalHub& signals, Forwarder& forwarder)
        : root_(root), signals_(signals), forwarder_(forwarder) {}

    enum class Outcome {
        Stopped,  // loaded() and the root is stopped: adopt it, then detach()
        Ended,    // the root ended first (a SIGKILL has no exit stop): ended()
    };
    // Serves the root's stops until loaded() is true and the root is
    // stopped after its exec, or it has ended (an exec that failed ends it
    // too). on_exec runs at its first exec's stop (the new image in place,
    // /proc readable). A loader that becomes ready wakes
    // this with SIGALRM (the hub's tick signal) to the calling thread.
    Outcome run(const std::function<bool()>& loaded, const std::function<void()>& on_exec);
    // Forwards the signals max_rss received since run() last looked (those
    // still pending in max_rss, blocked since run()'s last wait, too), with the
    // root still stopped and the kernel side counting its signals
    // (counted(sig): the root got a copy the kernel side saw, used up when
    // true). Between run()'s last look and that counting, a group signal
    // reaches the stopped root uncounted; it waits there, held at its
    // delivery stop or pending, until detach() lets the root take it. Left
    // for the backend's loop, it would find nothing pending and send a
    // second copy.
    void settle_signals(const std::function<bool(const os::ReceivedSignal&)>& counted);
    // Lets the stopped root go: the held system call runs, the held signal is delivered.
    void detach();
    [[nodiscard]] const os::WaitResult& ended() const { return ended_; }
    // What the root was held at, for the log.
    [[nodiscard]] const char* held_at() const { return held_at_; }

private:
    // True when the stop must be held until the programs are in place.
    bool must_hold(const WaitStatus& status);
    void resume(int sig);
    // The root has its own copy of signo: held at its delivery stop (while
    // stopped, a stop this tracer has not resumed), pending, or waiting in
    // the wait queue as a delivery stop.
    [[nodiscard]] bool root_has_copy(int signo, bool stopped) const;

    pid_t root_;
    os::SignalHub& signals_;
    Forwarder& forwarder_;
    bool exec_seen_ = false;
    int pending_signal_ = 0;
    const char* held_at_ = "no stop";
    os::WaitResult ended_;
};

}  // namespace max_rss::ebpf
