// Durations as users type them: "20ms", "0.5s", "250us", "100" (ms).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace max_rss {

// Parses a non-negative duration into nanoseconds. Units: ns, us, ms, s; a
// bare number is milliseconds. nullopt for anything else or above a day.
std::optional<int64_t> parse_duration_ns(std::string_view text);

}  // namespace max_rss
