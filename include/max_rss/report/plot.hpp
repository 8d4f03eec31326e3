// The memory-over-time picture of a run, as a self-contained HTML page.
// Pure: RunResult in, bytes out. No I/O, no clock, no locale.
#pragma once

#include <max_rss/model.hpp>

#include <string>
#include <string_view>

namespace max_rss {

// A self-contained HTML page (inline CSS and SVG: no script, no external
// resource, works offline) titled with the command. It draws
// result.timeline as stacked areas over time (x: seconds, y: binary units
// chosen from the peak): one band for each of the up to 7 processes with the
// largest sampled peak, labelled with the command of its largest image and its
// pid, and one "other" band for the rest of each point's total_bytes. The
// sampled total is outlined, its highest point marked, and
// result.peak.tree_bytes drawn as a dashed line labelled
// "tree peak X MiB (method)". A legend and a caption give the figures (tree
// peak, ru_maxrss of the root, process count, sampling interval).
// With fewer than 2 timeline points it draws one bar per process of its
// peak_rss_bytes instead, with a note that the run was too short to sample.
// Every text taken from the run is escaped.
std::string render_plot_html(const RunResult& result);

}  // namespace max_rss
