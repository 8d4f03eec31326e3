// The engine on constructed event streams: what a backend reports becomes the
// model, with memory read through a fake probe (no kernel involved).
#include <max_rss/engine/recorder.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <thread>
#include "units.hpp"
#include "../e2e/helpers.hpp"

using namespace max_rss;

using max_rss::test::exited;

namespace {


// Memory as the test says it is, per tid.
class FakeProbe final : public MemoryProbe {
public:
    std::map<pid_t, procfs::Status> statuses;
    std::map<pid_t, procfs::Statm> statms;
    std::map<pid_t, procfs::SmapsRollup> smaps;
    std::map<pid_t, Program> programs;
    int smaps_reads = 0;
    // How long each statm read waits, as on a machine busy with other work:
    // time passes for max_rss without its own CPU doing anything.
    std::chrono::milliseconds statm_wait{0};

    void set(pid_t tid, uint64_t hwm_mib, uint64_t rss_mib, uint64_t anon_mib, uint64_t shared_mib = 1) {
        procfs::Status s;
        s.hwm_bytes = hwm_mib * MiB;
        s.rss_bytes = rss_mib * MiB;
        s.rss_anon_bytes = anon_mib * MiB;
        s.rss_file_bytes = shared_mib * MiB;
        s.rss_shmem_bytes = 0;
        statuses[tid] = s;
        statms[tid] = procfs::Statm{rss_mib * MiB, shared_mib * MiB};
    }

    std::optional<procfs::Status> status(pid_t tid) override { return find(statuses, tid); }
    std::optional<procfs::Statm> statm(pid_t tid) override {
        if (statm_wait.count() > 0) std::this_thread::sleep_for(statm_wait);
        return find(statms, tid);
    }
    std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) override {
        ++smaps_reads;
        if (on_smaps_read) on_smaps_read(tid);
        return find(smaps, tid);
    }
    Program program(pid_t pid) override { return find(programs, pid).value_or(Program{{"?"}, "/?"}); }
    // Each process's file pages: those set here, else its statm's shared
    // pages as the first pages of one file all processes map (a library).
    std::map<pid_t, std::vector<procfs::FilePageRun>> file_runs;
    int file_reads = 0;
    bool file_pages(pid_t tid, std::vector<procfs::FilePageRun>& runs) override {
        ++file_reads;
        if (auto it = file_runs.find(tid); it != file_runs.end()) {
            runs.insert(runs.end(), it->second.begin(), it->second.end());
            return true;
        }
        const auto statm = find(statms, tid);
        if (!statm) return false;
        runs.push_back(procfs::FilePageRun{1, 1, 0, statm->shared_bytes / 4096});
        return true;
    }
    // The pid counter, when a test sets it; pairs of pids in one address space.
    std::optional<pid_t> newest;
    std::map<std::pair<pid_t, pid_t>, bool> same_mm;
    std::function<void(pid_t)> on_smaps_read;
    std::optional<pid_t> newest_pid() override { return newest; }
    pid_t pid_max() override { return 32768; }
    std::optional<bool> same_address_space(pid_t a, pid_t b) override {
        auto it = same_mm.find({a, b});
        if (it == same_mm.end()) return std::nullopt;
        return it->second;
    }
    // A process of the tree that the recorder has not been told of.
    void unreported_child(pid_t pid, pid_t ppid, uint64_t rss_mib, uint64_t pss_anon_mib) {
        set(pid, rss_mib, rss_mib, rss_mib - 1);
        statuses[pid].tgid = pid;
        statuses[pid].ppid = ppid;
        smaps[pid].pss_anon_bytes = pss_anon_mib * MiB;
        same_mm[{pid, ppid}] = false;
        newest = std::max(newest.value_or(0), pid);
    }

private:
    template <typename T>
    static std::optional<T> find(const std::map<pid_t, T>& m, pid_t tid) {
        auto it = m.find(tid);
        if (it == m.end()) return std::nullopt;
        return it->second;
    }
};

