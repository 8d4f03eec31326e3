#include <max_rss/engine/policy.hpp>
#include <max_rss/engine/recorder.hpp>
#include <max_rss/engine/tree_peak.hpp>
#include <max_rss/os/clock.hpp>

#include <algorithm>

namespace max_rss {

Recorder::Recorder(RecorderOptions options, MemoryProbe& probe)
    : options_(std::move(options)), probe_(probe), start_ns_(os::monotonic_ns()), table_(result_.processes) {
    result_.command = options_.command;
    result_.timeline.interval_ns = options_.sample_interval_ns;
}

int64_t Recorder::now_ns() const { return os::monotonic_ns() - start_ns_; }

size_t Recorder::ProgramHash::operator()(const std::shared_ptr<const Program>& p) const noexcept {
    size_t h = std::hash<std::string>{}(p->exe);
    for (const auto& arg : p->argv) h = h * 1000003u ^ std::hash<std::string>{}(arg);
    return h;
}

bool Recorder::ProgramEqual::operator()(const std::shared_ptr<const Program>& a,
                                        const std::shared_ptr<const Program>& b) const {
    return a->exe == b->exe && a->argv == b->argv;
}

std::shared_ptr<const Program> Recorder::intern(Program program) {
    auto candidate = std::make_shared<const Program>(std::move(program));
    return *programs_.insert(std::move(candidate)).first;
}

const Process* Recorder::live_process(pid_t pid) const {
    auto index = table_.live_index(pid);
    return index ? &table_.process(*index) : nullptr;
}

uint32_t Recorder::new_process(pid_t pid, pid_t ppid, ImageOrigin origin, std::shared_ptr<const Program> program,
                               std::optional<pid_t> shares_mm_with) {
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    p.serial = next_serial_++;
    p.threads = 0;
    p.start_ns = now_ns();
    p.shares_mm_with = shares_mm_with;
    if (program) {
        Image img;
        img.program = std::move(program);
        img.origin = origin;
        img.start_ns = p.start_ns;
        p.images.push_back(std::move(img));
    }
    // Counted as owning nothing until it is known what it owns: the root
    // before its first exec is max_rss's own fork, and a forked child's
    // inherited pages are known only at its first stop.
    const bool owns_nothing_yet = p.images.empty() || origin == ImageOrigin::Fork;
    SampledProcess sampled;
    sampled.origin = owns_nothing_yet ? ImageOrigin::SharedMm : origin;
    const uint32_t parent = ppid != 0 ? table_.live_index(ppid).value_or(ProcessTable::kNoParent)
                                      : ProcessTable::kNoParent;
    const uint32_t index = table_.add_process(std::move(p), parent, sampled);
    if (!owns_nothing_yet && origin == ImageOrigin::Exec) table_.set_family(pid, index);
    if (origin == ImageOrigin::Fork) {
        // Its pages are its creator's (or, for a vfork child's fork, those of
        // the mm it borrowed) until it writes them.
        const LiveProcess* owner = creator_owner(ppid);
        const uint32_t family = owner ? family_for_children(*owner) : kNoFamily;
        LiveProcess* live = table_.live(pid);
        live->fork_family = family != kNoFamily ? family : index;
        // Reaped before its child was seen, the child's pages may be anyone's;
        // and so are those of a child of such a child.
        live->sampled.sharers_unknown = !owner || owner->sampled.sharers_unknown;
    }
    return index;
}

void Recorder::root_started(pid_t pid, bool exec_seen) {
    root_pid_ = pid;
    unseen_.look(probe_, table_);  // new pids count from here
    auto program = exec_seen ? intern(probe_.program(pid)) : nullptr;
    const uint32_t index = new_process(pid, 0, ImageOrigin::Exec, std::move(program), std::nullopt);
    table_.add_task(pid, index, false);  // PTRACE_SEIZE: no initial stop
}

bool Recorder::task_created(pid_t child, pid_t creator_tid, CloneKind kind) {
    const TaskEntry* creator = table_.task(creator_tid);
    if (!creator) return false;
    if (table_.task(child)) return true;  // already adopted
    const uint32_t creator_index = creator->process;
    if (kind == CloneKind::Thread) {
        table_.add_task(child, creator_index, true);
        return true;
    }
    const Process& parent = table_.process(creator_index);
    second_process_from(parent.pid);
    auto program = parent.images.empty() ? nullptr : parent.images.back().program;
    const bool shares = kind == CloneKind::SharedMm;
    std::optional<pid_t> shares_with;
    if (shares) {
        shares_with = parent.shares_mm_with.value_or(parent.pid);
        if (LiveProcess* owner = table_.live(*shares_with)) owner->lent_mm = true;
    }
    const uint32_t index = new_process(child, parent.pid, shares ? ImageOrigin::SharedMm : ImageOrigin::Fork,
                                       std::move(program), shares_with);
    table_.add_task(child, index, true);
    return true;
}

void Recorder::second_process_from(pid_t creator_pid) {
    if (tree_had_two_processes_) return;
    tree_had_two_processes_ = true;
    if (totals_from_backend_) return;
    LiveProcess* creator = table_.live(creator_pid);
    if (!creator) return;
    // Through a live task: a leader that ended by pthread_exit reads no VmHWM.
    const auto status = probe_.status(creator->reader_tid);
    if (!status) return;
    if (status->hwm_bytes) creator->max_resident_bytes = std::max(creator->max_resident_bytes, *status->hwm_bytes);
    // Its falls so far were the tree's own VmHWM's business; from here on
    // they are compared with this reading.
    if (status->rss_bytes) creator->last_read_resident_bytes = *status->rss_bytes;
    // Its other threads run on without the release filter until it is
    // installed in them (release_filter_installed()).
    creator->rebase_next_read = creator->live_tasks > 1;
}

void Recorder::process_adopted(pid_t pid, pid_t ppid, bool exec_seen) {
    if (table_.task(pid)) return;
    second_process_from(ppid);
    if (exec_seen) {
        const uint32_t index = new_process(pid, ppid, ImageOrigin::Exec, intern(probe_.program(pid)), std::nullopt);
        table_.add_task(pid, index, false);
        return;
    }
    // A fork runs its creator's program. A creator already gone (SIGKILLed
    // in the middle of fork, and reaped) cannot say which: the child's own
    // /proc can. (A creator with no image yet is max_rss's own copy before
    // the root's exec: its children own nothing.)
    const Process* creator = live_process(ppid);
    std::shared_ptr<const Program> program;
    if (!creator) program = intern(probe_.program(pid));
    else if (!creator->images.empty()) program = creator->images.back().program;
    const uint32_t index = new_process(pid, ppid, ImageOrigin::Fork, std::move(program), std::nullopt);
    table_.add_task(pid, index, true);
}

void Recorder::thread_adopted(pid_t tid, pid_t tgid) {
    if (table_.task(tid)) return;
    if (auto index = table_.live_index(tgid)) table_.add_task(tid, *index, true);
}

void Recorder::first_stop(pid_t tid) {
    TaskEntry* task = table_.task(tid);
    if (!task) return;
    task->awaiting_first_stop = false;
    Process& proc = table_.process(task->process);
    if (tid != proc.pid || proc.images.empty() || proc.images.back().origin != ImageOrigin::Fork) return;
    // Before the child runs a single instruction, its resident size is all
    // inherited (copied page tables).
    const procfs::Statm inherited = probe_.statm(tid).value_or(procfs::Statm{});
    proc.images.back().inherited_rss_bytes = inherited.resident_bytes;
    if (LiveProcess* live = table_.live(proc.pid)) {
        live->sampled.origin = ImageOrigin::Fork;
        live->sampled.inherited = inherited;
        live->max_resident_bytes = 0;
        live->last_read_resident_bytes = inherited.resident_bytes;
        table_.set_family(proc.pid, live->fork_family);
    }
}

void Recorder::exec_entry(pid_t tid) {
    // The old image is intact until the syscall runs. A failing execve (a PATH
    // search) just reads it again later.
    if (const TaskEntry* task = table_.task(tid)) measure_image(tid, task->process, false);
    // The exec will drop the old image's memory: a release point.
    snapshot(SnapshotCause::Release, tid);
    forget_file_runs(tid);
    released_after_snapshot(tid, ReleaseReach::Own);
}

void Recorder::exec_done(pid_t tid, pid_t former_tid) {
    const TaskEntry* task = table_.task(former_tid != 0 ? former_tid : tid);
    if (!task) task = table_.task(tid);
    if (!task) return;
    const uint32_t index = task->process;
    // A non-leader thread exec'd: it took over the leader's tid. The old
    // leader already reported its exit stop and will never be reaped; the live
    // task count is right as it is.
    if (former_tid != 0 && former_tid != tid) {
        if (TaskEntry* former = table_.task(former_tid); former && former->in_release) release_ended(*former);
        table_.retid_task(former_tid, tid);
    }
    Process& proc = table_.process(index);
    const int64_t t = now_ns();
    drop_cached_file_runs(index);  // a new address space
    if (!proc.images.empty()) proc.images.back().end_ns = t;
    proc.shares_mm_with.reset();  // exec gives the process its own mm
    hand_on_mm(proc.pid);         // CLONE_VM children of it stay in the old one
    Image img;
    img.program = intern(probe_.program(tid));
    img.origin = ImageOrigin::Exec;
    img.start_ns = t;
    proc.images.push_back(std::move(img));
    if (LiveProcess* live = table_.live(proc.pid)) {
        live->sampled.origin = ImageOrigin::Exec;
        live->sampled.inherited = {};
        live->sampled.sharers_unknown = false;
        live->max_resident_bytes = 0;  // a new image starts afresh
        live->last_read_resident_bytes = 0;
        live->rebase_next_read = false;
        live->tasks_in_release = 0;  // its other threads are gone (their reaping finds 0)
        live->reader_tid = proc.pid;
        live->holds_creators_mm = false;
        live->lent_mm = false;  // its new mm is lent to no one yet
        table_.set_family(proc.pid, index);  // its own mm: a family of its own
    }
}

void Recorder::tasks_counted(pid_t pid, uint32_t tasks) {
    if (const auto index = table_.live_index(pid)) {
        Process& proc = table_.process(*index);
        proc.threads = std::max(proc.threads, tasks);
    }
}

void Recorder::task_exiting(pid_t tid) {
    TaskEntry* task = table_.task(tid);
    if (!task || task->exiting) return;
    task->exiting = true;
    const uint32_t index = task->process;
    Process& proc = table_.process(index);
    LiveProcess* live = table_.live(proc.pid);
    if (live && live->live_tasks > 0) live->live_tasks--;
    // All threads share the mm, and VmHWM is the mm's: the last task to stop
    // reads it (and the breakdown) once, for everyone.
    if (live && live->live_tasks > 0) {
        // A leader that ends before its threads leaves /proc/PID reading
        // zeros: the process is read through another of its tasks.
        if (tid == live->reader_tid)
            if (const pid_t other = table_.other_task(index, tid)) live->reader_tid = other;
        return;
    }
    measure_image(tid, index, true);
    // The moment a process ends, its memory and everyone else's are all still
    // in place: a release point.
    snapshot(SnapshotCause::Release, tid);
    forget_file_runs(tid);
    if (live) {
        hand_on_mm(proc.pid);  // CLONE_VM children of it still run in its mm
        live->mm_released = true;
        live->family_at_release = live->sampled.family;
        table_.set_family(proc.pid, kNoFamily);  // it shares nothing any more
    }
}

void Recorder::hand_on_mm(pid_t owner_pid) {
    LiveProcess* owner = table_.live(owner_pid);
    // Most processes never lent their mm: no scan of every live process at
    // each of their exits and execs.
    if (!owner || owner->mm_released || !owner->lent_mm) return;
    // Sharers point at the owner (a sharer's own CLONE_VM children too); the
    // oldest of them holds the mm from now.
    pid_t heir_pid = 0;
    uint32_t heir_serial = UINT32_MAX;
    for (auto&& [pid, live] : table_.live_processes()) {
        const Process& p = table_.process(live.sampled.index);
        if (live.mm_released || p.shares_mm_with != owner_pid || p.serial >= heir_serial) continue;
        heir_serial = p.serial;
        heir_pid = pid;
    }
    if (heir_pid == 0) return;
    for (auto&& [pid, live] : table_.live_processes()) {
        Process& p = table_.process(live.sampled.index);
        if (p.shares_mm_with == owner_pid) p.shares_mm_with = heir_pid;
    }
    LiveProcess* heir = table_.live(heir_pid);
    table_.process(heir->sampled.index).shares_mm_with.reset();
    // The mm is the same: how it is counted (an exec'd image's, or a fork
    // child's with what it inherited), its largest size seen and its family
    // of copy-on-write sharers go with it.
    heir->sampled.origin = owner->sampled.origin;
    heir->sampled.inherited = owner->sampled.inherited;
    heir->sampled.sharers_unknown = owner->sampled.sharers_unknown;
    heir->max_resident_bytes = owner->max_resident_bytes;
    heir->last_read_resident_bytes = owner->last_read_resident_bytes;
    heir->tasks_in_release = owner->tasks_in_release;
    heir->rebase_next_read = owner->rebase_next_read;
    heir->holds_creators_mm = true;
    heir->lent_mm = true;  // the other sharers now point at it
    table_.set_family(heir_pid, owner->sampled.family);
}

void Recorder::task_reaped(pid_t tid, const ExitStatus& exit, OptionalBytes ru_maxrss_bytes,
                           bool ru_maxrss_is_its_own) {
    TaskEntry* task = table_.task(tid);
    if (!task) return;
    if (task->in_release) release_ended(*task);  // killed inside the call
    const uint32_t index = task->process;
    const bool was_exiting = task->exiting;
    table_.remove_task(tid);
    Process& proc = table_.process(index);
    LiveProcess* live = table_.live(proc.pid);
    if (!was_exiting && live && live->live_tasks > 0) live->live_tasks--;  // died without an exit stop
    if (tid != proc.pid) return;  // a thread; the leader is reaped last
    // Its memory went without the last task's exit stop, where the tree is
    // measured before it goes (a task SIGKILLed at another stop can skip it).
    if (live && !live->mm_released && live->sampled.origin != ImageOrigin::SharedMm && !totals_from_backend_ &&
        tally_.release_points_reported)
        tally_.exits_unseen++;

    proc.end_ns = now_ns();
    if (!proc.images.empty() && proc.images.back().end_ns == 0) proc.images.back().end_ns = proc.end_ns;
    proc.exit = exit;
    proc.ru_maxrss_bytes = ru_maxrss_bytes;
    if (ru_maxrss_is_its_own && ru_maxrss_bytes && *ru_maxrss_bytes > proc.peak_rss_bytes && !proc.images.empty()) {
        proc.peak_rss_bytes = *ru_maxrss_bytes;
        proc.images.back().peak_rss_bytes = *ru_maxrss_bytes;
        proc.images.back().measured = true;
    }
    table_.remove_live(proc.pid);
    drop_cached_file_runs(index);
    if (tid == root_pid_) {
        root_exited_ = true;
        result_.exit = exit;
        result_.ru_maxrss_bytes = ru_maxrss_bytes;
    }
}

void Recorder::memory_released(pid_t tid, ReleaseReach reach) {
    if (!table_.task(tid)) return;
    snapshot(SnapshotCause::Release, tid);
    forget_file_runs(tid, true);
    released_after_snapshot(tid, reach);
}

void Recorder::tick() { snapshot(SnapshotCause::Timer); }

void Recorder::seen_alive(pid_t pid) {
    const auto index = table_.live_index(pid);
    if (!index) return;
    const auto status = probe_.status(pid);
    if (!status || !status->hwm_bytes) return;
    Process& proc = table_.process(*index);
    if (status->threads) proc.threads = std::max(proc.threads, *status->threads);
    if (proc.images.empty()) return;
    Image& img = proc.images.back();
    img.hwm_bytes = std::max(img.hwm_bytes.value_or(0), *status->hwm_bytes);
    img.peak_rss_bytes = *img.hwm_bytes;
    img.measured = true;
    proc.peak_rss_bytes = std::max(proc.peak_rss_bytes, img.peak_rss_bytes);
    proc.at_exit = procfs::make_breakdown(status, std::nullopt);
}

void Recorder::degrade(Degradation degradation) {
    result_.degraded = true;
    result_.degradation = degradation;
}

void Recorder::measure_image(pid_t tid, uint32_t index, bool final_exit) {
    Process& proc = table_.process(index);
    if (proc.images.empty()) return;  // the root before its first exec: max_rss's own copy
    Image& img = proc.images.back();
    ImageOrigin origin = img.origin;
    uint64_t inherited_rss_bytes = img.inherited_rss_bytes.value_or(0);
    if (origin == ImageOrigin::SharedMm) {
        const LiveProcess* holder = table_.live(proc.pid);
        if (!holder || !holder->holds_creators_mm) {
            // Its memory is the mm's owner's, measured at the owner's stops.
            img.measured = true;
            return;
        }
        // Its creator left the mm to it: measured as the mm's owner was.
        origin = holder->sampled.origin;
        inherited_rss_bytes = origin == ImageOrigin::Fork ? holder->sampled.inherited.resident_bytes : 0;
    }
    const auto status = probe_.status(tid);
    if (!status || !status->hwm_bytes) return;  // the task vanished (SIGKILL)
    img.hwm_bytes = std::max(img.hwm_bytes.value_or(0), *status->hwm_bytes);
    const LiveProcess* live = tid == proc.pid ? table_.live(proc.pid) : nullptr;
    const uint64_t sampled_max = live ? live->max_resident_bytes : 0;
    if (policy::hwm_was_reset(*img.hwm_bytes, sampled_max)) {
        // At an exit stop after the address space was already reaped
        // (process_mrelease, the OOM reaper) the counters read zero: no reset.
        const bool reaped = final_exit && *status->hwm_bytes == 0 && status->rss_bytes.value_or(0) == 0;
        if (!reaped) warn(Warning{Warning::Kind::HwmReset, proc.pid, *img.hwm_bytes, sampled_max, 0, {}});
        img.hwm_bytes = sampled_max;
    }
    // Snapshots measure the tree where memory falls; a fall elsewhere shows
    // here, as a VmHWM above everything known of this image. Not while the
    // tree is still one process: its VmHWM is the tree's peak then, and no
    // filter stops anything. (A thread other than the leader that execs or
    // exits last stops in the same address space.)
    LiveProcess* owner = table_.live(proc.pid);
    if (owner && watching_unseen_falls()) {
        uint64_t known = std::max(owner->max_resident_bytes, status->rss_bytes.value_or(0));
        if (origin == ImageOrigin::Fork) known = std::max(known, inherited_rss_bytes);
        if (policy::fell_unseen(*img.hwm_bytes, known)) tally_.falls_unseen++;
    }
    if (owner && status->rss_bytes) resident_read(*owner, *status->rss_bytes);
    std::optional<procfs::SmapsRollup> smaps;
    if (final_exit && policy::wants_smaps_at_exit(origin, status->rss_bytes)) smaps = probe_.smaps_rollup(tid);
    uint64_t private_now = 0;
    if (smaps && smaps->private_clean_bytes && smaps->private_dirty_bytes)
        private_now = *smaps->private_clean_bytes + *smaps->private_dirty_bytes;
    const uint64_t peak = policy::image_peak_bytes(origin, *img.hwm_bytes, inherited_rss_bytes, private_now);
    img.peak_rss_bytes = std::max(img.peak_rss_bytes, peak);
    img.measured = true;
    proc.peak_rss_bytes = std::max(proc.peak_rss_bytes, img.peak_rss_bytes);
    if (final_exit) proc.at_exit = procfs::make_breakdown(status, smaps);
}

RunResult Recorder::finish() {
    const int64_t end = now_ns();
    result_.wall_seconds = static_cast<double>(end) / 1e9;
    auto& processes = result_.processes;
    for (size_t i = 0; i < processes.size(); ++i) {
        Process& p = processes[i];
        if (p.end_ns == 0) p.end_ns = end;
        if (const uint32_t parent = table_.parent_of(static_cast<uint32_t>(i)); parent != ProcessTable::kNoParent)
            p.orphaned = processes[parent].end_ns < p.end_ns;
        for (auto& img : p.images)
            if (img.end_ns == 0) img.end_ns = p.end_ns;
        if (!p.images.empty() &&
            std::none_of(p.images.begin(), p.images.end(), [](const Image& image) { return image.measured; }))
            warn(Warning{Warning::Kind::Unmeasured, p.pid, 0, 0, 0, {}});
    }
    result_.peak = compute_tree_peak(processes, tally_);
    if (result_.degraded) result_.peak.method = PeakMethod::DegradedSampling;
    result_.peak.cgroup_bytes = cgroup_peak_bytes_;
    return std::move(result_);
}

}  // namespace max_rss
