#include <max_rss/bench/baseline.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace max_rss {

std::filesystem::path baseline_directory() {
    const char* dir = std::getenv("MAX_RSS_BASELINE_DIR");
    if (dir != nullptr && *dir != '\0') return dir;
    return std::filesystem::path(".max_rss") / "baselines";
}

std::filesystem::path baseline_path(std::string_view name) {
    const auto allowed = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '-';
    };
    bool ok = !name.empty() && name.size() <= 100 && name.front() != '.';
    for (char c : name) ok = ok && allowed(c);
    if (!ok) {
        throw std::invalid_argument(
            fmt::format("'{}' is not a baseline name (letters, digits, '.', '_', '-'; not starting with '.')", name));
    }
    return baseline_directory() / fmt::format("{}.json", name);
}

}  // namespace max_rss
