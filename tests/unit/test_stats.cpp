#include <max_rss/bench/stats.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using max_rss::BenchResult;
using max_rss::BenchRun;
using max_rss::Summary;

TEST_CASE("summarize: an empty sample is all zeros", "[stats]") {
    const Summary s = max_rss::summarize({});
    CHECK(s.mean == 0);
    CHECK(s.stddev == 0);
    CHECK(s.median == 0);
    CHECK(s.min == 0);
    CHECK(s.max == 0);
}

TEST_CASE("summarize: one value has no spread", "[stats]") {
    const std::vector<double> values = {42};
    const Summary s = max_rss::summarize(values);
    CHECK(s.mean == 42);
    CHECK(s.stddev == 0);
    CHECK(s.median == 42);
    CHECK(s.min == 42);
    CHECK(s.max == 42);
}

TEST_CASE("summarize: odd count, unsorted input", "[stats]") {
    const std::vector<double> values = {9, 1, 5};
    const Summary s = max_rss::summarize(values);
    CHECK(s.mean == 5);
    CHECK(s.stddev == 4);  // sqrt((16 + 16 + 0) / 2)
    CHECK(s.median == 5);
    CHECK(s.min == 1);
    CHECK(s.max == 9);
}

TEST_CASE("summarize: even count takes the mean of the middle two", "[stats]") {
    const std::vector<double> values = {4, 1, 3, 10};
    const Summary s = max_rss::summarize(values);
    CHECK(s.median == 3.5);
    CHECK(s.mean == 4.5);
    // sample stddev (n - 1): sum of squares 0.25 + 12.25 + 2.25 + 30.25 = 45
    CHECK(s.stddev == Approx(std::sqrt(45.0 / 3.0)));
}

TEST_CASE("summarize: two equal values", "[stats]") {
    const std::vector<double> values = {7, 7};
    const Summary s = max_rss::summarize(values);
    CHECK(s.stddev == 0);
    CHECK(s.median == 7);
}

TEST_CASE("summarize_peak_bytes and summarize_ru_maxrss_bytes", "[stats]") {
    BenchResult result;
    result.runs = {BenchRun{100, 90, 0, 1.0}, BenchRun{300, std::nullopt, 0, 1.0}, BenchRun{200, 110, 1, 1.0}};
    const Summary peak = max_rss::summarize_peak_bytes(result);
    CHECK(peak.mean == 200);
    CHECK(peak.median == 200);
    CHECK(peak.stddev == 100);
    const auto ru = max_rss::summarize_ru_maxrss_bytes(result);
    REQUIRE(ru);
    CHECK(ru->mean == 100);  // only the runs that have one
    CHECK(ru->median == 100);
    CHECK(ru->min == 90);
    CHECK(ru->max == 110);

    result.runs = {BenchRun{100, std::nullopt, 0, 1.0}};
    CHECK_FALSE(max_rss::summarize_ru_maxrss_bytes(result));
    result.runs.clear();
    CHECK(max_rss::summarize_peak_bytes(result).mean == 0);
}

TEST_CASE("ratio: propagates relative errors as hyperfine does", "[stats]") {
    Summary a;
    a.mean = 200;
    a.stddev = 6;  // 3%
    Summary b;
    b.mean = 100;
    b.stddev = 4;  // 4%
    const auto r = max_rss::ratio(a, b);
    REQUIRE(r);
    CHECK(r->value == 2.0);
    CHECK(r->stddev == Approx(2.0 * 0.05));  // sqrt(0.03² + 0.04²) = 0.05
}

TEST_CASE("ratio: no spread gives no uncertainty", "[stats]") {
    Summary a;
    a.mean = 150;
    Summary b;
    b.mean = 100;
    const auto r = max_rss::ratio(a, b);
    REQUIRE(r);
    CHECK(r->value == 1.5);
    CHECK(r->stddev == 0);
}

TEST_CASE("ratio: zero means", "[stats]") {
    Summary zero;
    Summary b;
    b.mean = 100;
    b.stddev = 10;
    const auto r = max_rss::ratio(zero, b);
    REQUIRE(r);
    CHECK(r->value == 0);
    CHECK(r->stddev == 0);
    CHECK_FALSE(max_rss::ratio(b, zero));
}
