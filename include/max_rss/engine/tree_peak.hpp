// The tree-wide figures of a finished run (pure; unit-tested).
#pragma once

#include <max_rss/model.hpp>

#include <cstdint>
#include <deque>
#include <optional>

namespace max_rss {

// Derives the tree's peak figures from every process's record and the largest
// snapshot of the live tree, if any was taken: tree_bytes is the largest
// snapshot, never less than the largest single process's exact peak
// (PeakMethod::Snapshots); without snapshots it is the overlapping-image-peaks
// bound (PeakMethod::OverlappingImagePeaks).
TreePeak compute_tree_peak(const std::deque<Process>& processes,
                           std::optional<uint64_t> sampled_bytes = std::nullopt);

}  // namespace max_rss
