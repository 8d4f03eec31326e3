#include <max_rss/tracer.hpp>

#include <catch2/catch.hpp>

using namespace max_rss;

namespace {
constexpr uint64_t MiB = 1 << 20;
Process proc(pid_t pid, std::vector<std::tuple<uint64_t, int64_t, int64_t>> images) {
    Process p;
    p.pid = pid;
    for (auto [mib, start, end] : images) {
        Image img;
        img.peak_rss_bytes = mib * MiB;
        img.start_ns = start;
        img.end_ns = end;
        p.images.push_back(img);
        p.peak_rss_bytes = std::max(p.peak_rss_bytes, img.peak_rss_bytes);
    }
    return p;
}
}  // namespace

TEST_CASE("tree peak: children that overlap add up", "[tree_peak]") {
    std::deque<Process> ps{proc(1, {{1, 0, 100}})};
    for (int i = 0; i < 4; ++i) ps.push_back(proc(2 + i, {{50, 10, 90}}));
    auto peak = compute_tree_peak(ps);
    CHECK(peak.tree_bytes == 201 * MiB);
    CHECK(peak.largest_process_bytes == 50 * MiB);
    CHECK(peak.sum_of_process_peaks_bytes == 201 * MiB);
}

TEST_CASE("tree peak: children one after another do not add up", "[tree_peak]") {
    std::deque<Process> ps{proc(1, {{1, 0, 100}})};
    for (int i = 0; i < 4; ++i) ps.push_back(proc(2 + i, {{50, 10 + 20 * i, 20 + 20 * i}}));
    auto peak = compute_tree_peak(ps);
    CHECK(peak.tree_bytes == 51 * MiB);
    CHECK(peak.sum_of_process_peaks_bytes == 201 * MiB);
}

TEST_CASE("tree peak: an exec'd image replaces the old one", "[tree_peak]") {
    // 200 MiB until t=50, then exec into a 10 MiB program: 200, not 210.
    auto peak = compute_tree_peak({proc(1, {{200, 0, 50}, {10, 50, 100}})});
    CHECK(peak.tree_bytes == 200 * MiB);
    CHECK(peak.largest_pid == 1);
}

TEST_CASE("tree peak is never below the largest process", "[tree_peak]") {
    Process p = proc(7, {});
    p.peak_rss_bytes = 30 * MiB;  // measured, but no image lifetime
    auto peak = compute_tree_peak({p});
    CHECK(peak.tree_bytes == 30 * MiB);
    CHECK(compute_tree_peak({}).tree_bytes == 0);
}
