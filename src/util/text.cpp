#include <max_rss/util/text.hpp>

#include <fmt/format.h>

#include <sys/ioctl.h>
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

std::string truncate_to_width(std::string_view text, size_t max_columns) {
    if (display_width(text) <= max_columns) return std::string(text);
    if (max_columns == 0) return {};
    // Keep max_columns - 1 code points, then the ellipsis.
    size_t kept = 0, cut = 0;
    for (; cut < text.size(); ++cut) {
        if ((static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) continue;
        if (kept == max_columns - 1) break;
        ++kept;
    }
    // "a b…", not "a …": a space before the ellipsis reads as a gap.
    while (cut > 0 && text[cut - 1] == ' ') --cut;
    return std::string(text.substr(0, cut)) + "…";
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

std::optional<size_t> output_columns(int fd) {
    if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
        char* end = nullptr;
        const unsigned long value = std::strtoul(columns, &end, 10);
        if (*end == '\0' && value > 0 && value < 100000 && columns[0] != '-') return value;
    }
    winsize size{};
    if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return std::nullopt;
}

}  // namespace max_rss
