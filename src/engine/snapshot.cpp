#include <max_rss/engine/snapshot.hpp>

#include <algorithm>

namespace max_rss {
namespace {

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

uint64_t anon_bytes(const StatmSample& s) { return minus(s.resident_bytes, s.shared_bytes); }

uint64_t member_lower_bytes(const SampledProcess& how, const StatmSample& now) {
    if (how.origin == ImageOrigin::Exec) return anon_bytes(now);
    return minus(anon_bytes(now), anon_bytes(how.inherited));  // what it made after its fork
}

void FamilyTally::add(const SampledProcess& how, const StatmSample& now) {
    const uint64_t anon = anon_bytes(now);
    members_++;
    sum_anon_bytes_ += anon;
    largest_anon_bytes_ = std::max(largest_anon_bytes_, anon);
    head_and_growth_bytes_ += member_lower_bytes(how, now);
    sharers_unknown_ = sharers_unknown_ || how.sharers_unknown;
}

void FamilyTally::add_pss_anon(std::optional<uint64_t> bytes) {
    if (!bytes) {
        pss_failed_ = true;
        return;
    }
    pss_members_++;
    pss_anon_bytes_ += *bytes;
}

ByteBounds FamilyTally::bounds() const {
    // With a member whose pages may be another family's too, its largest
    // member may be pages counted elsewhere: only the growth is surely new.
    if (sharers_unknown_) return ByteBounds{head_and_growth_bytes_, sum_anon_bytes_};
    return ByteBounds{std::max(largest_anon_bytes_, head_and_growth_bytes_), sum_anon_bytes_};
}

std::optional<uint64_t> FamilyTally::exact_bytes() const {
    // Pss_Anon divides a page among all who map it: a family whose pages are
    // shared with processes outside it does not sum to its own pages.
    if (pss_failed_ || sharers_unknown_ || members_ == 0 || pss_members_ != members_) return std::nullopt;
    return pss_anon_bytes_;
}

ByteBounds family_bounds(std::span<const FamilyMember> members) {
    FamilyTally t;
    for (const FamilyMember& m : members) t.add(m.how, m.statm);
    return t.bounds();
}

void SnapshotSum::add_contributor(uint32_t index, uint64_t bytes) {
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

void SnapshotSum::add_member_shared(const SampledProcess& process, const StatmSample& sample) {
    // File-backed and shmem pages are mostly the same pages in several
    // processes (libraries, MAP_SHARED): at least the largest set, at most
    // all of them, exactly their union once it is read.
    if (process.origin == ImageOrigin::SharedMm) return;
    largest_shared_bytes_ = std::max(largest_shared_bytes_, sample.shared_bytes);
    sum_shared_bytes_ += sample.shared_bytes;
}

void SnapshotSum::add_alone(const SampledProcess& process, const StatmSample& sample) {
    const uint64_t own = process.origin == ImageOrigin::SharedMm ? 0 : anon_bytes(sample);
    if (process.sharers_unknown && process.origin == ImageOrigin::Fork) {
        const uint64_t surely_own = member_lower_bytes(process, sample);
        lower_total_bytes_ += surely_own;
        upper_total_bytes_ += own;
        add_member_shared(process, sample);
        add_contributor(process.index, surely_own);
        return;
    }
    lower_total_bytes_ += own;
    upper_total_bytes_ += own;
    add_member_shared(process, sample);
    add_contributor(process.index, own);
}

void SnapshotSum::add_family(const FamilyTally& family) {
    if (const auto exact = family.exact_bytes()) {
        lower_total_bytes_ += *exact;
        upper_total_bytes_ += *exact;
        return;
    }
    const ByteBounds b = family.bounds();
    lower_total_bytes_ += b.lower_bytes;
    upper_total_bytes_ += b.upper_bytes;
}

void SnapshotSum::add_family(std::span<const FamilyMember> members) {
    FamilyTally tally;
    for (const FamilyMember& m : members) {
        add_member_shared(m.how, m.statm);
        tally.add(m.how, m.statm);
    }
    for (const FamilyMember& m : members) tally.add_pss_anon(m.pss_anon_bytes);
    const bool exact = tally.exact_bytes().has_value();
    for (const FamilyMember& m : members)
        add_contributor(m.how.index, exact ? *m.pss_anon_bytes : member_lower_bytes(m.how, m.statm));
    add_family(tally);
}

SnapshotTotal SnapshotSum::finish() && {
    SnapshotTotal t;
    t.total_bytes = lower_total_bytes_ + shared_lower_bytes();
    t.upper_bytes = upper_total_bytes_ + shared_upper_bytes();
    t.file_pages_exact = shared_resolved();
    t.file_pages_lower_bytes = shared_lower_bytes();
    t.file_pages_upper_bytes = shared_upper_bytes();
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
