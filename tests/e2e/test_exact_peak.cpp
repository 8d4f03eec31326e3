// The exact tree peak (issue 13): trees whose peak lasts an instant, or lives
// in copy-on-write copies, read within 3% of the memory cgroup's own peak, on
// every run, with periodic snapshots and without them. The fixture
// (peak_shapes) takes its steps in a fixed order through pipes, so the
// figures do not depend on the machine's speed.
#include "helpers.hpp"

#include <max_rss/engine/measure.hpp>

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string_view>

using namespace max_rss;
using namespace max_rss::test;

namespace {

RunResult measure_shape(const char* shape, int64_t interval_ns, bool use_cgroup) {
    MeasureOptions options;
    options.argv = {fixture("peak_shapes"), shape, "100"};
    options.sample_interval_ns = interval_ns;
    options.use_cgroup = use_cgroup;
    return measure(options);
}

}  // namespace

TEST_CASE("exact tree peak: instant overlaps and copy-on-write copies, within 3% of the cgroup's peak",
          "[tracer][exact]") {
    for (const int64_t interval_ns : {int64_t{20'000'000}, int64_t{0}}) {
        for (const PeakShape& shape : kPeakShapes) {
            const RunResult r = measure_shape(shape.name, interval_ns, true);
            INFO(shape.name << " at --interval " << interval_ns / 1'000'000 << "ms: tree "
                            << mib(r.peak.tree_bytes) << " MiB, truth " << shape.true_mib << " MiB + baseline");
            CHECK(r.exit.code == 0);
            // unshare's ~50 release points each read five members' page
            // tables (~150 MiB each): on this VM in its slow state that went
            // over the snapshots' CPU budget in every run (see the test
            // below). Its figure is still checked; every other shape is exact.
            if (std::string_view(shape.name) == "unshare" && r.peak.method != PeakMethod::Exact) {
                CHECK(r.peak.inexact_reason == InexactReason::SnapshotsSkipped);
                WARN("unshare: snapshots over budget (" << r.peak.release_points_skipped << " skipped)");
            } else {
                CHECK(r.peak.method == PeakMethod::Exact);
                CHECK_FALSE(r.peak.upper_bound_bytes);
            }
            // The fixture's own pages, plus its baseline (libc, stack: ~1-2 MiB).
            CHECK(mib(r.peak.tree_bytes) >= shape.true_mib);
            CHECK(mib(r.peak.tree_bytes) <= shape.true_mib + 3);
            if (r.peak.cgroup_bytes) {
                const double cgroup_mib = mib(*r.peak.cgroup_bytes);
                INFO("cgroup peak " << cgroup_mib << " MiB");
                CHECK(mib(r.peak.tree_bytes) >= cgroup_mib * 0.97);
                CHECK(mib(r.peak.tree_bytes) <= cgroup_mib * 1.03);
            } else {
                WARN("no memory cgroup here: checked against the fixture's known peak only");
            }
        }
    }
}

TEST_CASE("exact tree peak: the same figure on every run", "[tracer][exact]") {
    // Five runs of the shape that sampling got wrong by 1.5 MiB from run to run.
    double lo = 1e9, hi = 0;
    for (int i = 0; i < 5; ++i) {
        const double tree = mib(measure_shape("spike", 20'000'000, false).peak.tree_bytes);
        lo = std::min(lo, tree);
        hi = std::max(hi, tree);
    }
    INFO("spike 100: " << lo << " to " << hi << " MiB");
    CHECK(hi - lo <= 0.5);
}

TEST_CASE("exact tree peak: memory that falls where ptrace does not stop is never reported as an exact peak",
          "[tracer][exact]") {
    // fixed_zero, otrunc: the parent's 100 MiB goes by mmap(MAP_FIXED) of
    // /dev/zero, or by open(O_TRUNC) of the /dev/shm file it maps, while its
    // child holds 20: calls the seccomp filter lets through (how-it-works.md
    // says why). The moment before was not measured, and the parent's VmHWM
    // at its exit shows it: the peak is a lower bound whose upper bound holds
    // the truth. Before, both read ~101 MiB labelled exact (true: 120 +
    // baseline), unless a timer snapshot happened to land on the moment.
    // read_then_fall: the same fall, after a release point of the child's
    // read the parent at its height, so its VmHWM shows nothing more; the
    // next reading, lower with no release of the parent's between, does.
    // Before, 102.2 MiB labelled exact in 3 runs of 3. Its upper bound (the
    // overlapping high-water marks) also counts the child's 1 MiB, freed
    // before it touched its 20.
    struct Shape {
        const char* name;
        double max_upper_mib;
    };
    for (const Shape& shape_bound : {Shape{"fixed_zero", 126}, Shape{"otrunc", 126}, Shape{"read_then_fall", 130}}) {
        const char* shape = shape_bound.name;
        for (const int64_t interval_ns : {int64_t{20'000'000}, int64_t{0}}) {
            const RunResult r = measure_shape(shape, interval_ns, false);
            INFO(shape << " at --interval " << interval_ns / 1'000'000 << "ms: tree " << mib(r.peak.tree_bytes)
                       << " MiB, truth 120 MiB + baseline");
            CHECK(r.exit.code == 0);
            CHECK(mib(r.peak.tree_bytes) <= 123);
            if (r.peak.method == PeakMethod::Exact) {
                // A timer snapshot read the parent at its height.
                CHECK(mib(r.peak.tree_bytes) >= 120);
                continue;
            }
            CHECK(r.peak.inexact_reason == InexactReason::FallsUnseen);
            REQUIRE(r.peak.upper_bound_bytes);
            INFO("upper bound " << mib(*r.peak.upper_bound_bytes) << " MiB");
            CHECK(mib(*r.peak.upper_bound_bytes) >= 120);
            CHECK(mib(*r.peak.upper_bound_bytes) <= shape_bound.max_upper_mib);
        }
    }
}

