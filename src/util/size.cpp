#include <max_rss/util/size.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace max_rss {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
    return text;
}

// The leading "digits[.digits]" of text, or empty when text does not start
// with one. A dot must have digits on both sides.
std::string_view leading_decimal(std::string_view text) {
    size_t i = 0;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == 0) return {};
    if (i < text.size() && text[i] == '.') {
        size_t j = i + 1;
        while (j < text.size() && is_digit(text[j])) ++j;
        if (j == i + 1) return {};
        i = j;
    }
    return text.substr(0, i);
}

// The multiplier of a unit suffix (already trimmed), or nullopt.
std::optional<uint64_t> unit_multiplier(std::string_view unit) {
    std::string lower;
    for (char c : unit) lower += to_lower(c);
    if (lower.empty() || lower == "b") return 1;

    static constexpr std::string_view prefixes = "kmgtpe";
    const size_t power = prefixes.find(lower[0]) ;
    if (power == std::string_view::npos) return std::nullopt;
    const std::string_view rest = std::string_view(lower).substr(1);
    uint64_t base = 0;
    if (rest.empty() || rest == "ib" || rest == "i") {
        base = 1024;  // bare K/M/G/...: binary, as sort -S and du do; Ki/Mi/Gi as Kubernetes
    } else if (rest == "b") {
        base = 1000;
    } else {
        return std::nullopt;
    }
    uint64_t multiplier = 1;
    for (size_t i = 0; i <= power; ++i) multiplier *= base;  // at most 1024^6 < 2^64
    return multiplier;
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
    text = trim(text);
    const std::string_view number = leading_decimal(text);
    if (number.empty()) return std::nullopt;
    const auto multiplier = unit_multiplier(trim(text.substr(number.size())));
    if (!multiplier) return std::nullopt;

    const size_t dot = number.find('.');
    const std::string_view integer_digits = number.substr(0, dot);
    const std::string_view fraction_digits =
        dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
    if (!fraction_digits.empty() && *multiplier == 1) return std::nullopt;  // no fractional bytes

    uint64_t integer = 0;
    const auto [end, error] =
        std::from_chars(integer_digits.data(), integer_digits.data() + integer_digits.size(), integer);
    if (error != std::errc{} || end != integer_digits.data() + integer_digits.size()) return std::nullopt;

    uint64_t bytes = 0;
    if (__builtin_mul_overflow(integer, *multiplier, &bytes)) return std::nullopt;
    if (!fraction_digits.empty()) {
        // The fraction is below 1 and the multiplier at most 2^60, so a long
        // double (64-bit mantissa) holds the product to well under a byte.
        long double fraction = 0;
        long double scale = 1;
        for (char c : fraction_digits) {
            scale /= 10;
            fraction += static_cast<long double>(c - '0') * scale;
        }
        const auto fraction_bytes =
            static_cast<uint64_t>(std::llround(fraction * static_cast<long double>(*multiplier)));
        if (__builtin_add_overflow(bytes, fraction_bytes, &bytes)) return std::nullopt;
    }
    return bytes;
}

ByteUnit unit_for_bytes(double bytes) {
    static constexpr std::array<std::string_view, 7> names = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (std::round(bytes) < 1024) return {names[0], 1};
    double scale = 1024;
    size_t index = 1;
    // Compare the value as it will be printed, so rounding never shows 1024.0.
    while (index + 1 < names.size() && std::round(bytes / scale * 10.0) / 10.0 >= 1024.0) {
        scale *= 1024;
        ++index;
    }
    return {names[index], scale};
}

std::string format_in_unit(double bytes, ByteUnit unit) {
    if (unit.bytes == 1) return fmt::format("{:.0f} B", bytes);
    return fmt::format("{:.1f} {}", bytes / unit.bytes, unit.name);
}

std::string format_bytes(uint64_t bytes) {
    if (bytes < 1024) return fmt::format("{} B", bytes);  // exact, whatever a double holds
    const auto value = static_cast<double>(bytes);
    return format_in_unit(value, unit_for_bytes(value));
}

std::optional<double> parse_percent(std::string_view text) {
    text = trim(text);
    const std::string_view number = leading_decimal(text);
    if (number.empty()) return std::nullopt;
    const std::string_view rest = trim(text.substr(number.size()));
    if (!rest.empty() && rest != "%") return std::nullopt;

    double percent = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (error != std::errc{} || end != number.data() + number.size() || !std::isfinite(percent)) {
        return std::nullopt;
    }
    return percent / 100.0;
}

}  // namespace max_rss
