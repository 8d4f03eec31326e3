// Durations as users type them: "20ms", "0.5s", "250us", "0".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace max_rss {

// Parses a non-negative duration into nanoseconds. Units: ns, us (or µs),
// ms, s; a number needs one, except 0 ("0.5" could be seconds or
// milliseconds). nullopt for anything else or above a day.
std::optional<int64_t> parse_duration_ns(std::string_view text);

// A duration for people, three significant digits at most: "500 ns",
// "12.5 µs", "20 ms", "1.5 s".
std::string format_duration_ns(int64_t ns);

}  // namespace max_rss
