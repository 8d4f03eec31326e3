// The ptrace backend's release gate: no task is measured while a fork family
// member is inside a release call; held stops come back in stopping order.
#include "release_gate.hpp"

#include <catch2/catch.hpp>

using namespace max_rss::ptrace_backend;

TEST_CASE("release gate: measured at once while no release is under way", "[gate]") {
    ReleaseGate gate;
    CHECK(gate.admit(10, ReleasePoint::Syscall, 1));
    CHECK_FALSE(gate.release_under_way());
    CHECK_FALSE(gate.next_ready());
}

TEST_CASE("release gate: held while a release is under way, in the order they stopped", "[gate]") {
    ReleaseGate gate;
    gate.entered(10);
    CHECK(gate.release_under_way());
    CHECK_FALSE(gate.admit(11, ReleasePoint::ExecEntry, 5));
    CHECK_FALSE(gate.admit(12, ReleasePoint::Exit, 7));
    CHECK(gate.held_count() == 2);
    CHECK(gate.oldest_held_since_ns() == 5);
    CHECK_FALSE(gate.next_ready());  // 10 is still inside its call
    gate.event_of(11);               // another task's event ends nothing of 10's
    // ...but a held task's own event means it left its stop (SIGKILL).
    CHECK(gate.held_count() == 1);
    gate.event_of(10);  // 10's syscall-exit stop
    CHECK_FALSE(gate.release_under_way());
    const auto next = gate.next_ready();
    REQUIRE(next);
    CHECK(next->tid == 12);
    CHECK(next->point == ReleasePoint::Exit);
    CHECK_FALSE(gate.next_ready());
    CHECK_FALSE(gate.oldest_held_since_ns());
}

TEST_CASE("release gate: a stop behind held ones waits its turn", "[gate]") {
    ReleaseGate gate;
    gate.entered(1);
    CHECK_FALSE(gate.admit(2, ReleasePoint::Syscall, 1));
    gate.event_of(1);
    // Nothing under way now, but 2 stopped first.
    CHECK_FALSE(gate.admit(3, ReleasePoint::Syscall, 2));
    auto next = gate.next_ready();
    REQUIRE(next);
    CHECK(next->tid == 2);
    gate.entered(2);  // 2 went into its release: 3 waits for it
    CHECK_FALSE(gate.next_ready());
    gate.event_of(2);
    next = gate.next_ready();
    REQUIRE(next);
    CHECK(next->tid == 3);
}

TEST_CASE("release gate: giving up on a release that does not end hands back every held stop", "[gate]") {
    ReleaseGate gate;
    gate.entered(1);
    CHECK_FALSE(gate.admit(2, ReleasePoint::Syscall, 1));
    CHECK_FALSE(gate.admit(3, ReleasePoint::Exit, 2));
    gate.stop_following();
    const auto held = gate.take_all_held();
    REQUIRE(held.size() == 2);
    CHECK(held[0].tid == 2);
    CHECK(held[1].tid == 3);
    CHECK_FALSE(gate.release_under_way());
    CHECK(gate.admit(4, ReleasePoint::Syscall, 3));
    // ...but no family is read while 1 may still be inside its call.
    CHECK_FALSE(gate.family_reads_settled());
    gate.event_of(1);
    CHECK(gate.family_reads_settled());
}

TEST_CASE("release gate: a release not followed unsettles family reads until the task's next event", "[gate]") {
    ReleaseGate gate;
    gate.entered_unfollowed(5);
    CHECK_FALSE(gate.release_under_way());  // nobody is held for it
    CHECK(gate.admit(6, ReleasePoint::Syscall, 1));
    CHECK_FALSE(gate.family_reads_settled());
    gate.event_of(6);
    CHECK_FALSE(gate.family_reads_settled());
    gate.event_of(5);
    CHECK(gate.family_reads_settled());
}
