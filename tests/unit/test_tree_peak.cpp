#include <max_rss/engine/tree_peak.hpp>

#include <catch2/catch.hpp>

#include <random>
#include "units.hpp"

using namespace max_rss;

namespace {
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
    auto peak = compute_tree_peak(ps, {});
    CHECK(peak.overlapping_peaks_bytes == 201 * MiB);
    CHECK(peak.largest_process_bytes == 50 * MiB);
    CHECK(peak.sum_of_process_peaks_bytes == 201 * MiB);
}

TEST_CASE("tree peak: children one after another do not add up", "[tree_peak]") {
    std::deque<Process> ps{proc(1, {{1, 0, 100}})};
    for (int i = 0; i < 4; ++i) ps.push_back(proc(2 + i, {{50, 10 + 20 * i, 20 + 20 * i}}));
    auto peak = compute_tree_peak(ps, {});
    CHECK(peak.overlapping_peaks_bytes == 51 * MiB);
    CHECK(peak.sum_of_process_peaks_bytes == 201 * MiB);
}

TEST_CASE("tree peak: an exec'd image replaces the old one", "[tree_peak]") {
    // 200 MiB until t=50, then exec into a 10 MiB program: 200, not 210.
    auto peak = compute_tree_peak({proc(1, {{200, 0, 50}, {10, 50, 100}})}, {});
    CHECK(peak.overlapping_peaks_bytes == 200 * MiB);
    CHECK(peak.largest_pid == 1);
}

TEST_CASE("tree peak is never below the largest process", "[tree_peak]") {
    Process p = proc(7, {});
    p.peak_rss_bytes = 30 * MiB;  // measured, but no image lifetime
    auto peak = compute_tree_peak({p}, {});
    CHECK(peak.tree_bytes == 30 * MiB);
    CHECK(compute_tree_peak({}, {}).tree_bytes == 0);
}

TEST_CASE("tree peak: the sweep agrees with a brute-force sum over random lifetimes", "[tree_peak]") {
    // Images start out of creation order (exec'd images start later than
    // processes created after them), share start and end times, and some live
    // for no time at all. Brute force: at each image's start, the sum of the
    // peaks of every image alive then, [start, end): one that ended at that
    // moment is gone, one that lived no time never overlaps anything.
    std::mt19937 rng(12345);
    for (int round = 0; round < 200; ++round) {
        std::deque<Process> ps;
        std::uniform_int_distribution<int> count(1, 30), time(0, 40), len(0, 15), mib(0, 9), nimg(1, 3);
        const int n = count(rng);
        for (int i = 0; i < n; ++i) {
            std::vector<std::tuple<uint64_t, int64_t, int64_t>> images;
            int64_t t = time(rng);
            for (int k = nimg(rng); k > 0; --k) {
                const int64_t end = t + len(rng);
                images.emplace_back(mib(rng), t, end);
                t = end;
            }
            ps.push_back(proc(i + 1, images));
        }
        std::vector<const Image*> all;
        for (const auto& p : ps)
            for (const auto& img : p.images) all.push_back(&img);
        uint64_t expected = 0;
        for (const Image* k : all) {
            if (k->peak_rss_bytes == 0) continue;
            uint64_t sum = 0;
            for (const Image* i : all)
                if (i->start_ns <= k->start_ns && i->end_ns > k->start_ns) sum += i->peak_rss_bytes;
            expected = std::max(expected, sum);
        }
        const auto peak = compute_tree_peak(ps, {});
        INFO("round " << round);
        CHECK(peak.overlapping_peaks_bytes == std::max(expected, peak.largest_process_bytes));
    }
}

TEST_CASE("tree peak: every release point measured exactly is the peak itself", "[tree_peak]") {
    std::deque<Process> ps{proc(1, {{100, 0, 100}}), proc(2, {{100, 10, 90}})};
    SnapshotTally tally;
    tally.best_bytes = 150 * MiB;  // what the tree held at once
    tally.release_points = 12;
    auto peak = compute_tree_peak(ps, tally);
    CHECK(peak.method == PeakMethod::Exact);
    CHECK(peak.tree_bytes == 150 * MiB);
    CHECK_FALSE(peak.upper_bound_bytes);
    CHECK(peak.overlapping_peaks_bytes == 200 * MiB);  // the loose bound beside it
    // Never below one process's own measured peak.
    tally.best_bytes = 80 * MiB;
    CHECK(compute_tree_peak(ps, tally).tree_bytes == 100 * MiB);
}

