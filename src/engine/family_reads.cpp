// How a snapshot counts the tree's fork families: by their bounds, or exactly
// from every member's smaps_rollup Pss_Anon, read whole (snapshot.hpp).
#include <max_rss/engine/policy.hpp>
#include <max_rss/engine/recorder.hpp>

#include <algorithm>

namespace max_rss {

const LiveProcess* Recorder::creator_owner(pid_t creator_pid) {
    const Process* creator = live_process(creator_pid);
    if (!creator) return nullptr;
    return table_.live(creator->shares_mm_with.value_or(creator_pid));
}

uint32_t Recorder::family_for_children(const LiveProcess& owner) {
    return owner.mm_released ? owner.family_at_release : owner.sampled.family;
}

void Recorder::add_families(SnapshotSum& sum, std::unordered_map<uint32_t, FamilyTally>& families) {
    uint64_t families_upper_bytes = 0;
    for (const auto& [id, family] : families) families_upper_bytes += family.bounds().upper_bytes;
    // Even counting every shared page in every member, this moment is not
    // above the best so far: nothing to resolve (the usual case between the
    // tree's peaks). Else Pss_Anon, summed over a family, counts each of its
    // pages exactly once.
    const bool could_be_peak = sum.upper_with(families_upper_bytes) > tally_.best_bytes.value_or(0);
    const bool resolve =
        could_be_peak && family_reads_settled_ && policy::snapshot_affordable(snapshot_spent_ns_, now_ns(), 0);
    const std::optional<FamilyReads> reads = resolve ? read_families(families) : std::nullopt;
    size_t member = 0;
    for (auto&& [pid, process] : table_.live_processes()) {
        if (process.mm_released) continue;
        auto it = families.find(process.sampled.family);
        if (it == families.end()) continue;
        if (!reads) {
            sum.add_contributor(process.sampled.index, process.family_lower_bytes);
            continue;
        }
        const uint64_t read = reads->members[member++];
        const std::optional<uint64_t> pss = read != FamilyReads::kNotRead ? std::optional(read) : std::nullopt;
        it->second.add_pss_anon(pss);
        sum.add_contributor(process.sampled.index, pss.value_or(process.family_lower_bytes));
    }
    if (reads) {
        // Not in the model yet: in their family's sum, not among the largest.
        for (const UnseenRead& child : reads->unseen) {
            FamilyTally& family = families.at(child.how.family);
            family.add(child.how, child.statm);
            family.add_pss_anon(child.pss_anon_bytes);
        }
    }
    for (const auto& [id, family] : families) sum.add_family(family);
}

std::optional<Recorder::FamilyReads> Recorder::read_families(
    const std::unordered_map<uint32_t, FamilyTally>& families) {
    // A child made in a family while it is read divides the family's pages
    // among one more process from then on: members read before count them at
    // a larger share than those read after, and the child is not read at all.
    // Such a read is done again (the child, stopped at its first stop, is
    // read with the others), a few times at most.
    constexpr int kAttempts = 3;
    constexpr size_t kMostChildrenRead = 64;
    const auto family_of = [&](const UnseenChild& child) {
        const LiveProcess* owner = creator_owner(child.creator);
        return owner ? family_for_children(*owner) : kNoFamily;
    };
    const auto in_families = [&](const UnseenChild& child) { return families.contains(family_of(child)); };
    unseen_.look(probe_, table_);  // those made since the last look
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        if (attempt > 0 && !policy::snapshot_affordable(snapshot_spent_ns_, now_ns(), 0)) break;
        unseen_.forget_settled(probe_, table_);
        // A child of a family's member that has not run yet maps the family's
        // pages too: its share is read with them. (A lone process's child adds
        // nothing: its creator's pages are counted in full.)
        // Thousands of them (a wide fork far ahead of the tracer): the family
        // keeps its bounds this time rather than a read of each, and a record
        // of each in max_rss's own memory. Given up at the first one too many,
        // before any more of them is looked at.
        std::vector<std::pair<pid_t, uint32_t>> to_read;  // pid, family
        // Reported, but not at its first stop yet: it joins its family there.
        for (auto&& [pid, process] : table_.live_processes()) {
            const TaskEntry* task = table_.task(pid);
            if (!task || !task->awaiting_first_stop || !families.contains(process.fork_family)) continue;
            if (to_read.size() == kMostChildrenRead) return std::nullopt;
            to_read.emplace_back(pid, process.fork_family);
        }
        // Not reported at all. A vfork or CLONE_VM child runs in its
        // creator's memory: counted there.
        for (const UnseenChild& child : unseen_.children()) {
            if (!in_families(child) || probe_.same_address_space(child.pid, child.creator).value_or(true)) continue;
            if (to_read.size() == kMostChildrenRead) return std::nullopt;
            to_read.emplace_back(child.pid, family_of(child));
        }
        const auto is_member = [&](const LiveProcess& process) {
            return !process.mm_released && families.contains(process.sampled.family);
        };
        // Sized by the snapshot's tallies: grown by doubling, the last copy of
        // 10,000 members held 64 and 128 KiB at once, a transient in
        // max_rss's own peak.
        FamilyReads reads;
        size_t member_count = 0;
        for (const auto& [id, family] : families) member_count += family.members();
        reads.members.reserve(member_count);
        for (auto&& [pid, process] : table_.live_processes()) {
            if (!is_member(process)) continue;
            const auto smaps = probe_.smaps_rollup(process.reader_tid);
            reads.members.push_back(smaps && smaps->pss_anon_bytes ? *smaps->pss_anon_bytes : FamilyReads::kNotRead);
        }
        for (const auto& [pid, family] : to_read) {
            const auto statm = probe_.statm(pid);
            const auto smaps = probe_.smaps_rollup(pid);
            if (!statm) continue;  // gone since
            SampledProcess how;
            how.origin = ImageOrigin::Fork;
            how.inherited = *statm;  // stopped before its first instruction: all of it inherited
            how.family = family;
            reads.unseen.push_back(UnseenRead{how, *statm, smaps ? smaps->pss_anon_bytes : std::nullopt});
        }
        // A fork that began while the family was read may still be copying
        // its creator's page tables (its pages already shared, its child
        // without a pid): once each member's copy is done, the look below
        // finds the child. 150 MiB read 141 for 151 once in ~100 runs on a
        // busy machine without this.
        for (auto&& [pid, process] : table_.live_processes())
            if (is_member(process)) probe_.wait_out_fork_copy(process.reader_tid);
        // Those found now were made while the family was read (or were
        // between their pid and their /proc entry when it began).
        const auto known_before = static_cast<std::ptrdiff_t>(unseen_.children().size());
        const std::optional<size_t> made = unseen_.look(probe_, table_);
        if (!made) return reads;  // no pid counter: as read
        if (unseen_.unsure()) unseen_.settle(probe_, table_);
        const auto& children = unseen_.children();
        if (std::none_of(children.begin() + known_before, children.end(), in_families)) return reads;
    }
    return std::nullopt;
}

}  // namespace max_rss