// The root (pid 100) exec'd `prog` and runs.
void start_root(Recorder& rec, FakeProbe& probe) {
    probe.programs[100] = Program{{"prog"}, "/bin/prog"};
    rec.root_started(100);
    rec.exec_done(100, 100);
}

// The root forks child, which execs /bin/child at once.
void start_exec_child(Recorder& rec, FakeProbe& probe, pid_t child) {
    rec.task_created(child, 100, CloneKind::Fork);
    probe.set(child, 1, 1, 0);
    rec.first_stop(child);
    probe.programs[child] = Program{{"child"}, "/bin/child"};
    rec.exec_done(child, child);
}

}  // namespace

TEST_CASE("recorder: the root owns nothing before its exec, then its image's VmHWM", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    probe.set(100, 120, 10, 9);
    rec.task_exiting(100);
    rec.task_reaped(100, exited(3), 130 * MiB);
    RunResult r = rec.finish();
    REQUIRE(r.processes.size() == 1);
    const Process& p = r.processes[0];
    REQUIRE(p.images.size() == 1);  // no image for max_rss's own fork before the exec
    CHECK(p.images[0].program->argv == std::vector<std::string>{"prog"});
    CHECK(p.peak_rss_bytes == 120 * MiB);
    CHECK(p.at_exit.rss_bytes == 10 * MiB);
    CHECK(r.exit.code == 3);
    CHECK(r.ru_maxrss_bytes == 130 * MiB);
    CHECK(r.peak.tree_bytes == 120 * MiB);  // no snapshot: the largest process bounds it
}

TEST_CASE("recorder: a forked child is charged what it added to what it inherited", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    REQUIRE(rec.task_created(101, 100, CloneKind::Fork));
    probe.set(101, 300, 300, 299);  // at its first stop: 300 MiB inherited
    rec.first_stop(101);
    probe.set(101, 350, 350, 349);  // it grew by 50
    rec.task_exiting(101);
    rec.task_reaped(101, exited(0), 350 * MiB);
    probe.set(100, 300, 300, 299);
    rec.task_exiting(100);
    rec.task_reaped(100, exited(0), 350 * MiB);
    RunResult r = rec.finish();
    REQUIRE(r.processes.size() == 2);
    const Process& child = r.processes[1];
    CHECK(child.ppid == 100);
    REQUIRE(child.images.size() == 1);
    CHECK(child.images[0].origin == ImageOrigin::Fork);
    CHECK(child.images[0].inherited_rss_bytes == 300 * MiB);
    CHECK(child.images[0].hwm_bytes == 350 * MiB);
    CHECK(child.peak_rss_bytes == 50 * MiB);
    CHECK(child.ru_maxrss_bytes == 350 * MiB);  // the kernel's figure, inheritance included
}

TEST_CASE("recorder: a fork child's private pages at exit count its copy-on-write copies", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::Fork);
    probe.set(101, 100, 100, 99);
    rec.first_stop(101);
    // It rewrote everything: RSS and VmHWM unchanged, its pages now private.
    procfs::SmapsRollup rollup;
    rollup.private_clean_bytes = 0;
    rollup.private_dirty_bytes = 100 * MiB;
    probe.smaps[101] = rollup;
    rec.task_exiting(101);
    RunResult r = rec.finish();
    CHECK(r.processes[1].peak_rss_bytes == 100 * MiB);
    CHECK(probe.smaps_reads >= 1);
}

namespace {
// The root holds 100 MiB (and 1 MiB of libraries) and forks 101, which
// inherits all of it.
void fork_with_100_mib(Recorder& rec, FakeProbe& probe) {
    start_root(rec, probe);
    probe.set(100, 101, 101, 100);
    rec.task_created(101, 100, CloneKind::Fork);
    probe.set(101, 101, 101, 100);
    rec.first_stop(101);
}

// smaps_rollup that says only Pss_Anon.
procfs::SmapsRollup pss_anon(uint64_t mib) {
    procfs::SmapsRollup s;
    s.pss_anon_bytes = mib * MiB;
    return s;
}
}  // namespace

