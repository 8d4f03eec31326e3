// os::SignalHub: what max_rss does with the signals it receives while it runs.
#include <max_rss/os/signals.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

using max_rss::os::SignalHub;

TEST_CASE("signal hub: a signal still blocked is taken by take_pending, once, with its sender", "[signals]") {
    SignalHub hub(SignalHub::Options{});
    // Outside wait_any() the hub's signals are blocked: this one waits, unhandled.
    REQUIRE(::raise(SIGUSR1) == 0);
    CHECK(hub.take_received().empty());
    const auto pending = hub.take_pending();
    REQUIRE(pending.size() == 1);
    CHECK(pending[0].signo == SIGUSR1);
    CHECK(pending[0].sender == ::getpid());
    CHECK(hub.take_pending().empty());
    CHECK(hub.drain().empty());
}
