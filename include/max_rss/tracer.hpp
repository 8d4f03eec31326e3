// Runs a command under ptrace and measures every process of its tree.
// Knows nothing of JSON, terminals or command-line options.
#pragma once

#include <max_rss/model.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace max_rss {

struct TraceOptions {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH like execvp
    // Forward SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to max_rss (by kill(1), not
    // by the terminal, which already signals the whole foreground group) to the
    // root process. Installed for the duration of trace() only.
    bool forward_signals = true;
    // Period of the live-tree sampler (statm of every live process); 0 turns
    // periodic sampling off (snapshots at exit stops remain).
    int64_t sample_interval_ns = 20'000'000;
    // Also run the tree in a memory cgroup of its own and report the cgroup's
    // peak (includes page cache and kernel memory) beside ours. Where no
    // cgroup can be used, a warning says why and tracing goes on.
    bool use_cgroup = false;
};

// The command could not be started: not found (127) or not executable (126).
struct LaunchError : std::runtime_error {
    int exit_code;
    LaunchError(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
};

// max_rss itself failed (a system call that should not fail). Exit code 125.
struct TracerError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Runs options.argv to completion of the whole tree (descendants that outlive
// the root included) and returns what was measured. Throws LaunchError when
// the program cannot be started, TracerError on max_rss's own failure; in both
// cases nothing traced is left running.
RunResult trace(const TraceOptions& options);

// Derives result.peak from result.processes and the largest snapshot of the
// live tree, if there was any (pure; used by trace()).
TreePeak compute_tree_peak(const std::deque<Process>& processes,
                           std::optional<uint64_t> sampled_bytes = std::nullopt);

}  // namespace max_rss
