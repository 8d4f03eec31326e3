#include <max_rss/engine/snapshot.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace max_rss;

namespace {
constexpr uint64_t MiB = 1 << 20;
SampledProcess proc(uint32_t index, ImageOrigin origin, StatmSample inherited = {}) {
    return SampledProcess{index, origin, inherited};
}
StatmSample statm(uint64_t resident_mib, uint64_t shared_mib) { return {resident_mib * MiB, shared_mib * MiB}; }
}  // namespace

TEST_CASE("private part of a process by how its image began", "[sampler]") {
    // exec'd: everything not file-backed or shmem
    CHECK(private_bytes(proc(0, ImageOrigin::Exec), statm(120, 20)) == 100 * MiB);
    // forked: only what it added beyond the unshared pages it inherited
    CHECK(private_bytes(proc(1, ImageOrigin::Fork, statm(300, 2)), statm(351, 3)) == 50 * MiB);
    CHECK(private_bytes(proc(1, ImageOrigin::Fork, statm(300, 2)), statm(100, 2)) == 0);
    // vfork / CLONE_VM: the mm is someone else's
    CHECK(private_bytes(proc(2, ImageOrigin::SharedMm), statm(300, 2)) == 0);
    // garbage-in stays sane
    CHECK(private_bytes(proc(0, ImageOrigin::Exec), statm(1, 5)) == 0);
}

TEST_CASE("a snapshot counts shared pages once", "[sampler]") {
    // A parent with 100 MiB MAP_SHARED and 4 forked children that read it all:
    // each has 102 MiB resident of which 101 is shmem and libraries, and its
    // 1 MiB of anonymous memory is the parent's, inherited copy-on-write.
    std::vector<std::pair<SampledProcess, StatmSample>> samples{
        {proc(0, ImageOrigin::Exec), statm(102, 101)}};
    for (uint32_t i = 1; i <= 4; ++i) samples.push_back({proc(i, ImageOrigin::Fork, statm(2, 1)), statm(102, 101)});
    auto t = sum_snapshot(samples);
    CHECK(t.total_bytes == 101 * MiB + 1 * MiB);  // the parent's 1 MiB anon + the shared set once
    REQUIRE(t.top.size() == 1);                     // children added nothing of their own
    CHECK(t.top[0] == std::pair<uint32_t, uint64_t>{0, 1 * MiB});
}

TEST_CASE("a snapshot sums private memory and keeps the largest contributors", "[sampler]") {
    std::vector<std::pair<SampledProcess, StatmSample>> samples;
    for (uint32_t i = 0; i < 12; ++i) samples.push_back({proc(i, ImageOrigin::Exec), statm(10 + i, 2)});
    auto t = sum_snapshot(samples, 3);
    uint64_t expected = 2 * MiB;
    for (uint32_t i = 0; i < 12; ++i) expected += (8 + i) * MiB;
    CHECK(t.total_bytes == expected);
    REQUIRE(t.top.size() == 3);
    CHECK(t.top[0].first == 11);
    CHECK(t.top[1].first == 10);
    CHECK(t.top[2].first == 9);
}

TEST_CASE("a snapshot's top contributors do not depend on the order processes come in", "[sampler]") {
    // The sum is streamed (a bounded heap, not a sorted copy of every live
    // process): check it against the order-free answer for several orders.
    std::vector<std::pair<SampledProcess, StatmSample>> samples;
    for (uint32_t i = 0; i < 50; ++i)
        samples.push_back({proc(i, ImageOrigin::Exec), statm(3 + (i * 37) % 50, 2)});  // private 1..50 MiB, distinct
    for (int order = 0; order < 3; ++order) {
        if (order == 1) std::reverse(samples.begin(), samples.end());
        if (order == 2) std::rotate(samples.begin(), samples.begin() + 17, samples.end());
        auto t = sum_snapshot(samples, 4);
        REQUIRE(t.top.size() == 4);
        for (uint64_t k = 0; k < 4; ++k) CHECK(t.top[k].second == (50 - k) * MiB);  // largest first
        CHECK(t.total_bytes == 2 * MiB + 1275 * MiB);                             // 2 shared + 1+2+...+50
        CHECK(sum_snapshot(samples, 0).top.empty());
        CHECK(sum_snapshot(samples, 0).total_bytes == t.total_bytes);
    }
}

TEST_CASE("the timeline stays bounded and keeps its peak", "[sampler]") {
    Timeline tl;
    for (int64_t i = 0; i < 100000; ++i) {
        uint64_t total = (i == 77777) ? 999 * MiB : static_cast<uint64_t>(i % 100) * MiB;
        // Each point's contributors name its own time: a merge must carry them along.
        append_bounded(tl, TimelinePoint{i, total, {{static_cast<uint32_t>(i), total}}}, 64);
        REQUIRE(tl.points.size() <= 64);
    }
    uint64_t best = 0;
    for (const auto& p : tl.points) best = std::max(best, p.total_bytes);
    CHECK(best == 999 * MiB);
    for (size_t i = 1; i < tl.points.size(); ++i) CHECK(tl.points[i - 1].t_ns < tl.points[i].t_ns);
    for (const auto& p : tl.points) {
        REQUIRE(p.top.size() == 1);
        CHECK(p.top[0].first == static_cast<uint32_t>(p.t_ns));
        CHECK(p.top[0].second == p.total_bytes);
    }
}

TEST_CASE("a private floor from smaps raises a process's part, never lowers it", "[sampler]") {
    SampledProcess p = proc(1, ImageOrigin::Fork, statm(100, 1));
    CHECK(private_bytes(p, statm(100, 1)) == 0);  // statm: nothing beyond what it inherited
    p.private_floor_bytes = 100 * MiB;             // smaps at exit: 100 MiB of copy-on-write copies
    CHECK(private_bytes(p, statm(100, 1)) == 100 * MiB);
    p.private_floor_bytes = 1 * MiB;
    CHECK(private_bytes(p, statm(150, 1)) == 50 * MiB);
}
