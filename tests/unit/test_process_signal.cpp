// os::signal_if: a signal reaches a pid only while it is still the process
// meant; the check runs with the pid pinned, so it cannot change in between.
#include <max_rss/os/process_signal.hpp>
#include <catch2/catch.hpp>
#include "../e2e/helpers.hpp"
#include <csignal>

using namespace max_rss::test;

TEST_CASE("signal_if: sent only when the process is the one meant", "[process_signal]") {
    const pid_t child = fork_waiter();
    REQUIRE(child > 0);
    int checks = 0;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGTERM, [&] { return ++checks, false; }));
    CHECK(checks == 1);
    CHECK_FALSE(sigterm_pending(child));
    CHECK(max_rss::os::signal_if(child, SIGTERM, [&] { return ++checks, true; }));
    CHECK(checks == 2);
    CHECK(sigterm_pending(child));
    end_child(child);
}

TEST_CASE("signal_if: a pid with no process is neither checked nor signalled", "[process_signal]") {
    const pid_t child = fork_waiter();
    REQUIRE(child > 0);
    end_child(child);
    bool checked = false;
    CHECK_FALSE(max_rss::os::signal_if(child, SIGTERM, [&] { return checked = true, false; }));
    CHECK_FALSE(checked);
}
