#include <max_rss/util/size.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include "units.hpp"

using max_rss::format_bytes;
using max_rss::parse_percent;
using max_rss::parse_size;

namespace {
constexpr uint64_t TiB = 1024 * GiB;
}  // namespace

TEST_CASE("parse_size: plain bytes", "[size]") {
    CHECK(parse_size("123") == 123u);
    CHECK(parse_size("0") == 0u);
    CHECK(parse_size("12B") == 12u);
    CHECK(parse_size("12b") == 12u);
    CHECK(parse_size("18446744073709551615") == UINT64_MAX);
}

TEST_CASE("parse_size: binary units", "[size]") {
    CHECK(parse_size("512MiB") == 512 * MiB);
    CHECK(parse_size("512Mi") == 512 * MiB);
    CHECK(parse_size("2Gi") == 2 * GiB);
    CHECK(parse_size("64Ki") == 64 * KiB);
    CHECK(parse_size("4096KiB") == 4096 * KiB);
    CHECK(parse_size("1.5GiB") == GiB + GiB / 2);
    CHECK(parse_size("2TiB") == 2 * TiB);
    CHECK(parse_size("1PiB") == 1024 * TiB);
    CHECK(parse_size("1EiB") == 1024 * 1024 * TiB);
}

TEST_CASE("parse_size: bare K/M/G/T are binary", "[size]") {
    CHECK(parse_size("100M") == 100 * MiB);
    CHECK(parse_size("1K") == KiB);
    CHECK(parse_size("3G") == 3 * GiB);
    CHECK(parse_size("1T") == TiB);
}

TEST_CASE("parse_size: KB/MB/GB/TB are decimal", "[size]") {
    CHECK(parse_size("300MB") == 300'000'000u);
    CHECK(parse_size("1KB") == 1000u);
    CHECK(parse_size("2GB") == 2'000'000'000u);
    CHECK(parse_size("1TB") == 1'000'000'000'000u);
    CHECK(parse_size("1.5kB") == 1500u);
}

TEST_CASE("parse_size: units are case-insensitive", "[size]") {
    CHECK(parse_size("512mib") == 512 * MiB);
    CHECK(parse_size("512MIB") == 512 * MiB);
    CHECK(parse_size("100m") == 100 * MiB);
    CHECK(parse_size("300mb") == 300'000'000u);
    CHECK(parse_size("1gIb") == GiB);
}

TEST_CASE("parse_size: spaces around and before the unit", "[size]") {
    CHECK(parse_size("  512MiB  ") == 512 * MiB);
    CHECK(parse_size("\t100M\t") == 100 * MiB);
    CHECK(parse_size("100.0 MiB") == 100 * MiB);
    CHECK(parse_size(" 12 B ") == 12u);
}

TEST_CASE("parse_size: fractions round to the nearest byte", "[size]") {
    CHECK(parse_size("0.5KiB") == 512u);
    CHECK(parse_size("1.0001KiB") == 1024u);  // 1024.1024
    CHECK(parse_size("1.0005KiB") == 1025u);  // 1024.512
    CHECK(parse_size("0.1MiB") == 104858u);   // 104857.6
}

TEST_CASE("parse_size: format_bytes output round-trips", "[size]") {
    for (const char* text : {"512 B", "4.0 KiB", "100.0 MiB", "1.5 GiB"}) {
        const auto bytes = parse_size(text);
        REQUIRE(bytes);
        CHECK(format_bytes(*bytes) == text);
    }
}

TEST_CASE("parse_size: rejects what is not a size", "[size]") {
    for (const char* text :
         {"", "   ", "-1", "-1MiB", "+1", "MiB", "abc", "12 34", "1.5", "1.5B", "1.", ".5", "1e3", "1..5M",
          "12MiBs", "12 MiB x", "12iB", "12XB", "12KiBB", "1_000", "0x10", "nan", "inf", "12%"}) {
        INFO("text: '" << text << "'");
        CHECK(parse_size(text) == std::nullopt);
    }
}

TEST_CASE("parse_size: rejects overflow", "[size]") {
    CHECK(parse_size("18446744073709551616") == std::nullopt);
    CHECK(parse_size("99999999999999999999999") == std::nullopt);
    CHECK(parse_size("16EiB") == std::nullopt);
    CHECK(parse_size("15.99999999999999999999EiB") == std::nullopt);
    CHECK(parse_size("16777216TiB") == std::nullopt);
    CHECK(parse_size("16777215TiB") == 16777215 * TiB);
}

TEST_CASE("format_bytes: binary units, one decimal", "[size]") {
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.0 KiB");
    CHECK(format_bytes(4096) == "4.0 KiB");
    CHECK(format_bytes(1536) == "1.5 KiB");
    CHECK(format_bytes(100 * MiB) == "100.0 MiB");
    CHECK(format_bytes(GiB + GiB / 2) == "1.5 GiB");
    CHECK(format_bytes(3 * TiB) == "3.0 TiB");
    CHECK(format_bytes(UINT64_MAX) == "16.0 EiB");
}

TEST_CASE("format_bytes: rounding never shows 1024.0", "[size]") {
    CHECK(format_bytes(MiB - 1) == "1.0 MiB");
    CHECK(format_bytes(MiB - 52) == "1023.9 KiB");
    CHECK(format_bytes(GiB - 1) == "1.0 GiB");
}

TEST_CASE("parse_percent: returns a fraction", "[size]") {
    CHECK(parse_percent("5%") == Approx(0.05));
    CHECK(parse_percent("5") == Approx(0.05));
    CHECK(parse_percent("0.5%") == Approx(0.005));
    CHECK(parse_percent(" 12.5 % ") == Approx(0.125));
    CHECK(parse_percent("0") == Approx(0.0));
    CHECK(parse_percent("150%") == Approx(1.5));
}

TEST_CASE("parse_percent: rejects what is not a percentage", "[size]") {
    for (const char* text : {"", " ", "%", "-5%", "+5%", "5%%", "5 %x", "five", "1e2", "inf", "nan", ".5", "5.",
                             "5MiB", "0x5"}) {
        INFO("text: '" << text << "'");
        CHECK(parse_percent(text) == std::nullopt);
    }
}
