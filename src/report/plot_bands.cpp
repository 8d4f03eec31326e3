#include <max_rss/report/plot_bands.hpp>

#include <algorithm>

namespace max_rss {

namespace {
// What SnapshotSum keeps per point by default: a point naming this many may
// have left smaller processes out.
constexpr size_t kTopPerPoint = 8;
}  // namespace

PlotBands plot_bands(const RunResult& r, size_t max_process_bands) {
    const auto& points = r.timeline.points;
    const size_t n_points = points.size();
    const size_t n_procs = r.processes.size();

    // Rank processes by the most any point gave them.
    std::vector<uint64_t> sampled_max(n_procs, 0);
    for (const auto& pt : points)
        for (const auto& [index, bytes] : pt.top)
            if (index < n_procs) sampled_max[index] = std::max(sampled_max[index], bytes);
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < n_procs; ++i)
        if (sampled_max[i] > 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        if (sampled_max[a] != sampled_max[b]) return sampled_max[a] > sampled_max[b];
        return r.processes[a].peak_rss_bytes > r.processes[b].peak_rss_bytes;
    });
    const size_t others = order.size() > max_process_bands ? order.size() - max_process_bands : 0;
    order.resize(order.size() - others);
    std::vector<int> band_of(n_procs, -1);

    PlotBands result;
    for (size_t b = 0; b < order.size(); ++b) {
        band_of[order[b]] = static_cast<int>(b);
        PlotBand band;
        band.process = order[b];
        band.bytes.assign(n_points, 0);
        result.bands.push_back(std::move(band));
    }
    PlotBand other{PlotBand::Kind::OtherProcesses, 0, others, std::vector<uint64_t>(n_points, 0)};
    PlotBand rest{PlotBand::Kind::Rest, 0, 0, std::vector<uint64_t>(n_points, 0)};
    for (size_t i = 0; i < n_points; ++i) {
        uint64_t named = 0;
        for (const auto& [index, bytes] : points[i].top) {
            if (index >= n_procs) continue;
            named += bytes;
            if (band_of[index] >= 0) result.bands[static_cast<size_t>(band_of[index])].bytes[i] += bytes;
            else other.bytes[i] += bytes;
        }
        rest.bytes[i] = points[i].total_bytes > named ? points[i].total_bytes - named : 0;
        result.rest_has_processes |= points[i].top.size() >= kTopPerPoint;
    }
    auto nonzero = [](const PlotBand& band) {
        return std::any_of(band.bytes.begin(), band.bytes.end(), [](uint64_t b) { return b > 0; });
    };
    if (nonzero(other)) result.bands.push_back(std::move(other));
    if (nonzero(rest)) result.bands.push_back(std::move(rest));
    return result;
}

}  // namespace max_rss
