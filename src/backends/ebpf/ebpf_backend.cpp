// The eBPF backend: the tree followed from kernel events, nobody stopped.
//
// The kernel side (max_rss.bpf.c) keeps the set of tracked thread groups
// (the root is put there before it may run; its forks join in kernel), every
// tracked address space's counters and peak, and the tree's total at every
// counter change with its largest value. It hands fork, exec-entry, exec and
// exit records of processes (threads are only counted, in the kernel: a
// thread changes neither the tree nor its memory, and 5,000 threads would be
// 10,000 wake-ups) to this loop, which turns them into the engine's events; the
// memory figures the Recorder reads at each event are the ones the record
// carries (StagedProbe), taken in the kernel at that very moment.
//
// The loop: the root is max_rss's child and is waited for (its exit status
// and rusage from wait4); every other process ends with its exit record
// (status and ru_maxrss from the kernel), so orphans need no subreaper and
// see the parent they would see without max_rss. Records are read at every
// tick while the root runs, then by polling the ring buffer until the last
// tracked process is gone.
#include "ebpf_program.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/backends/forwarding.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/os/clock.hpp>
#include <max_rss/os/launch.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace max_rss {
namespace ebpf {
namespace {

const uint64_t kPageBytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
constexpr uint64_t kCowSlackBytes = uint64_t{1} << 20;

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
    void stage_program(max_rss::Program program) { program_ = std::move(program); }

private:
    std::optional<procfs::Status> status_;
    std::optional<procfs::Statm> statm_;
    std::optional<procfs::SmapsRollup> smaps_;
    max_rss::Program program_;
};

ExitStatus exit_status_of(int wait_status) {
    ExitStatus e;
    if ((wait_status & 0x7f) == 0) {
        e.code = (wait_status >> 8) & 0xff;
    } else {
        e.signal = wait_status & 0x7f;
        e.core_dumped = (wait_status & 0x80) != 0;
    }
    return e;
}

// argv from the NUL-separated bytes of an exec record; exe: the path the
// program was exec'd by, resolved through /proc while the process lives.
max_rss::Program program_of(const mrss_exec_record& r) {
    max_rss::Program p;
    const size_t n = std::min<size_t>(r.args_bytes, sizeof r.args);
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
        if (r.args[i] != '\0') continue;
        p.argv.emplace_back(r.args + start, i - start);
        start = i + 1;
    }
    if (start < n) p.argv.emplace_back(r.args + start, n - start);  // cut at the record's size
    p.exe.assign(r.filename, strnlen(r.filename, sizeof r.filename));
    if (p.exe.empty() || p.exe.front() != '/') {
        const std::string resolved = procfs::read_exe(static_cast<pid_t>(r.base.tgid));
        if (!resolved.empty()) p.exe = resolved;
    }
    return p;
}

class EbpfBackend final : public Backend {
public:
    EbpfBackend() : program_(BpfProgram::load()) {}
    MemoryProbe* probe() override { return &probe_; }
    void run(RunContext& context) override;

private:
    void loop();
    void handle(const mrss_record& r, size_t bytes);
    void on_exit_record(const mrss_record& r);
    void record_totals();
    void reap_vanished();
    void kill_tree();
    [[nodiscard]] int64_t run_ns(uint64_t monotonic_ns) const {
        return static_cast<int64_t>(monotonic_ns) - (os::monotonic_ns() - context_->recorder.now_ns());
    }

    std::unique_ptr<BpfProgram> program_;
    StagedProbe probe_;
    RunContext* context_ = nullptr;
    std::optional<Forwarder> forwarder_;
    pid_t root_pid_ = 0;
    bool root_reaped_ = false;
    uint64_t recorded_peak_pages_ = 0;
};

