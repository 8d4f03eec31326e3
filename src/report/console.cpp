#include <max_rss/console.hpp>
#include <max_rss/size.hpp>

#include <fmt/format.h>

#include <csignal>
#include <cstring>

namespace max_rss {

std::string short_command(const Program* program, size_t max_chars) {
    if (!program || program->argv.empty()) return program && !program->exe.empty() ? program->exe : "?";
    std::string s;
    const std::string& argv0 = program->argv[0];
    size_t slash = argv0.rfind('/');
    s = slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
    for (size_t i = 1; i < program->argv.size() && s.size() <= max_chars; ++i) s += " " + program->argv[i];
    if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
    return s;
}

namespace {
std::string describe_exit(const ExitStatus& e) {
    if (e.code) return fmt::format("exit code {}", *e.code);
    if (e.signal) {
        const char* abbrev = sigabbrev_np(*e.signal);
        return fmt::format("killed by SIG{}{}", abbrev ? abbrev : std::to_string(*e.signal),
                           e.core_dumped ? " (core dumped)" : "");
    }
    return "exit unknown";
}
}  // namespace

std::string format_summary(const RunResult& r) {
    size_t images = 0;
    const Process* largest = nullptr;
    for (const auto& p : r.processes) {
        images += p.images.size();
        if (p.pid == r.peak.largest_pid && (!largest || p.peak_rss_bytes > largest->peak_rss_bytes)) largest = &p;
    }
    const size_t n = r.processes.size();
    std::string out;
    out += fmt::format("max_rss: {:<12} peak of the whole tree ({} process{}, {} image{})\n",
                       format_bytes(r.peak.tree_bytes), n, n == 1 ? "" : "es", images,
                       images == 1 ? "" : "s");
    if (largest) {
        const Program* prog = largest->images.empty() ? nullptr : largest->images.back().program.get();
        out += fmt::format("  largest: {:<12} pid {} {}\n", format_bytes(largest->peak_rss_bytes),
                           largest->pid, short_command(prog));
    }
    if (r.ru_maxrss_bytes) {
        out += fmt::format("  ru_maxrss: {:<10} what GNU time and hyperfine would report\n",
                           format_bytes(*r.ru_maxrss_bytes));
    }
    out += fmt::format("  wall: {:<13} {}\n", fmt::format("{:.3f} s", r.wall_seconds), describe_exit(r.exit));
    for (const auto& w : r.warnings) out += "  warning: " + w + "\n";
    return out;
}

}  // namespace max_rss
