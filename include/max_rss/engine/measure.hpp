// Measuring one run of a command: the front of the engine.
#pragma once

#include <max_rss/backends/backend.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/model.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace max_rss {

struct MeasureOptions {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH like execvp
    BackendKind backend = BackendKind::Ptrace;
    // Pass SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to max_rss (by kill(1), not
    // by the terminal, which already signals the whole foreground group) on
    // to the program.
    bool forward_signals = true;
    // Period of the live-tree snapshots; 0 turns periodic snapshots off
    // (snapshots at exit stops remain).
    int64_t sample_interval_ns = 20'000'000;
    // Also run the tree in a memory cgroup of its own and report the cgroup's
    // peak (includes page cache and kernel memory) beside ours. Where no
    // cgroup can be used, a warning says why and measuring goes on.
    bool use_cgroup = false;
    // Asked once measure() has taken SIGINT, SIGTERM, SIGHUP and SIGQUIT
    // over: a termination signal the caller caught for this run before then
    // (0: none). It is handled as one sent now: passed on to the program.
    // Without it, a signal that lands between the caller's handler and
    // measure()'s is the caller's alone, and a program that waits for it
    // never ends (bench: a SIGTERM in its first moment).
    std::function<int()> take_early_signal;
    // Where the backend takes what an earlier run of this process loaded and
    // leaves it for the next (bench: the ebpf backend's kernel side, loaded
    // once). nullptr: each run loads its own.
    KeptBackends* keep = nullptr;
};

// Runs options.argv to the end of its whole tree (descendants that outlive
// the root included) and returns what was measured.
//
// Process-wide effects while it runs: an os::SignalHub owns SIGINT, SIGTERM,
// SIGHUP, SIGQUIT and SIGALRM and the ITIMER_REAL timer (all restored on
// return); the backend waits with wait4(-1, __WALL), so the caller must have
// no other children to wait for; the sample backend makes max_rss a child
// subreaper (PR_SET_CHILD_SUBREAPER, left set) to wait for orphans. The
// ptrace backend does not: orphans keep tracing, and see getppid() == 1 as
// they would without max_rss.
//
// The run ends when the last process of the tree has ended. A termination
// signal sent to max_rss after the command itself ended (^C while daemons it
// started still run) ends it sooner: they get the signal, and whatever still
// runs half a second later is killed (Warning::Kind::SurvivorsKilled).
//
// Throws LaunchError when the program cannot be started (nothing ran). When
// max_rss itself fails mid-run, returns what was measured so far with
// internal_error set. Either way nothing it started is left running or stopped.
RunResult measure(const MeasureOptions& options);

}  // namespace max_rss
