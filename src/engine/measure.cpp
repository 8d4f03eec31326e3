#include <max_rss/engine/measure.hpp>
#include <max_rss/engine/probe.hpp>
#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/cgroup.hpp>
#include <max_rss/os/signals.hpp>

#include <algorithm>

#include <optional>

namespace max_rss {

RunResult measure(const MeasureOptions& options) {
    if (options.argv.empty()) throw TracerError("no command given");
    // The tick samples the tree every sample_interval_ns, and wakes the loop
    // at least every 100 ms whatever the interval: a signal that lands just
    // before a wait, or a deadline, is seen within that.
    constexpr int64_t kHousekeepingNs = 100'000'000;
    const int64_t tick_ns = options.sample_interval_ns > 0 ? std::min(options.sample_interval_ns, kHousekeepingNs)
                                                          : kHousekeepingNs;
    // Made first: a backend that cannot work here refuses before anything else.
    std::unique_ptr<Backend> backend = make_backend(options.backend, options.keep);
    os::SignalHub signals({options.forward_signals, tick_ns});
    if (options.take_early_signal)
        if (const int early = options.take_early_signal(); early > 0) signals.inject(early);
    ProcProbe proc_probe;
    MemoryProbe& probe = backend->probe() ? *backend->probe() : proc_probe;
    Recorder recorder({options.argv, options.sample_interval_ns, 2048}, probe);

    std::string why_not;
    std::optional<MemoryCgroup> cgroup = options.use_cgroup ? MemoryCgroup::create(why_not) : std::nullopt;
    if (options.use_cgroup && !cgroup) recorder.warn(Warning{Warning::Kind::CgroupUnavailable, 0, 0, 0, 0, why_not});
    auto join_cgroup = [&](pid_t pid) {
        std::string join_why_not;
        if (cgroup && !cgroup->add(pid, join_why_not)) {
            recorder.warn(Warning{Warning::Kind::CgroupUnavailable, 0, 0, 0, 0, join_why_not});
            cgroup.reset();
        }
    };
    RunContext context{options.argv, options.sample_interval_ns, recorder, signals, join_cgroup};
    try {
        backend->run(context);
    } catch (const TracerError& e) {
        recorder.fail(e.what());
    }
    for (const os::ReceivedSignal& late : signals.drain()) recorder.interrupted(late.signo);
    if (cgroup) recorder.set_cgroup_peak(cgroup->peak_bytes());
    return recorder.finish();
}

}  // namespace max_rss
