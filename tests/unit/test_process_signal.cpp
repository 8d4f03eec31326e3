// os::signal_if: a signal reaches a pid only while it is still the process
// meant; the check runs with the pid pinned, so it cannot change in between.
#include <max_rss/os/process_signal.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

namespace {

// A child that waits, born with SIGTERM blocked: one sent to it stays
// pending, where the test can see it, instead of racing the test to its end.
pid_t start_sleeper() {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, &old);
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return child;
}

bool sigterm_pending(pid_t pid) {
    const auto status = max_rss::procfs::read_status(pid);
    REQUIRE(status);
    REQUIRE(status->pending_signals);
    return (*status->pending_signals & (uint64_t{1} << (SIGTERM - 1))) != 0;
}

void end(pid_t child) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
}

}  // namespace

TEST_CASE("signal_if: sent only when the process is the one meant", "[process_signal]") {
    const pid_t child = start_sleeper();
    REQUIRE(child > 0);
    int checks = 0;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGTERM, [&] { return ++checks, false; }));
    CHECK(checks == 1);
    CHECK_FALSE(sigterm_pending(child));
    CHECK(max_rss::os::signal_if(child, SIGTERM, [&] { return ++checks, true; }));
    CHECK(checks == 2);
    CHECK(sigterm_pending(child));
    end(child);
}

TEST_CASE("signal_if: a pid with no process is neither checked nor signalled", "[process_signal]") {
    const pid_t child = start_sleeper();
    REQUIRE(child > 0);
    end(child);
    bool checked = false;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGTERM, [&] { return checked = true, false; }));
    CHECK_FALSE(checked);
}
