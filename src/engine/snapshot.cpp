#include <max_rss/engine/snapshot.hpp>

#include <algorithm>

namespace max_rss {
namespace {

// The private part as statm shows it (no copy-on-write copies: see the header).
uint64_t private_from_statm(const SampledProcess& p, const StatmSample& s) {
    switch (p.origin) {
        case ImageOrigin::SharedMm: return 0;
        case ImageOrigin::Fork: {
            const uint64_t unshared = s.resident_bytes > s.shared_bytes ? s.resident_bytes - s.shared_bytes : 0;
            const uint64_t inherited = p.inherited.resident_bytes > p.inherited.shared_bytes
                                           ? p.inherited.resident_bytes - p.inherited.shared_bytes
                                           : 0;
            return unshared > inherited ? unshared - inherited : 0;
        }
        case ImageOrigin::Exec:
            return s.resident_bytes > s.shared_bytes ? s.resident_bytes - s.shared_bytes : 0;
    }
    return 0;
}

}  // namespace

uint64_t private_bytes(const SampledProcess& p, const StatmSample& s) {
    return std::max(p.private_floor_bytes, private_from_statm(p, s));
}

void SnapshotSum::add(const SampledProcess& process, const StatmSample& sample) {
    const uint64_t own = private_bytes(process, sample);
    private_total_bytes_ += own;
    // File-backed and shmem pages are mostly the same pages in several
    // processes (libraries, MAP_SHARED): counted once, as the largest set.
    if (process.origin != ImageOrigin::SharedMm)
        largest_shared_bytes_ = std::max(largest_shared_bytes_, sample.shared_bytes);
    if (own == 0 || top_n_ == 0) return;
    auto smaller = [](const auto& a, const auto& b) { return a.second > b.second; };  // min-heap
    if (top_.size() < top_n_) {
        top_.emplace_back(process.index, own);
        std::push_heap(top_.begin(), top_.end(), smaller);
    } else if (own > top_.front().second) {
        std::pop_heap(top_.begin(), top_.end(), smaller);
        top_.back() = {process.index, own};
        std::push_heap(top_.begin(), top_.end(), smaller);
    }
}

SnapshotTotal SnapshotSum::finish() && {
    SnapshotTotal t;
    t.total_bytes = private_total_bytes_ + largest_shared_bytes_;
    std::sort(top_.begin(), top_.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    // One point per snapshot is kept: a vector of exactly its size.
    t.top.assign(top_.begin(), top_.end());
    return t;
}

SnapshotTotal sum_snapshot(const std::vector<std::pair<SampledProcess, StatmSample>>& samples, size_t top_n) {
    SnapshotSum sum(top_n);
    for (const auto& [proc, statm] : samples) sum.add(proc, statm);
    return std::move(sum).finish();
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