TEST_CASE("exact tree peak: memory freed while the tree is one process is not a fall unseen", "[tracer][exact]") {
    // A launcher that frees ~24 MiB before any fork (no release filter yet:
    // its VmHWM is the tree's peak then), then execs a program whose six
    // children hold 10 MiB each at once. The freed memory is in the
    // launcher's VmHWM, which no snapshot read, and the overlapping
    // high-water marks (each child's libraries counted again) are ~3.5 MiB
    // above the peak: a review found it labelled falls-unseen (61.4 MiB, at
    // most 64.9, in 2 runs of 2).
    MeasureOptions options;
    options.argv = {"/bin/bash", "-c",
                    "printf -v x '%*s' 12000000 ''; unset x; exec " + fixture("children_touch") + " concurrent 6 10"};
    for (int i = 0; i < 2; ++i) {
        const RunResult r = measure(options);
        INFO("run " << i << ": tree " << mib(r.peak.tree_bytes) << " MiB, truth 60 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(r.peak.method == PeakMethod::Exact);
        CHECK(mib(r.peak.tree_bytes) >= 60);
        CHECK(mib(r.peak.tree_bytes) <= 64);
    }
}

TEST_CASE("exact tree peak: siblings unmapping the pages they share, all at once, never read high",
          "[tracer][exact]") {
    // Four forked children share 100 MiB and hold 50 MiB each, then unmap at
    // once, four rounds a run. A family read while one of them was still
    // unmapping counted the shared pages up to 1.26 times: before the fix,
    // 5 runs in 20 read 311-320 MiB for 301 (labelled exact).
    //
    // Every run must read right. A run may be a lower bound only because its
    // snapshots went over max_rss's CPU budget (snapshots-skipped): the
    // AddressSanitizer build of max_rss, whose own work costs 2-3 times more
    // against the same uninstrumented fixture, did so in ~1 run of 12 here
    // (301.4 MiB, 5 of 54 release points skipped). On this VM in its slow
    // state (a statm read 38 us, a 100 MiB smaps_rollup 5.2 ms, ~3 times its
    // usual), every run of the plain build did so too (4-16 of ~54 skipped),
    // the session's first binary as well: the budget's fixed allowance does
    // not grow with the machine's slowness. So some run must be exact, not
    // most: a family read that breaks shows as families-unresolved above.
    int exact_runs = 0;
    for (int i = 0; i < 10; ++i) {
        const RunResult r = measure_shape("unshare", 20'000'000, false);
        INFO("run " << i << ": tree " << mib(r.peak.tree_bytes) << " MiB ("
                    << (r.peak.method == PeakMethod::Exact ? "exact" : "not exact")
                    << "), truth 300 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(mib(r.peak.tree_bytes) >= 300);
        CHECK(mib(r.peak.tree_bytes) <= 303);
        if (r.peak.method == PeakMethod::Exact) ++exact_runs;
        else CHECK(r.peak.inexact_reason == InexactReason::SnapshotsSkipped);
    }
    WARN(exact_runs << " of 10 runs exact");
    CHECK(exact_runs >= 1);
}

TEST_CASE("exact tree peak: a child whose creator is SIGKILLed in the middle of fork is not counted twice",
          "[tracer][exact]") {
    // forkers: three forked children fork in a loop while sharing the
    // parent's 20 MiB, and are SIGKILLed at once (4 rounds). A grandchild made
    // by a fork whose event never came was counted as a family of its own:
    // the 20 MiB twice. Before the fix, 8 runs in 10 read 41-61 MiB for 31
    // (labelled exact). 20 MiB keeps the family reads inside their budget.
    MeasureOptions options;
    options.argv = {fixture("peak_shapes"), "forkers", "20"};
    for (int i = 0; i < 6; ++i) {
        const RunResult r = measure(options);
        INFO("run " << i << ": tree " << mib(r.peak.tree_bytes) << " MiB ("
                    << (r.peak.method == PeakMethod::Exact ? "exact" : "not exact")
                    << "), truth 30 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(mib(r.peak.tree_bytes) <= 33);
        // Not exact, the run says why, and is a lower bound: a forker
        // SIGKILLed while stopped may skip its exit stop (exits-unseen); on a
        // busy machine a forker may be reaped before its last child is seen
        // (who shares that child's pages is unknown), or fork during each of
        // three reads of the family (families-unresolved).
        if (r.peak.method == PeakMethod::Exact) CHECK(mib(r.peak.tree_bytes) >= 30);
        else CHECK((r.peak.inexact_reason == InexactReason::ExitsUnseen ||
                    r.peak.inexact_reason == InexactReason::FamiliesUnresolved));
    }
}

TEST_CASE("exact tree peak: a fork in a family that is not reported yet when the family is read",
          "[tracer][exact]") {
    // forking: the tree is read at one child's munmap while its sibling
    // forks. The new child divides the family's pages among one more process
    // before max_rss hears of it: read without it, the family's Pss_Anon sums
    // low. Before the fix, 26 runs in 30 read 126-135 MiB for 151 (labelled
    // exact). --interval 0: the release points alone.
    for (int i = 0; i < 8; ++i) {
        const RunResult r = measure_shape("forking", 0, false);
        INFO("run " << i << ": tree " << mib(r.peak.tree_bytes) << " MiB, truth 150 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(r.peak.method == PeakMethod::Exact);
        CHECK(mib(r.peak.tree_bytes) >= 150);
        CHECK(mib(r.peak.tree_bytes) <= 153);
    }
}

TEST_CASE("exact tree peak: a one-process program is not stopped where its memory falls", "[tracer][exact]") {
    // While the tree is one process, its VmHWM is the tree's peak: the release
    // filter comes with the first fork, so churn's thousand munmaps cost no stop.
    const RunResult r = measure_shape("churn", 0, false);
    INFO("tree " << mib(r.peak.tree_bytes) << " MiB, " << r.peak.release_points << " release points");
    CHECK(r.exit.code == 0);
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(mib(r.peak.tree_bytes) >= 100);
    CHECK(mib(r.peak.tree_bytes) <= 103);
    CHECK(r.peak.release_points < 10);  // its exit (no thousand munmaps)
    CHECK(r.warnings.empty());
}

TEST_CASE("exact tree peak: `sh -c 'true | cat'` is what it held at once, not the sum of its peaks",
          "[tracer][exact]") {
    MeasureOptions options;
    options.argv = {"sh", "-c", "true | cat"};
    const RunResult r = measure(options);
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.release_points > 0);
    // Once the shell, true and cat: each maps libc; the libraries count once.
    CHECK(r.peak.tree_bytes < r.peak.sum_of_process_peaks_bytes);
    CHECK(r.peak.tree_bytes <= r.peak.overlapping_peaks_bytes);
    CHECK(r.peak.tree_bytes >= r.peak.largest_process_bytes);
}

TEST_CASE("exact tree peak: file and shared-memory pages that different processes touch count as their union",
          "[tracer][exact]") {
    // Two or four children each touch only their own part of a 100 MiB
    // shared mapping and hold it until all have: 100 MiB at once, where each
    // process maps 50 or 25 (the largest set, which max_rss counted before
    // 2026-11-28, labelled exact).
    for (const char* kind : {"shmem", "file"}) {
        for (const char* children : {"2", "4"}) {
            MeasureOptions options;
            options.argv = {fixture("shared_parts"), kind, "100", children};
            options.use_cgroup = true;
            const RunResult r = measure(options);
            INFO(kind << " in " << children << " parts: tree " << mib(r.peak.tree_bytes) << " MiB, truth 100 MiB + baseline");
            CHECK(r.exit.code == 0);
            CHECK(r.peak.method == PeakMethod::Exact);
            CHECK(mib(r.peak.tree_bytes) >= 100);
            CHECK(mib(r.peak.tree_bytes) <= 100 + 3);
            // The file's pages were in the page cache before the children
            // mapped them (charged at its write, in the cgroup too): only the
            // shmem case is checked against the cgroup.
            if (r.peak.cgroup_bytes && std::string_view(kind) == "shmem") {
                INFO("cgroup peak " << mib(*r.peak.cgroup_bytes) << " MiB");
                CHECK(mib(r.peak.tree_bytes) >= mib(*r.peak.cgroup_bytes) * 0.97);
                CHECK(mib(r.peak.tree_bytes) <= mib(*r.peak.cgroup_bytes) * 1.03);
            }
        }
    }
}
