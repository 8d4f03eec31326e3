// The eBPF backend's MemoryProbe: what the Recorder reads at an event is
// what the kernel side's record carries, taken in the kernel at that moment
// (or, before the program is adopted, what /proc gave while it was stopped).
#pragma once

#include <linux/types.h>

#include "events.h"

#include <max_rss/engine/probe.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <unistd.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace max_rss::ebpf {

inline const uint64_t kPageBytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));

// What the Recorder reads at an event: the figures of the record at hand.
class StagedProbe final : public MemoryProbe {
public:
    std::optional<procfs::Status> status(pid_t) override { return status_; }
    std::optional<procfs::Statm> statm(pid_t) override { return statm_; }
    std::optional<procfs::SmapsRollup> smaps_rollup(pid_t) override { return smaps_; }
    Program program(pid_t) override { return program_; }

    // The figures of one address space, or none (then the Recorder reads nothing).
    void stage(const mrss_mm_figures& mm, bool fork_image) {
        status_.reset();
        statm_.reset();
        smaps_.reset();
        if (!mm.valid) return;
        procfs::Status s;
        s.hwm_bytes = mm.peak_pages * kPageBytes;
        s.rss_anon_bytes = mm.anon_pages * kPageBytes;
        s.rss_file_bytes = mm.file_pages * kPageBytes;
        s.rss_shmem_bytes = mm.shmem_pages * kPageBytes;
        s.rss_bytes = *s.rss_anon_bytes + *s.rss_file_bytes + *s.rss_shmem_bytes;
        s.swap_bytes = mm.swap_pages * kPageBytes;
        status_ = s;
        statm_ = procfs::Statm{*s.rss_bytes, *s.rss_file_bytes + *s.rss_shmem_bytes};
        // A fork image's copy-on-write copies are its own memory, which its
        // counters cannot show: its anonymous pages no longer shared, the
        // only smaps figure the kernel side can give (documented).
        if (fork_image) {
            procfs::SmapsRollup p;
            p.private_clean_bytes = 0;
            p.private_dirty_bytes = mm.private_anon_pages * kPageBytes;
            smaps_ = p;
        }
    }
    // The figures /proc gives while the process is stopped (before it is adopted).
    void stage_status(const std::optional<procfs::Status>& s) {
        status_ = s;
        statm_.reset();
        smaps_.reset();
        if (s && s->rss_bytes && s->rss_file_bytes && s->rss_shmem_bytes)
            statm_ = procfs::Statm{*s->rss_bytes, *s->rss_file_bytes + *s->rss_shmem_bytes};
    }
    void stage_program(max_rss::Program program) { program_ = std::move(program); }

private:
    std::optional<procfs::Status> status_;
    std::optional<procfs::Statm> statm_;
    std::optional<procfs::SmapsRollup> smaps_;
    max_rss::Program program_;
};

}  // namespace max_rss::ebpf