void EbpfBackend::run(RunContext& context) {
    context_ = &context;
    Recorder& recorder = context.recorder;
    recorder.set_backend(BackendKind::Ebpf);
    recorder.totals_from_backend();
    program_->on_record([this](const mrss_record& r, size_t bytes) { handle(r, bytes); });
    os::LaunchSpec spec;
    spec.argv = context.argv;
    spec.child_mask = context.signals.original_mask();
    // In the tree before it may run: every fork it makes is followed in kernel.
    spec.before_release = [this, &context](pid_t pid) {
        program_->track(pid);
        if (context.before_release) context.before_release(pid);
    };
    os::Launched launched = os::launch(spec);
    root_pid_ = launched.pid;
    recorder.root_started(root_pid_);
    const os::LaunchReport report = os::read_launch_report(launched.report_fd);
    if (report.exec_errno != 0) {
        ::waitpid(root_pid_, nullptr, 0);
        os::throw_launch_error(context.argv.at(0), report.exec_errno);
    }
    forwarder_.emplace(recorder);
    forwarder_->set_root(root_pid_);
    try {
        loop();
    } catch (...) {
        kill_tree();
        if (!root_reaped_) ::waitpid(root_pid_, nullptr, 0);
        throw;
    }
    const KernelTotals totals = program_->totals();
    log::debug("ebpf: tree total at the end {} pages, anonymous pages still counted {}", totals.total_pages,
               totals.anon_pages);
    if (totals.lost_records > 0) recorder.warn(Warning{Warning::Kind::EventsLost, 0, totals.lost_records, 0, 0, {}});
    if (totals.untracked > 0) {
        recorder.warn(Warning{Warning::Kind::Untracked, 0, totals.untracked, MRSS_TABLE_ENTRIES, 0, {}});
        recorder.processes_untracked();
    }
    // Without the copy-on-write hooks the headline is a lower bound: said,
    // with the upper one, whenever the two differ by more than the few
    // hundred KiB of libc pages every forked child shares with its parent.
    const uint64_t upper_bytes = totals.upper_peak_pages * kPageBytes;
    const uint64_t lower_bytes = totals.peak_pages * kPageBytes;
    if (!program_->exact_cow() && upper_bytes > lower_bytes + kCowSlackBytes) {
        recorder.warn(Warning{Warning::Kind::CowBounds, 0, lower_bytes, upper_bytes, 0, {}});
        recorder.tree_upper_bound(upper_bytes);
    }
}

void EbpfBackend::loop() {
    Recorder& recorder = context_->recorder;
    os::SignalHub& signals = context_->signals;
    int64_t next_sample_ns = 0;
    bool killing = false;
    for (;;) {
        program_->consume();
        if (signals.take_tick()) {
            if (context_->sample_interval_ns > 0 && recorder.now_ns() >= next_sample_ns) {
                record_totals();
                next_sample_ns = recorder.now_ns() + context_->sample_interval_ns;
            }
            if (root_reaped_) reap_vanished();
        }
        forwarder_->handle(signals.take_received(), [this](int sig) { return signal_pending(root_pid_, sig); });
        if (auto deadline = forwarder_->deadline_ns(); deadline && !killing && recorder.now_ns() >= *deadline) {
            recorder.warn(Warning{Warning::Kind::SurvivorsKilled, 0, recorder.table().live_count(), 0, 0, {}});
            kill_tree();
            killing = true;
        }
        if (root_reaped_ && recorder.table().live_count() == 0) break;
        const os::WaitResult w = signals.wait_any(false);
        if (w.kind == os::WaitResult::Kind::Interrupted) continue;
        if (w.kind == os::WaitResult::Kind::NoChildren) {
            // The root is gone: what it started is followed through the ring
            // buffer until the last of it has ended.
            root_reaped_ = true;
            program_->poll(10);
            continue;
        }
        if (w.pid != root_pid_ || !w.status.is_terminal()) continue;
        // Its exit record was written before it became a zombie: read every
        // record first, then end it with wait4's status and rusage.
        program_->consume();
        OptionalBytes ru_maxrss;
        if (w.usage) ru_maxrss = static_cast<uint64_t>(w.usage->ru_maxrss) * 1024;
        recorder.task_reaped(root_pid_, w.status.exit_status(), ru_maxrss);
        root_reaped_ = true;
    }
    program_->consume();
    record_totals();
}

