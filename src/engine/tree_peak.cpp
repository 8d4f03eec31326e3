#include <max_rss/engine/tree_peak.hpp>

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace max_rss {

TreePeak compute_tree_peak(const std::deque<Process>& processes, std::optional<uint64_t> sampled_bytes) {
    TreePeak peak;
    // Sweep over image lifetimes: each image holds at most its own peak while
    // it lives, so the largest sum over images alive at the same moment bounds
    // the concurrent peak from above, and equals it when at most one image at a
    // time is near its peak. Images that ended before another started never add.
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
            if (img.peak_rss_bytes > 0 && img.end_ns > img.start_ns) by_start.push_back(&img);
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
        alive.emplace(img->end_ns, img->peak_rss_bytes);
        running += img->peak_rss_bytes;
        best = std::max(best, running);
    }
    peak.overlapping_peaks_bytes = std::max(best, peak.largest_process_bytes);
    peak.sampled_bytes = sampled_bytes;
    if (sampled_bytes) {
        // What the live tree held at once (snapshots, shared pages once), and
        // never less than one process's exact peak, which snapshots may miss.
        peak.tree_bytes = std::max(*sampled_bytes, peak.largest_process_bytes);
        peak.method = PeakMethod::Snapshots;
    } else {
        peak.tree_bytes = peak.overlapping_peaks_bytes;
        peak.method = PeakMethod::OverlappingImagePeaks;
    }
    return peak;
}

}  // namespace max_rss
