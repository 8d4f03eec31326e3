// The eBPF backend's driver (see ebpf_backend.cpp): the run and its record
// loop there, the root's launch and adoption in ebpf_launch.cpp.
#pragma once

#include "early_tracer.hpp"
#include "ebpf_program.hpp"
#include "staged_probe.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/os/clock.hpp>
#include <max_rss/os/signals.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace max_rss::ebpf {

class EbpfBackend final : public Backend {
public:
    explicit EbpfBackend(KeptBackends* keep);
    ~EbpfBackend() override;
    EbpfBackend(const EbpfBackend&) = delete;
    EbpfBackend& operator=(const EbpfBackend&) = delete;
    MemoryProbe* probe() override { return &probe_; }
    void run(RunContext& context) override;

private:
    void launch_loaded();
    void launch_while_loading();
    void adopt_root(EarlyTracer& early, int64_t launched_ns);
    void on_root_exec();
    void root_ended_unadopted(const os::WaitResult& w);
    void reap_root(const os::WaitResult& w);
    void loop();
    void handle(const mrss_record& r, size_t bytes);
    void on_exit_record(const mrss_record& r);
    void record_totals();
    void reap_vanished();
    void kill_tree();
    void signal(pid_t pid, int sig) const;
    [[nodiscard]] int64_t run_ns(uint64_t monotonic_ns) const {
        return static_cast<int64_t>(monotonic_ns) - (os::monotonic_ns() - context_->recorder.now_ns());
    }

    KeptBackends* keep_;
    std::shared_ptr<BpfProgram> program_;
    bool ended_ = false;  // run() saw the last process go, with no error
    StagedProbe probe_;
    RunContext* context_ = nullptr;
    std::optional<Forwarder> forwarder_;
    pid_t root_pid_ = 0;
    bool root_reaped_ = false;
    uint64_t recorded_peak_pages_ = 0;
    int64_t last_point_ns_ = 0;  // the timeline's last point, which a peak's (coarse) time never goes before
};

}  // namespace max_rss::ebpf
