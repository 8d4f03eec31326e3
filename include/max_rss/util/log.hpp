// Logging on stderr, "max_rss: <level>: <message>". A thin front to spdlog so
// that only log.cpp compiles spdlog (header-only, ~10 s of compile per file
// that includes it). stdout is never used: it belongs to the program and to
// `-o -`.
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace max_rss::log {

enum class Level { trace, debug, info, warn, error, off };

// Installs the stderr logger at level warn. Call once, first thing in main.
void init();
void set_level(Level level);
[[nodiscard]] bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
    at(Level::trace, format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    at(Level::debug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    at(Level::warn, format, std::forward<Args>(args)...);
}

}  // namespace max_rss::log