TEST_CASE("recorder: copy-on-write copies count in the tree peak, resolved at a release point", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    // The child rewrote all of them: statm cannot tell, Pss_Anon can.
    probe.smaps[100] = pss_anon(100);
    probe.smaps[101] = pss_anon(100);
    rec.memory_released(100);  // the root is about to munmap its copy
    probe.set(100, 101, 1, 0);
    rec.task_exiting(101);
    rec.task_reaped(101, exited(0), std::nullopt);
    rec.task_exiting(100);
    RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.tree_bytes == 201 * MiB);  // both copies and the 1 MiB of libraries once
    CHECK(r.peak.release_points == 3);
}

TEST_CASE("recorder: release points are not skipped because the machine is busy", "[recorder]") {
    // Each snapshot waits 80 ms (two statm reads) without using max_rss's
    // CPU. Counted in wall time, four of them (320 ms) would pass the
    // allowance (200 ms plus a fifth of the run so far) and the fourth would
    // be skipped; counted in CPU time, as it is, none is.
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    probe.set(100, 10, 10, 9);
    rec.task_created(101, 100, CloneKind::Fork);
    probe.set(101, 10, 10, 9);
    rec.first_stop(101);
    procfs::SmapsRollup shared_half;  // the family's 9 MiB, shared: half in each
    shared_half.pss_anon_bytes = 9 * MiB / 2;
    probe.smaps[100] = shared_half;
    probe.smaps[101] = shared_half;
    probe.statm_wait = std::chrono::milliseconds(40);
    for (int i = 0; i < 4; ++i) rec.memory_released(100);
    probe.statm_wait = std::chrono::milliseconds(0);
    rec.task_exiting(101);
    rec.task_reaped(101, exited(0), std::nullopt);
    rec.task_exiting(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.release_points_skipped == 0);
    CHECK(r.peak.release_points == 6);  // the four, and both exits
    CHECK(r.peak.method == PeakMethod::Exact);
}

TEST_CASE("recorder: a fork family whose sharing cannot be read is a bound", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    rec.memory_released(100);  // no smaps_rollup to be had
    RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::LowerBound);
    CHECK(r.peak.inexact_reason == InexactReason::FamiliesUnresolved);
    CHECK(r.peak.tree_bytes == 101 * MiB);
    CHECK(r.peak.upper_bound_bytes == 201 * MiB);
}

TEST_CASE("recorder: a child whose creator died before its fork was reported shares the creator's family",
          "[recorder]") {
    // 101 (a fork of the root, sharing its 100 MiB) is SIGKILLed in the middle
    // of a fork: its child 102 is seen, its fork event never is. Counted alone,
    // 102 made the root's 100 MiB count twice: 201 MiB, labelled exact.
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    probe.smaps[100] = pss_anon(50);
    probe.smaps[101] = pss_anon(50);
    rec.task_exiting(101);                 // killed: its address space goes
    rec.process_adopted(102, 101, false);  // its creator ended without the fork event
    probe.set(102, 101, 101, 100);
    rec.first_stop(102);
    probe.smaps[102] = pss_anon(50);
    rec.task_reaped(101, exited(0), std::nullopt);
    rec.memory_released(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.tree_bytes == 101 * MiB);
}

