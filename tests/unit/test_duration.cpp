#include <max_rss/util/duration.hpp>

#include <catch2/catch.hpp>

using max_rss::parse_duration_ns;

TEST_CASE("durations parse with units; only 0 goes without one", "[duration]") {
    CHECK(parse_duration_ns("20ms") == 20'000'000);
    CHECK(parse_duration_ns("250\u00b5s") == 250'000);
    CHECK_FALSE(parse_duration_ns("20").has_value());
    CHECK_FALSE(parse_duration_ns("0.5").has_value());
    CHECK(parse_duration_ns("0.0") == 0);
    CHECK(parse_duration_ns("0.5s") == 500'000'000);
    CHECK(parse_duration_ns("250us") == 250'000);
    CHECK(parse_duration_ns("7ns") == 7);
    CHECK(parse_duration_ns(" 1s ") == 1'000'000'000);
    CHECK(parse_duration_ns("0") == 0);
    for (const char* bad : {"", "ms", "-1ms", "1 h", ".5s", "5.s", "1e3ms", "2days", "90000s", "1..2s"}) {
        INFO(bad);
        CHECK_FALSE(parse_duration_ns(bad).has_value());
    }
}
