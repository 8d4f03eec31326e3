// Plain data: what `max_rss bench` measured. No behaviour, no I/O.
// Summaries are derived from the runs by functions (see stats.hpp), never stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace max_rss {

// One measured execution of a benchmarked command.
struct BenchRun {
    uint64_t peak_bytes = 0;                  // the tree's true peak (TreePeak::tree_bytes)
    std::optional<uint64_t> ru_maxrss_bytes;  // wait4 of the root: what GNU time would say
    int exit_code = 0;                        // shell convention: code, or 128 + signal
    double wall_seconds = 0;
    bool degraded = false;                    // not traced (ptrace unavailable): sampled, may be low
    // CPU time of the tree's reaped processes (getrusage(RUSAGE_CHILDREN)
    // around the run, as hyperfine measures it).
    double user_seconds = 0;
    double system_seconds = 0;
};

// A parameter's name and the value it had for a result (-L, --parameter-scan).
using BenchParameter = std::pair<std::string, std::string>;

// Every run of one command, in the order they ran.
struct BenchResult {
    std::string command;  // as run (parameters substituted), a shell command line
    std::string name;     // display name from the user; empty when none was given
    std::vector<BenchRun> runs;
    std::vector<std::string> warnings;  // the tracer's over the measured runs, each once, in order
    std::vector<BenchParameter> parameters;  // in the order the options named them
    bool reference = false;                  // --reference: ratios are relative to it
    std::optional<uint64_t> budget_bytes;    // --budget for this command, when given
};

// Where and how the results were measured: in every export.
struct Provenance {
    std::string max_rss_version;  // MAX_RSS_VERSION
    std::string date;             // when bench started, ISO 8601 UTC ("2026-11-01T12:00:00Z")
    std::string kernel;           // uname: sysname and release ("Linux 6.18.0")
    std::string machine;          // uname: the hardware name ("x86_64")
    unsigned cpu_count = 0;       // online CPUs
    // Measured runs per command: -r, or, when --min-runs/--max-runs left the
    // count to the time a run takes (runs = 0), between min_runs and max_runs.
    unsigned runs = 0;
    unsigned min_runs = 0;
    unsigned max_runs = 0;
    unsigned warmup = 0;          // -w
    std::string backend;          // "ptrace", "ebpf" or "sample"
};

// --sort, as hyperfine's: auto orders the closing summary by mean peak and
// keeps tables in the order the commands were given; command keeps that
// order everywhere; mean-peak and mean-time order everything by the mean
// peak or the mean wall time.
enum class BenchSort { Auto, Command, MeanPeak, MeanTime };

// What an export is made of.
struct BenchReport {
    Provenance provenance;
    std::vector<BenchResult> results;  // in the order the commands were given
    BenchSort sort = BenchSort::Auto;
};

// The name to show for a result: its name if it has one, else its command.
inline const std::string& display_name(const BenchResult& result) {
    return result.name.empty() ? result.command : result.name;
}

}  // namespace max_rss