TEST_CASE("recorder: a child whose creator is not known at all is counted by bounds, never exact", "[recorder]") {
    // Its creator was reaped before the child's first stop came: which live
    // process shares its 100 inherited MiB is unknown; the 200 it grew are
    // surely its own. Adopted with no image (its creator's program unknown),
    // it was counted as owning nothing: 101 MiB, labelled exact.
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    probe.smaps[100] = pss_anon(50);
    probe.smaps[101] = pss_anon(50);
    rec.task_exiting(101);
    rec.task_reaped(101, exited(0), std::nullopt);
    rec.process_adopted(102, 101, false);
    probe.set(102, 101, 101, 100);
    rec.first_stop(102);
    probe.set(102, 301, 301, 300);
    rec.memory_released(100);
    // Its own child shares those pages as well: never counted in full either.
    rec.task_created(103, 102, CloneKind::Fork);
    probe.set(103, 301, 301, 300);
    rec.first_stop(103);
    rec.task_exiting(102);
    rec.task_reaped(102, exited(0), std::nullopt);
    rec.memory_released(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::LowerBound);
    CHECK(r.peak.inexact_reason == InexactReason::FamiliesUnresolved);
    CHECK(r.peak.tree_bytes == 301 * MiB);  // the root's 100, the 200 grown, 1 of libraries
    CHECK(r.peak.upper_bound_bytes == 701 * MiB);  // 100 + 300 + 300 + 1
}

TEST_CASE("recorder: a family's child not reported yet is read with the family", "[recorder]") {
    // 101 forked 102 and 103; their events have not been handled (the tracer
    // is measuring): four processes share the 100 MiB, 25 each. Without the
    // two, the family summed 50 MiB.
    FakeProbe probe;
    probe.newest = 101;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    probe.smaps[100] = pss_anon(25);
    probe.smaps[101] = pss_anon(25);
    probe.unreported_child(102, 101, 101, 25);
    probe.unreported_child(103, 101, 101, 25);
    probe.unreported_child(104, 101, 101, 25);
    probe.same_mm[{104, 101}] = true;  // a vfork child: 101's own memory, not another share
    rec.memory_released(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.tree_bytes == 101 * MiB);
}

TEST_CASE("recorder: a family's child reported but not at its first stop yet is read with the family",
          "[recorder]") {
    // Its fork event was handled, its first stop not yet: until then it owns
    // nothing by the table, but it maps a third of the family's pages.
    FakeProbe probe;
    probe.newest = 101;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    rec.task_created(102, 101, CloneKind::Fork);
    probe.set(102, 101, 101, 100);
    probe.smaps[100] = pss_anon(34);
    probe.smaps[101] = pss_anon(33);
    probe.smaps[102] = pss_anon(33);
    rec.memory_released(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.tree_bytes == 101 * MiB);
}

TEST_CASE("recorder: a family in which a child is made while it is read is read again", "[recorder]") {
    FakeProbe probe;
    probe.newest = 101;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    fork_with_100_mib(rec, probe);
    probe.smaps[100] = pss_anon(50);
    probe.smaps[101] = pss_anon(50);
    // 100 is read at 50 MiB; then 101 forks 102: from now on a third each.
    // The sum of that read (50 + 33) is no moment's.
    bool forked = false;
    probe.on_smaps_read = [&](pid_t tid) {
        if (tid != 100 || forked) return;
        forked = true;
        probe.smaps[100] = pss_anon(34);
        probe.smaps[101] = pss_anon(33);
        probe.unreported_child(102, 101, 101, 33);
    };
    probe.smaps_reads = 0;
    rec.memory_released(100);
    const RunResult r = rec.finish();
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(r.peak.tree_bytes == 101 * MiB);
    CHECK(probe.smaps_reads >= 5);  // 100 and 101, then 100, 101 and 102
}

TEST_CASE("recorder: a leader that ends before its threads is read through a live thread", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::Thread);
    rec.first_stop(101);
    rec.task_exiting(100);            // pthread_exit in main: /proc/100 reads zeros now
    probe.statms[100] = procfs::Statm{0, 0};
    probe.set(101, 150, 150, 149);
    rec.memory_released(101);
    RunResult r = rec.finish();
    CHECK(r.peak.tree_bytes == 150 * MiB);
}

