#include <max_rss/model.hpp>
#include <max_rss/optional_bytes.hpp>

#include <catch2/catch.hpp>

using max_rss::OptionalBytes;

TEST_CASE("OptionalBytes behaves like std::optional<uint64_t> in 8 bytes", "[model]") {
    OptionalBytes unset;
    CHECK_FALSE(unset);
    CHECK_FALSE(unset.has_value());
    CHECK(unset.value_or(7) == 7);
    CHECK_FALSE(unset.to_optional().has_value());

    OptionalBytes zero = uint64_t{0};  // 0 is a measurement, not "unknown"
    REQUIRE(zero);
    CHECK(*zero == 0);
    CHECK(zero.value_or(7) == 0);

    const uint64_t largest_kb = UINT64_C(18014398509481983) * 1024;  // the largest /proc kB figure in bytes
    OptionalBytes big = largest_kb;
    REQUIRE(big);
    CHECK(*big == largest_kb);

    OptionalBytes from_opt = std::optional<uint64_t>(42);
    CHECK(from_opt == uint64_t{42});
    from_opt = std::optional<uint64_t>();
    CHECK_FALSE(from_opt);

    OptionalBytes v = uint64_t{5};
    std::optional<uint64_t> back = v;
    CHECK(back == std::optional<uint64_t>(5));
    v.reset();
    CHECK_FALSE(v);
    CHECK(v == OptionalBytes{});
    CHECK_FALSE(v == uint64_t{5});
    v = std::nullopt;
    CHECK_FALSE(v);
}

TEST_CASE("per-process records stay compact", "[model]") {
    // One Process and its images are kept for every process of a run: these
    // sizes are what max_rss's own memory per traced process is made of
    // (docs/performance.md). A field that grows them should be a decision.
    STATIC_REQUIRE(sizeof(OptionalBytes) == 8);
    CHECK(sizeof(max_rss::MemoryBreakdown) <= 64);
    CHECK(sizeof(max_rss::Image) <= 64);
    CHECK(sizeof(max_rss::Process) <= 176);
}
