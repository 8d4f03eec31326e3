// Plain data: what `max_rss bench` measured. No behaviour, no I/O.
// Summaries are derived from the runs by functions (see stats.hpp), never stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace max_rss {

// One measured execution of a benchmarked command.
struct BenchRun {
    uint64_t peak_bytes = 0;                  // the tree's true peak (TreePeak::tree_bytes)
    std::optional<uint64_t> ru_maxrss_bytes;  // wait4 of the root: what GNU time would say
    int exit_code = 0;                        // shell convention: code, or 128 + signal
    double wall_seconds = 0;
    bool degraded = false;                    // not traced (ptrace unavailable): sampled, may be low
};

// Every run of one command, in the order they ran.
struct BenchResult {
    std::string command;  // as the user gave it (a shell command line)
    std::string name;     // display name from the user; empty when none was given
    std::vector<BenchRun> runs;
    std::vector<std::string> warnings;  // the tracer's over the measured runs, each once, in order
};

// The name to show for a result: its name if it has one, else its command.
inline const std::string& display_name(const BenchResult& result) {
    return result.name.empty() ? result.command : result.name;
}

}  // namespace max_rss
