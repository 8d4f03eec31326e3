#include <max_rss/engine/snapshot.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include "units.hpp"

using namespace max_rss;

namespace {
SampledProcess sampled(uint32_t index, ImageOrigin origin, StatmSample inherited = {}, uint32_t family = 0) {
    return SampledProcess{index, origin, inherited, family};
}
StatmSample statm(uint64_t resident_mib, uint64_t shared_mib) { return {resident_mib * MiB, shared_mib * MiB}; }
FamilyMember member(SampledProcess how, StatmSample now, std::optional<uint64_t> pss_anon_mib = std::nullopt) {
    FamilyMember m{how, now, std::nullopt};
    if (pss_anon_mib) m.pss_anon_bytes = *pss_anon_mib * MiB;
    return m;
}
SnapshotTotal sum_alone(const std::vector<std::pair<SampledProcess, StatmSample>>& samples, size_t top_n = 8) {
    SnapshotSum sum(top_n);
    for (const auto& [how, now] : samples) sum.add_alone(how, now);
    return std::move(sum).finish();
}
}  // namespace

TEST_CASE("a process alone owns its anonymous pages: resident - shared", "[sampler]") {
    CHECK(anon_bytes(statm(120, 20)) == 100 * MiB);
    CHECK(anon_bytes(statm(1, 5)) == 0);  // garbage-in stays sane
    // Whatever its origin: a forked child whose relatives are gone owns what it inherited.
    auto t = sum_alone({{sampled(0, ImageOrigin::Fork, statm(100, 1)), statm(150, 1)}});
    CHECK(t.total_bytes == 150 * MiB);
    CHECK(t.exact());
    // vfork / CLONE_VM: the mm is someone else's.
    CHECK(sum_alone({{sampled(2, ImageOrigin::SharedMm), statm(300, 2)}}).total_bytes == 0);
}

TEST_CASE("a forked process whose sharers are unknown counts by bounds", "[sampler]") {
    // Inherited 100 MiB (perhaps still another process's), grew 20 of its own.
    SampledProcess orphan = sampled(3, ImageOrigin::Fork, statm(101, 1));
    orphan.sharers_unknown = true;
    const SnapshotTotal t = sum_alone({{sampled(0, ImageOrigin::Exec), statm(101, 1)}, {orphan, statm(121, 1)}});
    // The root's 100 and the orphan's growth (surely distinct), 1 of libraries.
    CHECK(t.total_bytes == 121 * MiB);
    CHECK(t.upper_bytes == 222 * MiB);  // all of both, each one's libraries too (their union not read)
    CHECK_FALSE(t.exact());
    // In a family, Pss_Anon does not make it exact: pages may be mapped outside it.
    FamilyTally family;
    SampledProcess child = sampled(4, ImageOrigin::Fork, statm(121, 1), 3);
    orphan.family = 3;
    family.add(orphan, statm(121, 1));
    family.add(child, statm(121, 1));
    family.add_pss_anon(60 * MiB);
    family.add_pss_anon(60 * MiB);
    CHECK_FALSE(family.exact_bytes());
    CHECK(family.bounds().lower_bytes == 20 * MiB);  // the orphan's growth; the child grew nothing
    CHECK(family.bounds().upper_bytes == 240 * MiB);
}

TEST_CASE("a snapshot counts shared pages once", "[sampler]") {
    // A parent with 100 MiB MAP_SHARED and 4 exec'd children that map it all:
    // each has 102 MiB resident of which 101 is shmem and libraries.
    SnapshotSum sum;
    sum.add_alone(sampled(0, ImageOrigin::Exec), statm(102, 101));
    for (uint32_t i = 1; i <= 4; ++i) sum.add_alone(sampled(i, ImageOrigin::Exec), statm(102, 101));
    CHECK_FALSE(sum.shared_resolved());
    SECTION("until their union is read, bounds: the largest set, and every set in full") {
        CHECK(sum.upper_with(0) == 5 * MiB + 5 * 101 * MiB);
        auto t = std::move(sum).finish();
        CHECK(t.total_bytes == 101 * MiB + 5 * MiB);
        CHECK(t.upper_bytes == 5 * 101 * MiB + 5 * MiB);
        CHECK_FALSE(t.exact());
    }
    SECTION("their union, read: the same pages in all five, once") {
        sum.set_shared_union(101 * MiB);
        CHECK(sum.shared_resolved());
        auto t = std::move(sum).finish();
        CHECK(t.total_bytes == 101 * MiB + 5 * MiB);  // each one's 1 MiB anon + the shared set once
        CHECK(t.exact());
    }
    SECTION("each touched its own fifth of the buffer: the union is all of them") {
        SnapshotSum parts;
        for (uint32_t i = 0; i < 5; ++i) parts.add_alone(sampled(i, ImageOrigin::Exec), statm(22, 21));
        parts.set_shared_union(101 * MiB);  // 1 MiB of libraries + five distinct 20 MiB parts
        auto t = std::move(parts).finish();
        CHECK(t.total_bytes == 101 * MiB + 5 * MiB);  // not the largest set's 21
        CHECK(t.exact());
    }
}

