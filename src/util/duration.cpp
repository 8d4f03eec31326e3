#include <max_rss/util/duration.hpp>

#include <fmt/format.h>

#include <cmath>

#include <charconv>
#include <cmath>

namespace max_rss {

std::optional<int64_t> parse_duration_ns(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    size_t unit_at = text.find_first_not_of("0123456789.");
    std::string_view number = text.substr(0, unit_at);
    std::string_view unit = unit_at == std::string_view::npos ? std::string_view{} : text.substr(unit_at);
    if (number.empty() || number.front() == '.' || number.back() == '.') return std::nullopt;
    double value = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc{} || end != number.data() + number.size()) return std::nullopt;
    double scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us" || unit == "\u00b5s") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s") scale = 1e9;
    else if (unit.empty() && value == 0) scale = 1;  // 0 is 0 in any unit
    else return std::nullopt;
    const double ns = value * scale;
    if (!std::isfinite(ns) || ns > 86400e9) return std::nullopt;
    return static_cast<int64_t>(std::llround(ns));
}

std::string format_duration_ns(int64_t ns) {
    double v = static_cast<double>(ns);
    if (ns < 1000) return fmt::format("{} ns", ns);
    if (ns < 1000000) return fmt::format("{:g} µs", std::round(v / 1e1) / 1e2);
    if (ns < 1000000000) return fmt::format("{:g} ms", std::round(v / 1e4) / 1e2);
    return fmt::format("{:g} s", std::round(v / 1e7) / 1e2);
}

}  // namespace max_rss
