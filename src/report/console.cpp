#include <max_rss/report/console.hpp>
#include <max_rss/report/labels.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/report/words.hpp>
#include <max_rss/util/size.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <utility>
#include <vector>
#include <cstring>

namespace max_rss {

std::string short_command(const Program* program, size_t max_chars) {
    return truncate_to_width(command_line(program), max_chars);
}


namespace {

constexpr size_t kNamedAtPeak = 3;  // processes named at the peak; the rest in one line
constexpr size_t kTopPerSnapshot = 8;  // what SnapshotSum keeps of each snapshot by default

// The largest snapshot of the live tree, or null without one.
const TimelinePoint* peak_point(const RunResult& r) {
    const TimelinePoint* best = nullptr;
    for (const auto& pt : r.timeline.points)
        if (!best || pt.total_bytes > best->total_bytes) best = &pt;
    return best && best->total_bytes > 0 ? best : nullptr;
}

// What was alive at the tree peak: the largest contributors of the largest
// snapshot, each with its share, then the rest in one line.
std::string at_the_peak(const RunResult& r) {
    const TimelinePoint* pt = peak_point(r);
    if (!pt || r.processes.size() < 2) return {};
    std::vector<std::pair<const Process*, uint64_t>> named;
    for (const auto& [index, bytes] : pt->top)
        if (index < r.processes.size()) named.emplace_back(&r.processes[index], bytes);
    std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<const Program*> programs;
    for (const auto& p : r.processes) programs.push_back(main_program(p));
    const ProgramLabels labels(programs);

    // A snapshot below the headline (the largest process's own peak, which
    // no snapshot caught) would name the wrong moment: the largest process
    // line says it.
    if (pt->total_bytes != r.peak.tree_bytes) return {};
    // A backend that keeps only the tree's total (eBPF: summed in the
    // kernel) names the moment, not who held what then: a split would show
    // all of it as shared pages.
    if (pt->top.empty())
        return fmt::format("  {:<17}{:>10}  at {:.3f} s\n", "at the peak:", format_bytes(pt->total_bytes),
                           static_cast<double>(pt->t_ns) / 1e9);
    const double total = static_cast<double>(pt->total_bytes);
    std::string out = fmt::format("  {:<17}{:>10}  at {:.3f} s, of which:\n", "at the peak:",
                                  format_bytes(pt->total_bytes), static_cast<double>(pt->t_ns) / 1e9);
    auto line = [&](std::string_view what, uint64_t bytes) {
        out += fmt::format("  {:<17}{:>10}  {:>3.0f}% {}\n", "", format_bytes(bytes),
                           100.0 * static_cast<double>(bytes) / total, what);
    };
    uint64_t rest = pt->total_bytes;
    size_t others = 0;
    uint64_t others_bytes = 0;
    for (size_t i = 0; i < named.size(); ++i) {
        const auto& [p, bytes] = named[i];
        rest = rest > bytes ? rest - bytes : 0;
        if (i >= kNamedAtPeak) {
            ++others;
            others_bytes += bytes;
            continue;
        }
        line(fmt::format("pid {} {}", p->pid, labels.label(main_program(*p), 40)), bytes);
    }
    if (others) line(fmt::format("{} other process{}", others, others == 1 ? "" : "es"), others_bytes);
    // A snapshot names its largest contributors only; a full list may have
    // left smaller ones out.
    if (rest)
        line(pt->top.size() >= kTopPerSnapshot ? "shared pages (counted once) and smaller processes"
                                               : "shared pages: libraries and program files, counted once",
             rest);
    return out;
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
        line("at most:", format_bytes(*r.peak.upper_bound_bytes), describe_inexact(r.peak.inexact_reason, r.backend));
    out += at_the_peak(r);
    if (largest) {
        // Name the image that had the peak, not just the last one.
        const Image* top = nullptr;
        for (const auto& img : largest->images)
            if (!top || img.peak_rss_bytes > top->peak_rss_bytes) top = &img;
        line("largest process:", format_bytes(largest->peak_rss_bytes),
             fmt::format("pid {} {}", largest->pid, short_command(top ? top->program.get() : nullptr)));
    }
    // wait4 of the root covers the root and every descendant it waited for
    // (each reaped child passes its own maximum up): one process, the largest.
    if (r.ru_maxrss_bytes)
        line("ru_maxrss:", format_bytes(*r.ru_maxrss_bytes),
             "what GNU time and hyperfine report: the largest single process waited for");
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