TEST_CASE("one process holding file pages needs no union", "[sampler]") {
    SnapshotSum sum;
    sum.add_alone(sampled(0, ImageOrigin::Exec), statm(50, 30));
    sum.add_alone(sampled(1, ImageOrigin::Exec), statm(10, 0));
    sum.add_alone(sampled(2, ImageOrigin::SharedMm), statm(50, 30));  // its creator's memory
    CHECK(sum.shared_resolved());
    auto t = std::move(sum).finish();
    CHECK(t.total_bytes == 60 * MiB);
    CHECK(t.exact());
}

TEST_CASE("a fork family's bounds from statm bracket its distinct pages", "[sampler]") {
    const auto head = sampled(0, ImageOrigin::Exec);
    const auto child = sampled(1, ImageOrigin::Fork, statm(101, 1));  // inherited 100 MiB anon
    SECTION("the child wrote every inherited page: 200 MiB distinct, statm cannot tell") {
        const std::vector<FamilyMember> m{member(head, statm(101, 1)), member(child, statm(101, 1))};
        const ByteBounds b = family_bounds(m);
        CHECK(b.lower_bytes == 100 * MiB);
        CHECK(b.upper_bytes == 200 * MiB);
    }
    SECTION("the child grew 20 MiB of its own: pages made after the fork are new") {
        const std::vector<FamilyMember> m{member(head, statm(101, 1)), member(child, statm(121, 1))};
        const ByteBounds b = family_bounds(m);
        CHECK(b.lower_bytes == 120 * MiB);
        CHECK(b.upper_bytes == 220 * MiB);
    }
    SECTION("the head freed its copy: the child's pages are a floor") {
        const std::vector<FamilyMember> m{member(head, statm(1, 1)), member(child, statm(101, 1))};
        CHECK(family_bounds(m).lower_bytes == 100 * MiB);
    }
}

TEST_CASE("a fork family resolved by Pss_Anon is exact", "[sampler]") {
    SnapshotSum sum;
    sum.add_alone(sampled(9, ImageOrigin::Exec), statm(12, 2));  // 10 MiB alone, 2 MiB of libraries
    const std::vector<FamilyMember> m{member(sampled(0, ImageOrigin::Exec), statm(101, 1), 100),
                                      member(sampled(1, ImageOrigin::Fork, statm(101, 1)), statm(101, 1), 100)};
    CHECK(sum.upper_with(family_bounds(m).upper_bytes) == 10 * MiB + 200 * MiB + 2 * MiB);
    sum.add_family(m);
    sum.set_shared_union(2 * MiB);  // the members' libraries are the lone process's too
    auto t = std::move(sum).finish();
    CHECK(t.exact());
    CHECK(t.total_bytes == 10 * MiB + 200 * MiB + 2 * MiB);
    REQUIRE(t.top.size() == 3);
    CHECK(t.top[0].second == 100 * MiB);
    CHECK(t.top[2] == std::pair<uint32_t, uint64_t>{9, 10 * MiB});
}

TEST_CASE("a fork family left unresolved gives bounds, not a figure", "[sampler]") {
    SnapshotSum sum;
    // One member's Pss_Anon could not be read (it exited meanwhile): bounds.
    const std::vector<FamilyMember> m{member(sampled(0, ImageOrigin::Exec), statm(101, 1), 100),
                                      member(sampled(1, ImageOrigin::Fork, statm(101, 1)), statm(101, 1))};
    sum.add_family(m);
    auto t = std::move(sum).finish();
    CHECK_FALSE(t.exact());
    CHECK(t.total_bytes == 101 * MiB);
    CHECK(t.upper_bytes == 202 * MiB);  // both members' libraries too: their union was not read
}

TEST_CASE("a snapshot sums private memory and keeps the largest contributors", "[sampler]") {
    std::vector<std::pair<SampledProcess, StatmSample>> samples;
    for (uint32_t i = 0; i < 12; ++i) samples.push_back({sampled(i, ImageOrigin::Exec), statm(10 + i, 2)});
    auto t = sum_alone(samples, 3);
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
        samples.push_back({sampled(i, ImageOrigin::Exec), statm(3 + (i * 37) % 50, 2)});  // private 1..50 MiB, distinct
    for (int order = 0; order < 3; ++order) {
        if (order == 1) std::reverse(samples.begin(), samples.end());
        if (order == 2) std::rotate(samples.begin(), samples.begin() + 17, samples.end());
        auto t = sum_alone(samples, 4);
        REQUIRE(t.top.size() == 4);
        for (uint64_t k = 0; k < 4; ++k) CHECK(t.top[k].second == (50 - k) * MiB);  // largest first
        CHECK(t.total_bytes == 2 * MiB + 1275 * MiB);                             // 2 shared + 1+2+...+50
        CHECK(sum_alone(samples, 0).top.empty());
        CHECK(sum_alone(samples, 0).total_bytes == t.total_bytes);
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
