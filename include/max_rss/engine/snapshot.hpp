// What the live tree holds at one moment (a snapshot). Pure: the engine's
// Recorder decides when to take one and reads the values.
//
// A snapshot counts every resident page once:
//   total = the anonymous pages of the tree, each counted once
//         + the file-backed/shmem pages of the tree, each counted once: the
//           union of every process's set, by file and page (file_pages.hpp),
//           read when it could lift the snapshot above the best so far;
//           else bounds: at least the largest one process holds, at most
//           every process's in full
// A process that shares no anonymous page with a live relative (it exec'd, or
// every process it forked from or forked itself has exec'd or ended) owns its
// anonymous pages alone: statm's resident - shared is exact (~6 us a read, no
// mmap lock). Processes that forked without exec'ing (a fork family) share
// their pages copy-on-write, which statm cannot see: for them statm gives
// bounds, and smaps_rollup's Pss_Anon, summed over the family, the exact count
// (each page's PSS is divided among the processes that map it).
// vfork/CLONE_VM children own nothing: their memory is their creator's mm.
// See docs/how-it-works.md for the method and its guarantees.
#pragma once

#include <max_rss/model.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace max_rss {

using StatmSample = procfs::Statm;

// Processes with the same family share copy-on-write anonymous pages: a fork
// child joins its creator's family, an exec starts a family of its own.
inline constexpr uint32_t kNoFamily = UINT32_MAX;

// How one live process counts toward the tree.
struct SampledProcess {
    uint32_t index = 0;                 // into RunResult::processes
    ImageOrigin origin = ImageOrigin::Exec;
    StatmSample inherited;              // Fork: statm at its first stop
    uint32_t family = kNoFamily;        // kNoFamily: owns nothing (SharedMm, or not started yet)
    // Fork: its creator was gone before its fork was reported (SIGKILLed in
    // the middle of fork), so which live processes share its inherited pages
    // is unknown. Only what it grew after its fork is surely its own: it
    // counts by bounds (that growth, up to all its anonymous pages), never
    // as exact.
    bool sharers_unknown = false;
};

// resident - shared: the anonymous pages statm sees (the process's own when
// no live relative shares them).
uint64_t anon_bytes(const StatmSample& s);

struct ByteBounds {
    uint64_t lower_bytes = 0;
    uint64_t upper_bytes = 0;
};

// One fork family with two or more live members, streamed one member at a
// time (O(1) memory whatever its size). From statm alone, bounds on its
// distinct anonymous pages:
//  upper: every member's anonymous pages in full (shared pages many times);
//  lower: the larger of the largest member's pages, and the family's exec'd
//         head (if alive) plus what each forked member grew beyond what it
//         inherited (pages made after a fork are new; copy-on-write copies
//         and pages replacing inherited ones are not seen).
// With every member's smaps_rollup Pss_Anon added, the exact count.
class FamilyTally {
public:
    void add(const SampledProcess& how, const StatmSample& now);
    // A member's Pss_Anon (nullopt: could not be read, the family stays bounds).
    void add_pss_anon(std::optional<uint64_t> bytes);
    [[nodiscard]] ByteBounds bounds() const;
    [[nodiscard]] std::optional<uint64_t> exact_bytes() const;
    [[nodiscard]] uint64_t members() const { return members_; }

private:
    uint64_t members_ = 0;
    uint64_t sum_anon_bytes_ = 0;
    uint64_t largest_anon_bytes_ = 0;
    uint64_t head_and_growth_bytes_ = 0;
    uint64_t pss_members_ = 0;
    uint64_t pss_anon_bytes_ = 0;
    bool pss_failed_ = false;
    bool sharers_unknown_ = false;  // a member's pages may be shared outside the family
};

// What a member adds by the lower bound: a head its pages, a forked member
// what it grew beyond what it inherited.
uint64_t member_lower_bytes(const SampledProcess& how, const StatmSample& now);

// One member, for tests and small callers.
struct FamilyMember {
    SampledProcess how;
    StatmSample statm;
    std::optional<uint64_t> pss_anon_bytes;  // smaps_rollup, when it was read
};
ByteBounds family_bounds(std::span<const FamilyMember> members);

// The tree's total at one moment: exact when every family's sharing was
// resolved (lower == upper), else bounds.
struct SnapshotTotal {
    uint64_t total_bytes = 0;  // exact, or the lower bound
    uint64_t upper_bytes = 0;  // == total_bytes when exact
    std::vector<std::pair<uint32_t, uint64_t>> top;  // largest contributors, at most top_n
    bool file_pages_exact = true;  // the file/shmem part is exact (else bounds)
    uint64_t file_pages_lower_bytes = 0;  // that part's bounds, within total_bytes and upper_bytes
    uint64_t file_pages_upper_bytes = 0;
    [[nodiscard]] bool exact() const { return upper_bytes <= total_bytes; }
};

// The sum, one process or one family at a time, in O(top_n) memory: a
// snapshot of 10,000 live processes must not need arrays of 10,000 entries
// beside the family members it resolves.
class SnapshotSum {
public:
    explicit SnapshotSum(size_t top_n = 8) : top_n_(top_n) {}
    // A process sharing no anonymous page with a live relative (or owning
    // nothing: SharedMm; or whose sharers are unknown: by bounds).
    void add_alone(const SampledProcess& process, const StatmSample& sample);
    // A fork family member's file-backed/shmem part (its anonymous part comes
    // with its family's tally).
    void add_member_shared(const SampledProcess& process, const StatmSample& sample);
    // A whole fork family: exact when resolved, else its bounds.
    void add_family(const FamilyTally& family);
    // A whole fork family at once (members' shared parts, tally, contributors).
    void add_family(std::span<const FamilyMember> members);
    // A process's part, for the largest contributors.
    void add_contributor(uint32_t index, uint64_t bytes);
    // The upper bound of the total if families adding families_upper_bytes
    // were added unresolved (their shared parts already added).
    [[nodiscard]] uint64_t upper_with(uint64_t families_upper_bytes) const {
        return upper_total_bytes_ + families_upper_bytes + shared_upper_bytes();
    }
    // The file-backed/shmem pages of every process added, each counted once
    // (the union of their sets).
    void set_shared_union(uint64_t bytes) { shared_union_bytes_ = bytes; }
    // Whether the file-backed/shmem part is exact: its union was read, or at
    // most one process holds such pages (the largest set is then all of them).
    [[nodiscard]] bool shared_resolved() const {
        return shared_union_bytes_.has_value() || sum_shared_bytes_ <= largest_shared_bytes_;
    }
    SnapshotTotal finish() &&;  // top sorted largest first

private:
    size_t top_n_;
    uint64_t lower_total_bytes_ = 0;
    uint64_t upper_total_bytes_ = 0;
    uint64_t largest_shared_bytes_ = 0;
    uint64_t sum_shared_bytes_ = 0;
    std::optional<uint64_t> shared_union_bytes_;
    [[nodiscard]] uint64_t shared_lower_bytes() const {
        return std::max(largest_shared_bytes_, shared_union_bytes_.value_or(0));
    }
    [[nodiscard]] uint64_t shared_upper_bytes() const {
        return shared_union_bytes_ ? shared_lower_bytes() : sum_shared_bytes_;
    }
    std::vector<std::pair<uint32_t, uint64_t>> top_;  // a min-heap on bytes, at most top_n
};

// Keeps at most max_points: when full, neighbouring pairs merge into the one
// with the larger total, so the peaks survive however long the run (pure).
void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points);

}  // namespace max_rss
