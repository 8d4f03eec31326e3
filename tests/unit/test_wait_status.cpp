#include <max_rss/os/wait_status.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <sys/ptrace.h>

using namespace max_rss;

namespace {
// Raw statuses as the kernel builds them (see wait(2) and ptrace(2)).
int exited_wait_status(int code) { return (code & 0xff) << 8; }
int killed(int sig, bool core = false) { return sig | (core ? 0x80 : 0); }
int stopped(int sig, int event = 0) { return ((sig | (event << 8)) << 8) | 0x7f; }
}  // namespace

TEST_CASE("wait statuses are classified", "[wait_status]") {
    CHECK(WaitStatus(exited_wait_status(0)).kind() == StopKind::Exited);
    CHECK(WaitStatus(exited_wait_status(42)).code() == 42);
    CHECK(WaitStatus(killed(SIGKILL)).kind() == StopKind::Killed);
    CHECK(WaitStatus(killed(SIGKILL)).signal() == SIGKILL);
    CHECK(WaitStatus(killed(SIGSEGV, true)).core_dumped());
    CHECK_FALSE(WaitStatus(killed(SIGTERM)).core_dumped());
    CHECK(WaitStatus(exited_wait_status(1)).is_terminal());
    CHECK_FALSE(WaitStatus(stopped(SIGUSR1)).is_terminal());

    CHECK(WaitStatus(stopped(SIGUSR1)).kind() == StopKind::SignalDelivery);
    CHECK(WaitStatus(stopped(SIGUSR1)).signal() == SIGUSR1);
    // A SIGSTOP about to be delivered is a signal-delivery stop, not a group-stop.
    CHECK(WaitStatus(stopped(SIGSTOP)).kind() == StopKind::SignalDelivery);
    CHECK(WaitStatus(stopped(SIGTRAP | 0x80)).kind() == StopKind::SyscallStop);

    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_FORK)).kind() == StopKind::Fork);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_VFORK)).kind() == StopKind::Vfork);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_CLONE)).kind() == StopKind::Clone);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_EXEC)).kind() == StopKind::Exec);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_EXIT)).kind() == StopKind::Exit);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_SECCOMP)).kind() == StopKind::Seccomp);
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_VFORK_DONE)).kind() == StopKind::VforkDone);

    // PTRACE_EVENT_STOP: a group-stop carries the stopping signal; a new
    // task's first stop (or the end of a LISTEN) carries SIGTRAP.
    for (int sig : {SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU}) {
        CHECK(WaitStatus(stopped(sig, PTRACE_EVENT_STOP)).kind() == StopKind::GroupStop);
        CHECK(WaitStatus(stopped(sig, PTRACE_EVENT_STOP)).signal() == sig);
    }
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_STOP)).kind() == StopKind::EventStop);
    CHECK(WaitStatus(stopped(SIGTRAP, 99)).kind() == StopKind::Unknown);
}

TEST_CASE("wait statuses describe themselves for logs", "[wait_status]") {
    CHECK(WaitStatus(exited_wait_status(3)).describe() == "exited 3");
    CHECK(WaitStatus(killed(SIGKILL)).describe() == "killed by SIGKILL");
    CHECK(WaitStatus(stopped(SIGTSTP, PTRACE_EVENT_STOP)).describe() == "group-stop SIGTSTP");
    CHECK(WaitStatus(stopped(SIGTRAP, PTRACE_EVENT_EXIT)).describe() == "exit");
    CHECK(WaitStatus(killed(77)).describe() == "killed by signal 77");
}
