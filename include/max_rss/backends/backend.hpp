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

namespace ebpf {
class BpfProgram;
}

// What a backend may keep from one run to the next of the same max_rss
// process (bench measures many runs): the ebpf backend's kernel side, loaded
// once and handed from run to run while each run leaves it as it found it,
// so that no run pays the load (~15 ms here) in its wall time. Empty until
// prepare_backend() or a run fills it; what it holds stays loaded and
// attached until it is destroyed.
struct KeptBackends {
    std::shared_ptr<ebpf::BpfProgram> ebpf;
};

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
// privilege, BTF or build support): before anything is started. With keep,
// the backend takes what an earlier run or prepare_backend() left there, and
// leaves there what the next run can use.
std::unique_ptr<Backend> make_backend(BackendKind kind, KeptBackends* keep = nullptr);

// Loads now, into keep, what kind would load at its first run (the ebpf
// backend's kernel side; nothing for the others), so that the first run's
// wall time does not include it either. Throws LaunchError as make_backend()
// would, before anything is started.
void prepare_backend(BackendKind kind, KeptBackends& keep);

}  // namespace max_rss