TEST_CASE("recorder: vfork and CLONE_VM children own nothing and name whose memory they use", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::SharedMm);
    rec.first_stop(101);
    probe.set(101, 500, 500, 499);  // the parent's mm: never charged to the child
    rec.task_exiting(101);
    RunResult r = rec.finish();
    const Process& child = r.processes[1];
    CHECK(child.shares_mm_with == 100);
    CHECK(child.images[0].origin == ImageOrigin::SharedMm);
    CHECK(child.images[0].measured);
    CHECK(child.peak_rss_bytes == 0);
    CHECK(probe.smaps_reads == 0);
}

TEST_CASE("recorder: threads belong to their process; the last one to exit reads the peak", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::Thread);
    rec.task_created(102, 101, CloneKind::Thread);
    rec.first_stop(101);
    rec.first_stop(102);
    probe.set(100, 10, 10, 9);
    rec.task_exiting(101);  // not the last: nothing read
    rec.task_exiting(100);
    CHECK(rec.finish().processes[0].peak_rss_bytes == 0);

    FakeProbe probe2;
    Recorder rec2({{"prog"}, 0, 2048}, probe2);
    start_root(rec2, probe2);
    rec2.task_created(101, 100, CloneKind::Thread);
    rec2.task_exiting(100);
    probe2.set(101, 200, 20, 19);
    rec2.task_exiting(101);  // the last task: reads through its own tid
    rec2.task_reaped(101, exited(0), std::nullopt);
    rec2.task_reaped(100, exited(0), std::nullopt);
    RunResult r = rec2.finish();
    REQUIRE(r.processes.size() == 1);
    CHECK(r.processes[0].threads == 2);
    CHECK(r.processes[0].peak_rss_bytes == 200 * MiB);
    CHECK(r.exit.code == 0);
}

TEST_CASE("recorder: exec from a non-leader thread gives one process two images", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::Thread);
    rec.first_stop(101);
    probe.set(101, 200, 200, 199);
    rec.exec_entry(101);           // the old image, read through the exec'ing thread
    rec.task_exiting(100);         // the leader goes
    probe.programs[100] = Program{{"next"}, "/bin/next"};
    rec.exec_done(100, 101);       // 101 takes over tid 100
    probe.set(100, 10, 10, 9);
    rec.task_exiting(100);
    rec.task_reaped(100, exited(0), std::nullopt);
    RunResult r = rec.finish();
    REQUIRE(r.processes.size() == 1);
    const Process& p = r.processes[0];
    REQUIRE(p.images.size() == 2);
    CHECK(p.images[0].peak_rss_bytes == 200 * MiB);
    CHECK(p.images[1].program->argv == std::vector<std::string>{"next"});
    CHECK(p.images[1].peak_rss_bytes == 10 * MiB);
    CHECK(p.exit.code == 0);
}

TEST_CASE("recorder: a snapshot counts what processes hold at once; a VmHWM below it is flagged", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 20'000'000, 2048}, probe);
    start_root(rec, probe);
    start_exec_child(rec, probe, 101);
    probe.set(100, 150, 150, 149);
    probe.set(101, 60, 60, 59);
    rec.tick();
    rec.task_exiting(101);
    // The root then wrote 5 to clear_refs: VmHWM fell to 10 MiB.
    probe.set(100, 10, 10, 9);
    rec.task_exiting(100);
    RunResult r = rec.finish();
    // 149 + 59 private, the 1 MiB of shared pages once.
    CHECK(r.peak.sampled_bytes == 209 * MiB);
    CHECK(r.peak.method == PeakMethod::Exact);  // the tick and both exits (release points)
    REQUIRE(r.timeline.points.size() == 3);
    CHECK(r.timeline.points[0].top.size() == 2);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == Warning::Kind::HwmReset);
    CHECK(r.warnings[0].pid == 100);
    CHECK(r.processes[0].peak_rss_bytes == 150 * MiB);  // the sampled figure
}

