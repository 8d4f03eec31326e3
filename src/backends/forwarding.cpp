#include <max_rss/backends/forwarding.hpp>

#include <csignal>

namespace max_rss {

void forward_received(const std::vector<os::ReceivedSignal>& received, Recorder& recorder, pid_t root_pid) {
    for (const os::ReceivedSignal& sig : received) {
        recorder.interrupted(sig.signo);
        if (sig.from_terminal()) continue;
        if (!recorder.root_exited()) {
            ::kill(root_pid, sig.signo);
            continue;
        }
        for (const auto& [pid, live] : recorder.table().live_processes()) ::kill(pid, sig.signo);
    }
}

}  // namespace max_rss
