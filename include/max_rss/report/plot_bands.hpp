// How the plot splits each timeline point into stacked bands. Pure.
#pragma once

#include <max_rss/model.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace max_rss {

struct PlotBand {
    enum class Kind : uint8_t {
        Process,         // one process's own (private) memory
        OtherProcesses,  // processes named at a point but without a band of their own
        Rest,            // the rest of each total: shared pages, counted once, and
                         // processes too small to be named at that point
    };
    Kind kind = Kind::Process;
    uint32_t process = 0;     // Kind::Process: index into RunResult::processes
    size_t processes = 0;     // Kind::OtherProcesses: how many distinct processes
    std::vector<uint64_t> bytes;  // one per timeline point
};

struct PlotBands {
    std::vector<PlotBand> bands;  // bottom-up: processes largest first, then other, then rest
    bool rest_has_processes = false;  // some point named as many processes as it could
};

// Each point's total_bytes split exactly: a band for each of the up to
// max_process_bands processes with the largest own memory at any point (what
// TimelinePoint::top gave them), one for the other processes the points
// name, and one for the rest of each total. Bands that are zero at every
// point are left out. Entries of top that name no process are part of the
// rest. When top entries add up to more than the total, the bands are kept
// and the rest is 0.
PlotBands plot_bands(const RunResult& result, size_t max_process_bands);

}  // namespace max_rss