TEST_CASE("recorder: a fall between readings is unseen unless a release call of its own may explain it",
          "[recorder]") {
    // Readings of the tree are taken at the child's release stops (ticks this
    // close together would be skipped).
    auto run = [](bool through_release) {
        FakeProbe probe;
        Recorder rec({{"prog"}, 20'000'000, 2048}, probe);
        start_root(rec, probe);
        probe.set(100, 100, 100, 99);
        start_exec_child(rec, probe, 101);  // 1 MiB
        // The root stops at a munmap: read at 100 and resumed into the call,
        // which it has not run yet at the next reading (a loaded machine).
        rec.memory_released(100);
        rec.memory_released(101);
        probe.set(100, 100, 40, 39);  // the call ran
        rec.memory_released(101);     // before the root's next stop: the call's doing
        rec.task_stopped(*rec.table().task(100));
        rec.memory_released(101);     // after it: the size taken again
        probe.set(101, 50, 50, 49);   // the child grows (nothing stops there)
        if (through_release) rec.memory_released(100);  // both read at their height
        probe.set(100, 100, 5, 4);    // the root's 35 MiB go
        rec.task_stopped(*rec.table().task(101));
        rec.memory_released(101);
        rec.task_exiting(101);
        rec.task_exiting(100);
        return rec.finish();
    };
    const RunResult seen = run(true);
    CHECK(seen.peak.method == PeakMethod::Exact);
    CHECK(seen.peak.tree_bytes == 100 * MiB);  // 99 + 0 private, 1 shared, at the first stop
    // By a call nothing stops at, after the root was last read at 40 and the
    // child grew to 50: no snapshot saw more than 100 at once, and no VmHWM
    // rose past a reading, but the root was read lower with no call of its
    // own between. The peak is then only a lower bound.
    const RunResult unseen = run(false);
    CHECK(unseen.peak.method == PeakMethod::LowerBound);
    CHECK(unseen.peak.inexact_reason == InexactReason::FallsUnseen);
    REQUIRE(unseen.peak.upper_bound_bytes);
    CHECK(*unseen.peak.upper_bound_bytes >= 140 * MiB);
}

TEST_CASE("recorder: file pages several processes hold count once each, by their union", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    start_exec_child(rec, probe, 101);
    // Each maps 1 MiB of one library and 50 MiB of its own half of a 100 MiB
    // shared buffer (file 2): 101 MiB of file pages, 51 in each process.
    probe.set(100, 52, 52, 1, 51);
    probe.set(101, 52, 52, 1, 51);
    const uint64_t half = 50 * MiB / 4096;
    probe.file_runs[100] = {{1, 1, 0, 256}, {1, 2, 0, half}};
    probe.file_runs[101] = {{1, 1, 0, 256}, {1, 2, half, half}};
    SECTION("read: the exact total") {
        rec.task_exiting(101);
        rec.task_exiting(100);
        RunResult r = rec.finish();
        CHECK(r.peak.sampled_bytes == 103 * MiB);  // 1 + 1 anonymous, 101 of file pages
        CHECK(r.peak.method == PeakMethod::Exact);
    }
    SECTION("not readable: bounds, never the largest set presented as exact") {
        probe.file_runs.clear();
        struct Unreadable final : public MemoryProbe {
            FakeProbe& real;
            explicit Unreadable(FakeProbe& p) : real(p) {}
            std::optional<procfs::Status> status(pid_t tid) override { return real.status(tid); }
            std::optional<procfs::Statm> statm(pid_t tid) override { return real.statm(tid); }
            std::optional<procfs::SmapsRollup> smaps_rollup(pid_t tid) override { return real.smaps_rollup(tid); }
            Program program(pid_t pid) override { return real.program(pid); }
        } unreadable(probe);
        Recorder blind({{"prog"}, 0, 2048}, unreadable);
        start_root(blind, probe);
        blind.task_created(101, 100, CloneKind::Fork);
        blind.first_stop(101);
        blind.exec_done(101, 101);
        blind.task_exiting(101);
        blind.task_exiting(100);
        RunResult r = blind.finish();
        CHECK(r.peak.sampled_bytes == 53 * MiB);  // 1 + 1 anonymous, the largest set (51)
        CHECK(r.peak.method == PeakMethod::LowerBound);
        CHECK(r.peak.inexact_reason == InexactReason::FilePagesUnresolved);
        REQUIRE(r.peak.upper_bound_bytes);
        CHECK(*r.peak.upper_bound_bytes == 104 * MiB);  // both sets in full
    }
}

