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
//
// The root's launch and adoption are in ebpf_launch.cpp.
#include "ebpf_backend.hpp"

#include <max_rss/os/process_signal.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace max_rss {
namespace ebpf {
namespace {

constexpr uint64_t kCowSlackBytes = uint64_t{1} << 20;

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

// Root loads after the program has started (see early_tracer.hpp), unless
// MAX_RSS_EBPF_OVERLAP=0 asks for the load first. Without root the load
// comes first: a refusal then comes before anything has run.
bool load_while_running() {
    const char* overlap = std::getenv("MAX_RSS_EBPF_OVERLAP");
    return ::geteuid() == 0 && !(overlap && std::string_view(overlap) == "0");
}

}  // namespace

EbpfBackend::EbpfBackend(KeptBackends* keep) : keep_(keep) {
    if (keep_) {
        // Loaded for an earlier run or by prepare_backend(); else (the last
        // run handed nothing on) loaded first now, as prepare_backend() does,
        // so every run that keeps one is measured the same way.
        prepare_backend(BackendKind::Ebpf, *keep_);
        program_ = std::move(keep_->ebpf);
    } else if (load_while_running()) {
        BpfProgram::require_host();
    } else {
        program_ = BpfProgram::load();
    }
}

// A run that ended as it should hands its kernel side on, if it left it clean.
EbpfBackend::~EbpfBackend() {
    if (!keep_ || !program_ || !ended_) return;
    try {
        if (program_->ready_for_next_run()) keep_->ebpf = std::move(program_);
        else log::debug("ebpf: the run left state in the kernel side: the next run loads its own");
    } catch (...) {
        // A log line that could not be written: the next run loads its own.
    }
}

void EbpfBackend::run(RunContext& context) {
    context_ = &context;
    Recorder& recorder = context.recorder;
    recorder.set_backend(BackendKind::Ebpf);
    recorder.totals_from_backend();
    forwarder_.emplace(recorder);
    forwarder_->set_sender([this](pid_t pid, int sig) { signal(pid, sig); });
    if (program_) launch_loaded();
    else launch_while_loading();
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
    const uint64_t lower_bytes = totals.peak_pages * kPageBytes;
    // The file + shmem part counted is the largest set one address space
    // held; the tree's is their union, which the kernel side cannot name.
    // Where a moment's total plus the excess of their sum over the largest
    // could have beaten the peak, the peak is a lower bound.
    uint64_t upper_pages = totals.peak_pages;
    bool cow_bounds = false;
    bool file_bounds = false;
    if (program_->exact_cow()) {
        file_bounds = totals.shared_upper_peak_pages > totals.peak_pages;
        if (file_bounds) upper_pages = totals.shared_upper_peak_pages;
    } else {
        // The totals leave out copy-on-write copies here, so the kernel
        // side's total + excess bounds nothing; every mm's anon pages in
        // full do (upper_peak_pages), with the largest excess beside them.
        cow_bounds = totals.upper_peak_pages * kPageBytes > lower_bytes + kCowSlackBytes;
        if (cow_bounds)
            recorder.warn(
                Warning{Warning::Kind::CowBounds, 0, lower_bytes, totals.upper_peak_pages * kPageBytes, 0, {}});
        const uint64_t bound = totals.upper_peak_pages + totals.shared_excess_peak_pages;
        file_bounds = totals.shared_excess_peak_pages > 0 && bound > totals.peak_pages;
        if (cow_bounds || file_bounds) upper_pages = std::max(bound, totals.peak_pages);
    }
    if (cow_bounds || file_bounds) recorder.tree_upper_bound(upper_pages * kPageBytes, cow_bounds, file_bounds);
    ended_ = true;
}

// The root is max_rss's child: it ends with wait4's status and rusage.
void EbpfBackend::reap_root(const os::WaitResult& w) {
    context_->recorder.task_reaped(root_pid_, w.status.exit_status(), ru_maxrss_bytes(w.usage));
    root_reaped_ = true;
}

void EbpfBackend::loop() {
    Recorder& recorder = context_->recorder;
    os::SignalHub& signals = context_->signals;
    int64_t next_sample_ns = 0;
    bool killing = false;
    // The kernel side may signal this thread while the loop runs, and no
    // later: after it, SIGALRM's handler may be gone.
    program_->read_from(::gettid());
    struct StopReading {
        BpfProgram& program;
        ~StopReading() { program.read_from(0); }
    } stop_reading{*program_};
    for (;;) {
        program_->consume();
        if (signals.take_tick()) {
            if (context_->sample_interval_ns > 0 && recorder.now_ns() >= next_sample_ns) {
                record_totals();
                next_sample_ns = recorder.now_ns() + context_->sample_interval_ns;
            }
            if (root_reaped_) reap_vanished();
        }
        // The root's copy was counted by the kernel side, from the same
        // sender (asked first: a yes is used up), or is still pending.
        forwarder_->handle(signals.take_received(), [this](const os::ReceivedSignal& sig) {
            return program_->root_got(sig.signo, sig.sender) || signal_pending(root_pid_, sig.signo);
        });
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
        reap_root(w);
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
    auto add_point = [&](int64_t at_ns, uint64_t pages) {
        last_point_ns_ = std::max(last_point_ns_, at_ns);
        recorder.tree_total_seen(last_point_ns_, pages * kPageBytes);
    };
    if (t.peak_pages > recorded_peak_pages_) {
        recorded_peak_pages_ = t.peak_pages;
        add_point(run_ns(t.peak_ns), t.peak_pages);
    }
    add_point(recorder.now_ns(), t.total_pages);
}

// A process whose exit record never came (the ring buffer was full) must not
// keep the run going: once the kernel side no longer follows it (it exited;
// its pid, reaped, may be another's), it is ended here. Its record, if it
// was written, was written before that: read first.
void EbpfBackend::reap_vanished() {
    std::vector<pid_t> gone;
    for (const auto& [pid, live] : context_->recorder.table().live_processes())
        if (!program_->follows(pid)) gone.push_back(pid);
    if (gone.empty()) return;
    program_->consume();
    for (pid_t pid : gone)
        if (context_->recorder.table().live(pid)) context_->recorder.task_reaped(pid, ExitStatus{}, std::nullopt);
}

void EbpfBackend::kill_tree() {
    for (const auto& [pid, live] : context_->recorder.table().live_processes()) signal(pid, SIGKILL);
    if (!root_reaped_) ::kill(root_pid_, SIGKILL);
}

// The root is max_rss's child, its pid held until max_rss reaps it; so are
// the processes the early tracer stops before the load ends. Any other pid
// of the table may have been reaped by its parent and reused meanwhile: it
// is signalled only while the kernel side follows it as a live process.
void EbpfBackend::signal(pid_t pid, int sig) const {
    if ((pid == root_pid_ && !root_reaped_) || !program_) {
        ::kill(pid, sig);
        return;
    }
    os::signal_if(pid, sig, [&] { return program_->follows(pid); });
}

}  // namespace ebpf

std::unique_ptr<Backend> make_ebpf_backend(KeptBackends* keep) { return std::make_unique<ebpf::EbpfBackend>(keep); }

void prepare_ebpf_backend(KeptBackends& keep) {
    if (!keep.ebpf) keep.ebpf = ebpf::BpfProgram::load(ebpf::BpfProgram::Root::ForkedAfter);
}

}  // namespace max_rss
