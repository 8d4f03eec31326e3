// How the engine reads a task's memory at the moment a backend chose: /proc
// for the ptrace and sample backends (ProcProbe), values the kernel handed over
// for the eBPF backend, a fake in tests.
#pragma once

#include <max_rss/model.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <sys/types.h>

#include <optional>

namespace max_rss {

class MemoryProbe {
public:
    virtual ~MemoryProbe() = default;
    // nullopt: the task is gone or its address space is (ESRCH, no Vm lines).
    virtual std::optional<procfs::Status> status(pid_t tid) = 0;
    virtual std::optional<procfs::Statm> statm(pid_t tid) = 0;
    // Walks the page tables: only for stopped tasks, and only when policy says.
    virtual std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) = 0;
    // What pid runs since its last exec: argv and executable.
    virtual Program program(pid_t pid) = 0;
};

// Reads /proc/<tid>/...
class ProcProbe final : public MemoryProbe {
public:
    std::optional<procfs::Status> status(pid_t tid) override { return procfs::read_status(tid); }
    std::optional<procfs::Statm> statm(pid_t tid) override { return procfs::read_statm(tid); }
    std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) override { return procfs::read_smaps_rollup(tid); }
    Program program(pid_t pid) override { return Program{procfs::read_cmdline(pid), procfs::read_exe(pid)}; }
};

}  // namespace max_rss