TEST_CASE("tree peak: a bound is never the headline, and says which bound it is", "[tree_peak]") {
    std::deque<Process> ps{proc(1, {{100, 0, 100}}), proc(2, {{100, 10, 90}})};
    SnapshotTally tally;
    tally.best_bytes = 150 * MiB;
    // The headline stays the best snapshot; the overlapping high-water marks
    // (200 MiB) bound it from above.
    const auto check_overlap_bound = [&](InexactReason reason) {
        auto peak = compute_tree_peak(ps, tally);
        CHECK(peak.method == PeakMethod::LowerBound);
        CHECK(peak.inexact_reason == reason);
        CHECK(peak.tree_bytes == 150 * MiB);
        CHECK(peak.upper_bound_bytes == 200 * MiB);
    };
    SECTION("release points skipped: only the overlapping high-water marks bound it") {
        tally.release_points_skipped = 3;
        check_overlap_bound(InexactReason::SnapshotsSkipped);
    }
    SECTION("a process's exit not seen: the moment before its memory went was not measured") {
        tally.exits_unseen = 1;
        check_overlap_bound(InexactReason::ExitsUnseen);
    }
    SECTION("an image's memory fell where no stop was: bounded by the overlapping high-water marks") {
        tally.falls_unseen = 1;
        check_overlap_bound(InexactReason::FallsUnseen);
        // The high-water marks alive together cannot exceed the best: exact.
        tally.best_bytes = 200 * MiB;
        CHECK(compute_tree_peak(ps, tally).method == PeakMethod::Exact);
    }
    SECTION("no release points at all (no seccomp filter)") {
        tally.release_points_reported = false;
        auto peak = compute_tree_peak(ps, tally);
        CHECK(peak.inexact_reason == InexactReason::NoReleasePoints);
        CHECK(peak.upper_bound_bytes == 200 * MiB);
    }
    SECTION("a fork family unresolved above the best: its snapshot's upper bound") {
        tally.unresolved_upper_bytes = 170 * MiB;
        auto peak = compute_tree_peak(ps, tally);
        CHECK(peak.inexact_reason == InexactReason::FamiliesUnresolved);
        CHECK(peak.tree_bytes == 150 * MiB);
        CHECK(peak.upper_bound_bytes == 170 * MiB);
    }
    SECTION("processes never followed: a lower bound that nothing bounds from above") {
        tally.processes_untracked = true;
        tally.unresolved_upper_bytes = 170 * MiB;
        auto peak = compute_tree_peak(ps, tally);
        CHECK(peak.method == PeakMethod::LowerBound);
        CHECK(peak.inexact_reason == InexactReason::ProcessesUntracked);
        CHECK(peak.tree_bytes == 150 * MiB);
        CHECK_FALSE(peak.upper_bound_bytes.has_value());
    }
    SECTION("an unresolved family that could not reach the best leaves it exact") {
        tally.unresolved_upper_bytes = 140 * MiB;
        CHECK(compute_tree_peak(ps, tally).method == PeakMethod::Exact);
    }
}

TEST_CASE("tree peak: the upper bound counts each image's high-water mark, inherited pages included", "[tree_peak]") {
    // A forked child's own peak is what it added (0 here), but it held its
    // parent's 100 MiB too, and wrote them all: 200 MiB at once.
    std::deque<Process> ps{proc(1, {{100, 0, 100}}), proc(2, {{0, 10, 90}})};
    ps[1].images[0].origin = ImageOrigin::Fork;
    ps[1].images[0].hwm_bytes = 100 * MiB;
    auto peak = compute_tree_peak(ps, {});
    CHECK(peak.overlapping_peaks_bytes == 200 * MiB);
}
