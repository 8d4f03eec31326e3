// The precedence of max_rss's exit status when several things went wrong.
#include <max_rss/exit_codes.hpp>

#include <catch2/catch.hpp>

using max_rss::exit_code::combine;

TEST_CASE("exit status: the program's failure, then --budget, then a lost output", "[exit]") {
    CHECK(combine(0, false, false) == 0);
    CHECK(combine(0, false, true) == 4);
    CHECK(combine(0, true, false) == 3);
    CHECK(combine(0, true, true) == 3);        // the budget's verdict was fully reached
    CHECK(combine(7, true, true) == 7);        // a caller of `max_rss -- prog` gets prog's failure
    CHECK(combine(128 + 9, false, true) == 137);
}
