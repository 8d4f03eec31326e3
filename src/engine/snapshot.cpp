#include <max_rss/engine/snapshot.hpp>

#include <algorithm>

namespace max_rss {
namespace {

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// What a forked member made after its fork: pages new to the family.
uint64_t growth_bytes(const FamilyMember& m) {
    return minus(anon_bytes(m.statm), anon_bytes(m.how.inherited));
}

bool resolved(std::span<const FamilyMember> members) {
    return std::all_of(members.begin(), members.end(), [](const FamilyMember& m) { return m.pss_anon_bytes.has_value(); });
}

}  // namespace

uint64_t anon_bytes(const StatmSample& s) { return minus(s.resident_bytes, s.shared_bytes); }

ByteBounds family_bounds(std::span<const FamilyMember> members) {
    ByteBounds b;
    uint64_t largest = 0, head_and_growth = 0;
    for (const FamilyMember& m : members) {
        const uint64_t anon = anon_bytes(m.statm);
        b.upper_bytes += anon;
        largest = std::max(largest, anon);
        head_and_growth += m.how.origin == ImageOrigin::Exec ? anon : growth_bytes(m);
    }
    b.lower_bytes = std::max(largest, head_and_growth);
    return b;
}

void SnapshotSum::add_top(uint32_t index, uint64_t bytes) {
    if (bytes == 0 || top_n_ == 0) return;
    auto smaller = [](const auto& a, const auto& b) { return a.second > b.second; };  // min-heap
    if (top_.size() < top_n_) {
        top_.emplace_back(index, bytes);
        std::push_heap(top_.begin(), top_.end(), smaller);
    } else if (bytes > top_.front().second) {
        std::pop_heap(top_.begin(), top_.end(), smaller);
        top_.back() = {index, bytes};
        std::push_heap(top_.begin(), top_.end(), smaller);
    }
}

void SnapshotSum::add_shared(const SampledProcess& process, const StatmSample& sample) {
    // File-backed and shmem pages are mostly the same pages in several
    // processes (libraries, MAP_SHARED): counted once, as the largest set.
    if (process.origin != ImageOrigin::SharedMm)
        largest_shared_bytes_ = std::max(largest_shared_bytes_, sample.shared_bytes);
}

void SnapshotSum::add_alone(const SampledProcess& process, const StatmSample& sample) {
    const uint64_t own = process.origin == ImageOrigin::SharedMm ? 0 : anon_bytes(sample);
    lower_total_bytes_ += own;
    upper_total_bytes_ += own;
    add_shared(process, sample);
    add_top(process.index, own);
}

void SnapshotSum::add_family(std::span<const FamilyMember> members) {
    for (const FamilyMember& m : members) add_shared(m.how, m.statm);
    if (resolved(members)) {
        for (const FamilyMember& m : members) {
            lower_total_bytes_ += *m.pss_anon_bytes;
            upper_total_bytes_ += *m.pss_anon_bytes;
            add_top(m.how.index, *m.pss_anon_bytes);
        }
        return;
    }
    const ByteBounds b = family_bounds(members);
    lower_total_bytes_ += b.lower_bytes;
    upper_total_bytes_ += b.upper_bytes;
    for (const FamilyMember& m : members)
        add_top(m.how.index, m.how.origin == ImageOrigin::Exec ? anon_bytes(m.statm) : growth_bytes(m));
}

uint64_t SnapshotSum::upper_with(std::span<const FamilyMember> members) const {
    uint64_t anon = 0, shared = largest_shared_bytes_;
    for (const FamilyMember& m : members) {
        anon += anon_bytes(m.statm);
        if (m.how.origin != ImageOrigin::SharedMm) shared = std::max(shared, m.statm.shared_bytes);
    }
    return upper_total_bytes_ + anon + shared;
}

SnapshotTotal SnapshotSum::finish() && {
    SnapshotTotal t;
    t.total_bytes = lower_total_bytes_ + largest_shared_bytes_;
    t.upper_bytes = upper_total_bytes_ + largest_shared_bytes_;
    std::sort(top_.begin(), top_.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    // One point per snapshot is kept: a vector of exactly its size.
    t.top.assign(top_.begin(), top_.end());
    return t;
}

void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points) {
    auto& pts = timeline.points;
    if (max_points >= 2 && pts.size() >= max_points) {
        // In place: a second array here would be a spike in max_rss's own memory.
        // (Never a self-move: a vector moved onto itself may end up empty.)
        size_t kept = 0;
        auto keep = [&](size_t from) {
            if (from != kept) pts[kept] = std::move(pts[from]);
            ++kept;
        };
        for (size_t i = 0; i + 1 < pts.size(); i += 2)
            keep(pts[i].total_bytes >= pts[i + 1].total_bytes ? i : i + 1);
        if (pts.size() % 2) keep(pts.size() - 1);
        pts.resize(kept);
    }
    pts.push_back(std::move(point));
}

}  // namespace max_rss
