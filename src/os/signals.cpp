#include <max_rss/errors.hpp>
#include <max_rss/os/signals.hpp>

#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace max_rss::os {
namespace {

// Written only by the handlers, which run only inside wait_any() (everything
// handled is blocked elsewhere, and blocked inside each handler), read only
// outside it: no two writers, no reader during a write.
constexpr int kMaxRecorded = 16;
volatile sig_atomic_t g_recorded_count = 0;
ReceivedSignal g_recorded[kMaxRecorded];
volatile sig_atomic_t g_tick = 0;
bool g_hub_exists = false;

void on_termination(int sig, siginfo_t* info, void*) {
    if (g_recorded_count >= kMaxRecorded) return;  // a flood: the first ones decide
    ReceivedSignal& r = g_recorded[g_recorded_count];
    r.signo = sig;
    r.code = info ? info->si_code : 0;
    r.sender = info ? info->si_pid : 0;
    g_recorded_count = g_recorded_count + 1;
}

void on_alarm(int) { g_tick = 1; }

}  // namespace


SignalHub::SignalHub(Options options) : options_(options) {
    if (g_hub_exists) throw std::logic_error("SignalHub: only one may exist at a time");
    g_hub_exists = true;
    g_recorded_count = 0;
    g_tick = 0;
    sigemptyset(&handled_);
    ::sigprocmask(SIG_SETMASK, nullptr, &original_mask_);

    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    std::vector<int> wanted;
    if (options_.catch_termination) {
        wanted.assign(std::begin(kTerminationSignals), std::end(kTerminationSignals));
        wanted.insert(wanted.end(), std::begin(kPassedSignals), std::end(kPassedSignals));
    }
    sigaddset(&sa.sa_mask, SIGALRM);
    for (int sig : wanted) sigaddset(&sa.sa_mask, sig);  // handlers never nest
    for (int sig : wanted) {
        struct sigaction previous {};
        ::sigaction(sig, nullptr, &previous);
        // An ignored termination signal stays ignored: for max_rss, as its
        // caller wanted, and for the program, which inherits it across exec.
        if (previous.sa_handler == SIG_IGN) continue;
        sa.sa_sigaction = on_termination;
        sa.sa_flags = SA_SIGINFO;
        ::sigaction(sig, &sa, nullptr);
        saved_.emplace_back(sig, previous);
        sigaddset(&handled_, sig);
    }
    block();
    if (options_.tick_ns > 0) set_tick_ns(options_.tick_ns);
}

void SignalHub::set_tick_ns(int64_t ns) {
    if (!sigismember(&handled_, SIGALRM)) {
        struct sigaction sa {}, previous {};
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        for (int sig : kTerminationSignals) sigaddset(&sa.sa_mask, sig);
        for (int sig : kPassedSignals) sigaddset(&sa.sa_mask, sig);
        sa.sa_flags = 0;  // no SA_RESTART: wait4 returns EINTR
        ::sigaction(SIGALRM, &sa, &previous);
        saved_.emplace_back(SIGALRM, previous);
        sigaddset(&handled_, SIGALRM);
        block();
    }
    options_.tick_ns = ns;
    itimerval timer{};
    timer.it_interval.tv_sec = ns / 1'000'000'000;
    timer.it_interval.tv_usec = (ns % 1'000'000'000) / 1000;
    if (timer.it_interval.tv_sec == 0 && timer.it_interval.tv_usec == 0) timer.it_interval.tv_usec = 1;
    timer.it_value = timer.it_interval;
    ::setitimer(ITIMER_REAL, &timer, nullptr);
    timer_armed_ = true;
}

std::vector<ReceivedSignal> SignalHub::drain() {
    if (timer_armed_) {
        itimerval off{};
        ::setitimer(ITIMER_REAL, &off, nullptr);
        timer_armed_ = false;
    }
    std::vector<ReceivedSignal> out = take_pending();
    g_tick = 0;
    return out;
}

std::vector<ReceivedSignal> SignalHub::take_pending() {
    std::vector<ReceivedSignal> out = take_received();
    const timespec no_wait{0, 0};
    siginfo_t info{};
    for (int sig; (sig = ::sigtimedwait(&handled_, &info, &no_wait)) > 0;) {
        if (sig == SIGALRM) {
            g_tick = 1;  // kept for take_tick()
            continue;
        }
        out.push_back(ReceivedSignal{sig, info.si_code, info.si_pid});
    }
    return out;
}

SignalHub::~SignalHub() {
    drain();
    // Restore the dispositions first, then the mask: a signal still pending
    // is delivered to the caller's own handler, not lost.
    for (const auto& [sig, previous] : saved_) ::sigaction(sig, &previous, nullptr);
    ::sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    g_hub_exists = false;
}

void SignalHub::block() { ::sigprocmask(SIG_BLOCK, &handled_, nullptr); }

void SignalHub::unblock() { ::sigprocmask(SIG_UNBLOCK, &handled_, nullptr); }

WaitResult SignalHub::wait_any(bool usage_only_when_reaping) {
    WaitResult result;
    unblock();  // a pending signal is handled right here
    // A signal that lands between this check and wait4 is seen at the next
    // tick at the latest (tick_ns bounds the delay).
    if (g_recorded_count > 0 || g_tick) {
        block();
        result.kind = WaitResult::Kind::Interrupted;
        return result;
    }
    int status = 0;
    rusage usage{};
    pid_t pid = -1;
    bool reaping = true;
    if (usage_only_when_reaping) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | __WALL | WNOWAIT) == 0) {
            reaping = info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
            pid = ::wait4(info.si_pid, &status, __WALL, reaping ? &usage : nullptr);
        }
    } else {
        pid = ::wait4(-1, &status, __WALL, &usage);
    }
    const int error = errno;
    block();
    if (pid > 0) {
        result.kind = WaitResult::Kind::Event;
        result.pid = pid;
        result.status = WaitStatus(status);
        if (reaping && result.status.is_terminal()) result.usage = usage;
        return result;
    }
    if (error == EINTR) {
        result.kind = WaitResult::Kind::Interrupted;
        return result;
    }
    if (error == ECHILD) {
        result.kind = WaitResult::Kind::NoChildren;
        return result;
    }
    throw TracerError(std::string("wait4: ") + std::strerror(error));
}

std::vector<ReceivedSignal> SignalHub::take_received() {
    std::vector<ReceivedSignal> out(g_recorded, g_recorded + g_recorded_count);
    g_recorded_count = 0;
    return out;
}

void SignalHub::inject(int signo) {
    // The hub's signals are blocked outside wait_any(): no handler runs meanwhile.
    if (g_recorded_count >= kMaxRecorded) return;
    g_recorded[g_recorded_count] = ReceivedSignal{signo, SI_USER, 0};
    g_recorded_count = g_recorded_count + 1;
}

bool SignalHub::take_tick() {
    if (!g_tick) return false;
    g_tick = 0;
    return true;
}

}  // namespace max_rss::os
