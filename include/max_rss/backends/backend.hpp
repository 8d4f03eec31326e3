// A backend starts the command and turns the kernel's view of its tree into
// the engine's event stream (Recorder). Each is one small file under
// src/backends/; what they share (the process table, the measurement policy,
// the model) lives in the engine.
#pragma once

#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/signals.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// Everything one run gives its backend.
struct RunContext {
    std::vector<std::string> argv;
    int64_t sample_interval_ns = 0;  // 0: no periodic snapshots
    Recorder& recorder;
    os::SignalHub& signals;
    // Runs in max_rss once the program is forked and before it may exec.
    std::function<void(pid_t)> before_release;
};

class Backend {
public:
    virtual ~Backend() = default;
    // Starts context.argv and reports its whole tree to context.recorder until
    // every process of it is gone. Throws LaunchError when the command cannot
    // be started (nothing ran), TracerError when max_rss itself fails (what
    // was recorded so far stays in the recorder). Either way nothing it
    // started is left running or stopped.
    virtual void run(RunContext& context) = 0;
    // Where the engine reads memory at each event: nullptr for /proc
    // (ProcProbe); the eBPF backend hands over what the kernel recorded.
    virtual MemoryProbe* probe() { return nullptr; }
};

// wait4's ru_maxrss (KiB) of a reaped process in bytes; unknown without a rusage.
OptionalBytes ru_maxrss_bytes(const std::optional<rusage>& usage);

// Throws LaunchError when the backend cannot work here (eBPF without the
// privilege, BTF or build support): before anything is started.
std::unique_ptr<Backend> make_backend(BackendKind kind);

}  // namespace max_rss