void EbpfBackend::handle(const mrss_record& r, size_t bytes) {
    Recorder& recorder = context_->recorder;
    const auto tid = static_cast<pid_t>(r.tid);
    switch (r.kind) {
        case MRSS_REC_FORK: {
            // Only processes: the kernel side counts threads (see on_exit_record).
            const CloneKind kind = r.clone_kind == MRSS_CLONE_FORK ? CloneKind::Fork : CloneKind::SharedMm;
            if (!recorder.task_created(tid, static_cast<pid_t>(r.other), kind))
                recorder.process_adopted(tid, 0, false);
            probe_.stage(r.mm, false);  // the first stop: what a fork child inherited
            recorder.first_stop(tid);
            return;
        }
        case MRSS_REC_EXEC_ENTRY: {
            const Process* p = recorder.live_process(static_cast<pid_t>(r.tgid));
            probe_.stage(r.mm, p && !p->images.empty() && p->images.back().origin == ImageOrigin::Fork);
            recorder.exec_entry(static_cast<pid_t>(r.tgid));  // the exec may come from any of its threads
            return;
        }
        case MRSS_REC_EXEC: {
            if (bytes < sizeof(mrss_exec_record)) return;
            probe_.stage_program(program_of(reinterpret_cast<const mrss_exec_record&>(r)));
            // By the process alone: the thread that exec'd (r.other) was never in the
            // engine's table, and a stale entry under its tid must not be taken for it.
            recorder.exec_done(static_cast<pid_t>(r.tgid), 0);
            return;
        }
        case MRSS_REC_EXIT: on_exit_record(r); return;
        default: log::debug("ebpf: unknown record kind {}", r.kind);
    }
}

void EbpfBackend::on_exit_record(const mrss_record& r) {
    Recorder& recorder = context_->recorder;
    // The record of a group's last task (threads leaving before it send none):
    // the process is known by its leader's tid, whichever task came last.
    const auto tgid = static_cast<pid_t>(r.tgid);
    const Process* p = recorder.live_process(tgid);
    const bool fork_image = p && !p->images.empty() && p->images.back().origin == ImageOrigin::Fork;
    probe_.stage(r.mm, fork_image);
    recorder.tasks_counted(tgid, r.tasks);
    recorder.task_exiting(tgid);
    // The root is ended by wait4.
    if (tgid == root_pid_) return;
    OptionalBytes ru_maxrss = r.ru_maxrss_pages * kPageBytes;
    recorder.task_reaped(tgid, exit_status_of(r.exit_code), ru_maxrss);
}

// The kernel's tree total now, and its peak when it is new, on the timeline.
void EbpfBackend::record_totals() {
    const KernelTotals t = program_->totals();
    Recorder& recorder = context_->recorder;
    if (t.peak_pages > recorded_peak_pages_) {
        recorded_peak_pages_ = t.peak_pages;
        recorder.tree_total_seen(run_ns(t.peak_ns), t.peak_pages * kPageBytes);
    }
    recorder.tree_total_seen(recorder.now_ns(), t.total_pages * kPageBytes);
}

// A process whose exit record never came (the ring buffer was full) must not
// keep the run going: once it is gone from the system, it is ended here.
void EbpfBackend::reap_vanished() {
    std::vector<pid_t> gone;
    for (const auto& [pid, live] : context_->recorder.table().live_processes())
        if (::kill(pid, 0) != 0 && errno == ESRCH) gone.push_back(pid);
    for (pid_t pid : gone) context_->recorder.task_reaped(pid, ExitStatus{}, std::nullopt);
}

void EbpfBackend::kill_tree() {
    for (const auto& [pid, live] : context_->recorder.table().live_processes()) ::kill(pid, SIGKILL);
    if (!root_reaped_) ::kill(root_pid_, SIGKILL);
}

}  // namespace
}  // namespace ebpf

std::unique_ptr<Backend> make_ebpf_backend() { return std::make_unique<ebpf::EbpfBackend>(); }

}  // namespace max_rss
