#include <max_rss/util/text.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace max_rss {

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : fmt::format("signal {}", sig);
}

std::string describe_exit(const ExitStatus& exit) {
    if (exit.code) return fmt::format("exit code {}", *exit.code);
    if (exit.signal)
        return fmt::format("killed by {}{}", signal_name(*exit.signal), exit.core_dumped ? " (core dumped)" : "");
    return "exit unknown";
}

size_t display_width(std::string_view text) {
    return static_cast<size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

namespace {
bool is_shell_plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
}
}  // namespace

std::string shell_quote(std::string_view word) {
    if (!word.empty() && std::all_of(word.begin(), word.end(), is_shell_plain)) return std::string(word);
    std::string quoted = "'";
    for (char c : word) {
        if (c == '\'') quoted += "'\\''";
        else quoted += c;
    }
    return quoted + "'";
}

std::string shell_join(std::span<const std::string> words) {
    std::string line;
    for (const std::string& word : words) {
        if (!line.empty()) line += ' ';
        line += shell_quote(word);
    }
    return line;
}

bool no_color_set() {
    const char* no_color = std::getenv("NO_COLOR");
    return no_color && *no_color;
}

bool color_wanted(int fd) { return ::isatty(fd) == 1 && !no_color_set(); }

}  // namespace max_rss