TEST_CASE("recorder: a process's file pages are read again once its shared figure moves", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    for (pid_t child : {101, 102, 103, 104}) start_exec_child(rec, probe, child);
    const uint64_t half = 50 * MiB / 4096;
    probe.set(100, 52, 52, 1, 51);  // a library and the first half of file 2
    for (pid_t child : {101, 102, 103, 104}) {
        probe.set(child, 2, 2, 1, 1);  // the library
        probe.file_runs[child] = {{1, 1, 0, 256}};
    }
    probe.file_runs[100] = {{1, 1, 0, 256}, {1, 2, 0, half}};
    rec.task_exiting(102);  // all five read
    CHECK(probe.file_reads == 5);
    SECTION("an exit: the others' sets are kept while their figures stay") {
        // 101 maps the other half: read again; 100, 103 and 104 are not.
        probe.set(101, 52, 52, 1, 51);
        probe.file_runs[101] = {{1, 1, 0, 256}, {1, 2, half, half}};
        rec.task_exiting(103);
        CHECK(probe.file_reads == 6);
        rec.task_exiting(104);
        rec.task_exiting(101);
        rec.task_exiting(100);
        RunResult r = rec.finish();
        CHECK(r.peak.sampled_bytes == 105 * MiB);  // 5 anonymous, the library and both halves
        CHECK(r.peak.method == PeakMethod::Exact);
    }
    SECTION("after its own release point, a process's set is read again") {
        rec.memory_released(103);
        CHECK(probe.file_reads == 5);  // its snapshot is before the call: the sets stand
        rec.task_exiting(104);
        CHECK(probe.file_reads == 5 + 1);  // 103; the others' sets stand
    }
}

TEST_CASE("recorder: a process that outlives its creator is an orphan", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    rec.task_created(101, 100, CloneKind::Fork);
    rec.first_stop(101);
    rec.task_exiting(100);
    rec.task_reaped(100, exited(0), std::nullopt);
    CHECK(rec.root_exited());
    rec.task_exiting(101);
    rec.task_reaped(101, exited(0), std::nullopt);
    RunResult r = rec.finish();
    CHECK_FALSE(r.processes[0].orphaned);
    CHECK(r.processes[1].orphaned);
}

TEST_CASE("recorder: sampling keeps the largest VmHWM seen, and wait4's figure for a childless process",
          "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 20'000'000, 2048}, probe);
    probe.programs[100] = Program{{"prog"}, "/bin/prog"};
    rec.root_started(100, true);
    probe.set(100, 80, 80, 79);
    rec.seen_alive(100);
    probe.set(100, 90, 20, 19);
    rec.seen_alive(100);
    CHECK(rec.live_process(100)->peak_rss_bytes == 90 * MiB);
    rec.task_reaped(100, exited(0), 95 * MiB, true);  // it peaked once more after the last sample
    RunResult r = rec.finish();
    CHECK(r.processes[0].peak_rss_bytes == 95 * MiB);
}

TEST_CASE("recorder: a task it never heard of is ignored", "[recorder]") {
    FakeProbe probe;
    Recorder rec({{"prog"}, 0, 2048}, probe);
    start_root(rec, probe);
    CHECK_FALSE(rec.task_created(201, 200, CloneKind::Fork));  // creator unknown
    rec.first_stop(999);
    rec.exec_entry(999);
    rec.task_exiting(999);
    rec.task_reaped(999, exited(1), std::nullopt);
    probe.set(100, 5, 5, 4);
    rec.task_exiting(100);
    RunResult r = rec.finish();
    CHECK(r.processes.size() == 1);
    CHECK(r.warnings.empty());
    CHECK_FALSE(r.exit.code);  // 999's status is nobody's
}
