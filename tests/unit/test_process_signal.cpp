// os::signal_if: a signal reaches a pid only while it is still the process
// meant; the check runs with the pid pinned, so it cannot change in between.
#include <max_rss/os/process_signal.hpp>
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

namespace {

pid_t start_sleeper() {
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    return child;
}

}  // namespace

TEST_CASE("signal_if: not sent when the process is not the one meant", "[process_signal]") {
    const pid_t child = start_sleeper();
    REQUIRE(child > 0);
    int checks = 0;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGKILL, [&] { return ++checks, false; }));
    CHECK(checks == 1);
    int status = 0;
    CHECK(::waitpid(child, &status, WNOHANG) == 0);  // still running: nothing was sent
    CHECK(max_rss::os::signal_if(child, SIGKILL, [&] { return ++checks, true; }));
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
}

TEST_CASE("signal_if: a pid with no process is neither checked nor signalled", "[process_signal]") {
    const pid_t child = start_sleeper();
    REQUIRE(child > 0);
    ::kill(child, SIGKILL);
    REQUIRE(::waitpid(child, nullptr, 0) == child);
    bool checked = false;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGTERM, [&] { return checked = true; }));
    CHECK_FALSE(checked);
}
