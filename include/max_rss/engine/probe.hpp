// How the engine reads a task's memory at the moment a backend chose: /proc
// for the ptrace and sample backends (ProcProbe), values the kernel handed over
// for the eBPF backend, a fake in tests.
#pragma once

#include <max_rss/model.hpp>
#include <max_rss/os/address_space.hpp>
#include <max_rss/procfs/file_pages.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <sys/types.h>

#include <optional>
#include <vector>

namespace max_rss {

class MemoryProbe {
public:
    virtual ~MemoryProbe() = default;
    // nullopt: the task is gone or its address space is (ESRCH, no Vm lines).
    virtual std::optional<procfs::Status> status(pid_t tid) = 0;
    virtual std::optional<procfs::Statm> statm(pid_t tid) = 0;
    // Walks the page tables: only for stopped tasks, and only when policy says.
    virtual std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) = 0;
    // The resident file and shmem pages of tid's process, by file and page,
    // appended to runs (file_pages.hpp). False: they could not be read.
    virtual bool file_pages(pid_t, std::vector<procfs::FilePageRun>&) { return false; }
    // What pid runs since its last exec: argv and executable.
    virtual Program program(pid_t pid) = 0;
    // The pid most recently handed out, and the largest there can be (to look
    // for processes made since a moment). nullopt: this probe cannot tell.
    virtual std::optional<pid_t> newest_pid() { return std::nullopt; }
    virtual pid_t pid_max() { return 0; }
    // Whether two processes run in one address space; nullopt: cannot tell.
    virtual std::optional<bool> same_address_space(pid_t, pid_t) { return std::nullopt; }
    // Returns once no fork of tid's process is copying its address space.
    virtual void wait_out_fork_copy(pid_t) {}
};

// Reads /proc/<tid>/...
class ProcProbe final : public MemoryProbe {
public:
    std::optional<procfs::Status> status(pid_t tid) override { return procfs::read_status(tid); }
    std::optional<procfs::Statm> statm(pid_t tid) override { return procfs::read_statm(tid); }
    std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) override { return procfs::read_smaps_rollup(tid); }
    bool file_pages(pid_t tid, std::vector<procfs::FilePageRun>& runs) override {
        return procfs::read_file_pages(tid, runs);
    }
    Program program(pid_t pid) override { return Program{procfs::read_cmdline(pid), procfs::read_exe(pid)}; }
    std::optional<pid_t> newest_pid() override { return newest_pid_.read(); }
    pid_t pid_max() override {
        static const pid_t max = procfs::read_pid_max().value_or(0);
        return max;
    }
    std::optional<bool> same_address_space(pid_t a, pid_t b) override { return os::same_address_space(a, b); }
    void wait_out_fork_copy(pid_t tid) override { os::wait_for_address_space_lock(tid); }

private:
    procfs::NewestPidReader newest_pid_;
};

}  // namespace max_rss
