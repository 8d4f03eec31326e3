#include <max_rss/util/log.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace max_rss::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
    switch (level) {
        case Level::trace: return spdlog::level::trace;
        case Level::debug: return spdlog::level::debug;
        case Level::info: return spdlog::level::info;
        case Level::warn: return spdlog::level::warn;
        case Level::error: return spdlog::level::err;
        case Level::off: return spdlog::level::off;
    }
    return spdlog::level::warn;
}

}  // namespace

void init() {
    auto logger = spdlog::stderr_color_mt("max_rss");
    logger->set_pattern("max_rss: %l: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::warn);
}

void set_level(Level level) { spdlog::set_level(to_spdlog(level)); }

bool enabled(Level level) { return spdlog::should_log(to_spdlog(level)); }

void write(Level level, std::string_view message) { spdlog::log(to_spdlog(level), "{}", message); }

}  // namespace max_rss::log
