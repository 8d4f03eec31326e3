// The executor behind `max_rss bench`: each measured run is measure()d.
#pragma once

#include <max_rss/backends/backend.hpp>
#include <max_rss/bench/runner.hpp>
#include <max_rss/model.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace max_rss {

// The executor behind `max_rss bench`: trace() for measured runs (the peak is
// RunResult::peak.tree_bytes, whatever argv is: a shell running a command is
// measured with it), posix_spawn for prepare commands. stdin is /dev/null; stdout and stderr are /dev/null
// too unless show_output. While it exists, SIGINT, SIGTERM, SIGHUP and SIGQUIT
// only mark max_rss as interrupted (trace() forwards them to the program).
//
// With the ebpf backend, the kernel side is loaded once, when the executor is
// made (a refusal, LaunchError, comes then, before anything runs), and every
// run uses it: no run's wall time includes the load.
class TracingExecutor : public BenchExecutor {
public:
    explicit TracingExecutor(bool show_output, BackendKind backend = BackendKind::Ptrace);
    ~TracingExecutor() override;
    TracingExecutor(const TracingExecutor&) = delete;
    TracingExecutor& operator=(const TracingExecutor&) = delete;

    MeasuredRun measure(const std::vector<std::string>& argv) override;
    ExitStatus run_unmeasured(const std::vector<std::string>& argv) override;
    [[nodiscard]] std::optional<int> interruption() const override;

private:
    struct SavedHandlers;
    bool show_output_;
    BackendKind backend_;
    KeptBackends keep_;
    std::unique_ptr<SavedHandlers> saved_;
};

}  // namespace max_rss
