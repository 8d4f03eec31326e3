#include <max_rss/engine/tree_peak.hpp>

#include <max_rss/engine/policy.hpp>

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace max_rss {
namespace {

// The most an image held at any moment of its life: its VmHWM (for a fork
// image, inherited pages included), else its own peak. A shared-mm image
// holds nothing of its own, unless its creator left the mm to it: then its
// peak is the mm's.
uint64_t held_at_most(const Image& img) {
    if (img.origin == ImageOrigin::SharedMm) return img.peak_rss_bytes;
    return std::max(img.hwm_bytes.value_or(0), img.peak_rss_bytes);
}

}  // namespace

TreePeak compute_tree_peak(const std::deque<Process>& processes, const SnapshotTally& tally) {
    TreePeak peak;
    // Sweep over image lifetimes: each image never holds more than its VmHWM
    // while it lives, so the largest sum over images alive at the same moment
    // bounds the tree's peak from above (loosely: libraries and inherited
    // pages count in every image). Images that ended before another started
    // never add.
    //
    // This runs once the whole tree's records are in memory, so it must add
    // little to max_rss's own peak: one pointer per image, sorted by start, and
    // a heap of the images alive at the moment (10,000 fork+exec children: 160
    // KB; docs/performance.md has what the alternatives cost).
    std::vector<const Image*> by_start;
    size_t images = 0;
    for (const auto& p : processes) images += p.images.size();
    by_start.reserve(images);  // exact: no doubling spike on 10,000-process trees
    for (const auto& p : processes) {
        peak.sum_of_process_peaks_bytes += p.peak_rss_bytes;
        if (p.peak_rss_bytes > peak.largest_process_bytes || peak.largest_pid == 0) {
            peak.largest_process_bytes = p.peak_rss_bytes;
            peak.largest_pid = p.pid;
        }
        // An image that lived no time at all never overlaps another (at equal
        // times an end comes before a start); largest_process_bytes covers it.
        for (const auto& img : p.images)
            if (held_at_most(img) > 0 && img.end_ns > img.start_ns) by_start.push_back(&img);
    }
    std::sort(by_start.begin(), by_start.end(),
              [](const Image* a, const Image* b) { return a->start_ns < b->start_ns; });
    using Alive = std::pair<int64_t, uint64_t>;  // (end_ns, peak_rss_bytes)
    std::priority_queue<Alive, std::vector<Alive>, std::greater<>> alive;
    uint64_t running = 0, best = 0;
    for (const Image* img : by_start) {
        // An image that ended when this one starts is gone: an exec's old
        // image is replaced by the new one, not added to it.
        while (!alive.empty() && alive.top().first <= img->start_ns) {
            running -= alive.top().second;
            alive.pop();
        }
        alive.emplace(img->end_ns, held_at_most(*img));
        running += held_at_most(*img);
        best = std::max(best, running);
    }
    peak.overlapping_peaks_bytes = std::max(best, peak.largest_process_bytes);
    peak.sampled_bytes = tally.best_bytes;
    peak.release_points = tally.release_points;
    peak.release_points_skipped = tally.release_points_skipped;
    // Snapshots miss no process's own peak only if they are exact: a
    // process's measured peak is a lower bound of the tree's in any case.
    peak.tree_bytes =
        std::max({tally.best_bytes.value_or(0), peak.largest_process_bytes, tally.reaped_max_rss_bytes});
    if (tally.processes_untracked) peak.inexact_reason = InexactReason::ProcessesUntracked;
    else if (!tally.release_points_reported || (!tally.best_bytes && !processes.empty()))
        peak.inexact_reason = InexactReason::NoReleasePoints;
    else if (tally.release_points_skipped > 0) peak.inexact_reason = InexactReason::SnapshotsSkipped;
    else if (tally.exits_unseen > 0) peak.inexact_reason = InexactReason::ExitsUnseen;
    // A fall unseen matters only if the tree could have held more then
    // (bounded by the high-water marks of the images alive together) by more
    // than the counters' imprecision.
    else if (tally.falls_unseen > 0 && peak.overlapping_peaks_bytes > peak.tree_bytes + policy::kHwmSlackBytes)
        peak.inexact_reason = InexactReason::FallsUnseen;
    else if (tally.unresolved_upper_bytes > peak.tree_bytes)
        peak.inexact_reason = tally.unresolved_by_file_pages && !tally.unresolved_by_families
                                  ? InexactReason::FilePagesUnresolved
                                  : InexactReason::FamiliesUnresolved;
    if (peak.inexact_reason == InexactReason::None) {
        peak.method = PeakMethod::Exact;
        return peak;
    }
    peak.method = PeakMethod::LowerBound;
    // Processes never followed, or found only by sampling: nothing bounds
    // what they held.
    if (peak.inexact_reason == InexactReason::ProcessesUntracked || tally.processes_sampled) return peak;
    // Unmeasured release points: only the overlapping-high-water-marks sum
    // bounds what the tree held there. Unresolved families only: the largest
    // of their snapshots' upper bounds.
    uint64_t upper = std::max(peak.tree_bytes, tally.unresolved_upper_bytes);
    if (peak.inexact_reason != InexactReason::FamiliesUnresolved &&
        peak.inexact_reason != InexactReason::FilePagesUnresolved)
        upper = std::max(upper, peak.overlapping_peaks_bytes);
    peak.upper_bound_bytes = upper;
    return peak;
}

}  // namespace max_rss
