#include <max_rss/report/console.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/report/words.hpp>
#include <max_rss/util/size.hpp>

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


std::string format_summary(const RunResult& r) {
    size_t images = 0;
    const Process* largest = nullptr;
    for (const auto& p : r.processes) {
        images += p.images.size();
        if (p.pid == r.peak.largest_pid && (!largest || p.peak_rss_bytes > largest->peak_rss_bytes)) largest = &p;
    }
    const size_t n = r.processes.size();
    // A bound is never shown as the peak: "at least", and the line below says
    // how far the truth can be above it, and why.
    const bool bound = r.peak.method == PeakMethod::LowerBound;
    std::string out = fmt::format("max_rss: {}{} peak of the whole tree ({} process{}, {} image{}){}\n",
                                  bound ? "at least " : "", format_bytes(r.peak.tree_bytes), n, n == 1 ? "" : "es",
                                  images, images == 1 ? "" : "s",
                                  r.degraded ? " [degraded: sampled, not traced]" : "");
    auto line = [&out](std::string_view label, std::string_view value, std::string_view note) {
        out += fmt::format("  {:<17}{:>10}  {}\n", label, value, note);
    };
    if (bound && r.peak.upper_bound_bytes)
        line("at most:", format_bytes(*r.peak.upper_bound_bytes), describe_inexact(r.peak.inexact_reason));
    if (largest) {
        // Name the image that had the peak, not just the last one.
        const Image* top = nullptr;
        for (const auto& img : largest->images)
            if (!top || img.peak_rss_bytes > top->peak_rss_bytes) top = &img;
        line("largest process:", format_bytes(largest->peak_rss_bytes),
             fmt::format("pid {} {}", largest->pid, short_command(top ? top->program.get() : nullptr)));
    }
    if (r.ru_maxrss_bytes)
        line("ru_maxrss:", format_bytes(*r.ru_maxrss_bytes), "what GNU time and hyperfine report (root only)");
    if (r.peak.cgroup_bytes)
        line("cgroup peak:", format_bytes(*r.peak.cgroup_bytes), "includes page cache and kernel memory");
    line("wall time:", fmt::format("{:.3f} s", r.wall_seconds), describe_exit(r.exit));
    constexpr size_t kMaxWarnings = 5;
    for (size_t i = 0; i < r.warnings.size() && i < kMaxWarnings; ++i) out += "  warning: " + describe(r.warnings[i]) + "\n";
    if (r.warnings.size() > kMaxWarnings)
        out += fmt::format("  ({} more warnings in the JSON report)\n", r.warnings.size() - kMaxWarnings);
    return out;
}

}  // namespace max_rss
