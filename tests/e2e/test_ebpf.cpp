// The eBPF backend on the same fixture programs as the ptrace backend, with
// the same tolerances ([N - 0.5, N + 2.5] MiB for "N MiB"). Where the kernel
// cannot load the backend (no root, no BTF, built without it), each test
// prints one line "skipped: why" and passes; CI runs as root with BTF, so
// there they run.
#include "helpers.hpp"

#include <max_rss/backends/backend.hpp>
#include <max_rss/engine/measure.hpp>
#include <max_rss/os/launch.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <catch2/catch.hpp>

#ifdef MAX_RSS_HAVE_EBPF
#include "ebpf_program.hpp"
#endif

#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

using namespace max_rss;
using namespace max_rss::test;

namespace {

// Why the backend cannot run here, or empty when it can.
const std::string& unavailable_because() {
    static const std::string why = [] {
        try {
            make_backend(BackendKind::Ebpf);
            return std::string();
        } catch (const LaunchError& e) {
            return std::string(e.what());
        }
    }();
    return why;
}

bool skipped() {
    if (unavailable_because().empty()) return false;
    std::printf("skipped: %s\n", unavailable_because().c_str());
    return true;
}

RunResult run_ebpf(std::vector<std::string> argv, int64_t sample_interval_ns = MeasureOptions{}.sample_interval_ns) {
    MeasureOptions options;
    options.argv = std::move(argv);
    options.backend = BackendKind::Ebpf;
    options.sample_interval_ns = sample_interval_ns;
    return measure(options);
}

void check_mib_near(uint64_t bytes, double n) {
    CHECK(mib(bytes) >= n - 0.5);
    CHECK(mib(bytes) <= n + 2.5);
}

// An environment variable set for a scope (max_rss reads these at each load).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
    ~ScopedEnv() { ::unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
};

bool has_warning(const RunResult& r, Warning::Kind kind) {
    for (const Warning& w : r.warnings)
        if (w.kind == kind) return true;
    return false;
}

}  // namespace

TEST_CASE("ebpf: one process's peak, freed or not before exit, and its exit status", "[ebpf]") {
    if (skipped()) return;
    // wait4's ru_maxrss of the root counts its image before exec too: a
    // fork of this test process (fat under AddressSanitizer, which keeps
    // the kernel BTF libbpf parsed). It is what the kernel says, so it is
    // checked against the larger of the two, not against the program alone.
    const auto own = procfs::read_status(::getpid());
    REQUIRE(own);
    REQUIRE(own->rss_bytes);
    const double spawner_mib = mib(*own->rss_bytes);
    auto r = run_ebpf({fixture("touch"), "100"});
    CHECK(r.backend == BackendKind::Ebpf);
    CHECK(r.exit.code == 0);
    REQUIRE(r.processes.size() == 1);
    check_mib_near(r.peak.tree_bytes, 100);
    CHECK(r.processes[0].images.at(0).program->argv == std::vector<std::string>{fixture("touch"), "100"});
    REQUIRE(r.ru_maxrss_bytes);
    CHECK(mib(*r.ru_maxrss_bytes) >= 100 - 0.5);
    CHECK(mib(*r.ru_maxrss_bytes) <= std::max(100.0, spawner_mib) + 2.5);

    auto freed = run_ebpf({fixture("touch_free_touch"), "200", "10"});
    check_mib_near(freed.peak.tree_bytes, 200);
    REQUIRE(freed.processes[0].at_exit.rss_bytes);
    CHECK(mib(*freed.processes[0].at_exit.rss_bytes) < 15);

    auto killed = run_ebpf({fixture("self_kill"), "100"});
    CHECK(killed.exit.signal == SIGKILL);
    check_mib_near(killed.peak.tree_bytes, 100);
    CHECK(r.warnings.empty());
}

TEST_CASE("ebpf: the peak is on the timeline, at a time inside the run, in time order", "[ebpf]") {
    if (skipped()) return;
    // The kernel side stamps a new peak with the clock once per scheduler
    // tick (a grower makes one at every page fault); the point must still
    // carry the peak, at a time after the program started and before the
    // run ended, and never before a point already on the timeline. Without
    // samples (interval 0) no earlier point can lend the peak its time: a
    // peak whose time was never taken would sit at 0.
    for (const int64_t interval_ns : {MeasureOptions{}.sample_interval_ns, int64_t{0}}) {
        CAPTURE(interval_ns);
        auto r = run_ebpf({fixture("touch_free_touch"), "200", "10"}, interval_ns);
        check_mib_near(r.peak.tree_bytes, 200);
        const auto& points = r.timeline.points;
        REQUIRE(!points.empty());
        for (size_t i = 1; i < points.size(); i++) CHECK(points[i - 1].t_ns <= points[i].t_ns);
        const auto top = std::max_element(points.begin(), points.end(),
                                          [](const auto& a, const auto& b) { return a.total_bytes < b.total_bytes; });
        CHECK(top->total_bytes == r.peak.tree_bytes);
        CHECK(top->t_ns > 0);
        CHECK(static_cast<double>(top->t_ns) <= r.wall_seconds * 1e9);
    }
}

TEST_CASE("ebpf: threads are counted, not listed, and their memory is summed", "[ebpf]") {
    if (skipped()) return;
    auto r = run_ebpf({fixture("threads_touch"), "4", "50"});
    REQUIRE(r.processes.size() == 1);
    CHECK(r.processes[0].threads == 5);
    check_mib_near(r.peak.tree_bytes, 200);
}

TEST_CASE("ebpf: a child forked by a non-leader thread is its process's child", "[ebpf]") {
    // Threads are only counted in the kernel: the fork record must name the
    // creating process, not the thread, or the child would be an orphan.
    if (skipped()) return;
    check_thread_fork(run_ebpf({fixture("thread_fork"), "30"}), 30);
    // Not the root: its task count and exit come from its own exit, not wait4.
    check_thread_fork(run_ebpf({"/bin/sh", "-c", fixture("thread_fork") + " 30; exit 0"}), 30);
    // Its leader gone first (pthread_exit): the process ends with its last thread.
    check_thread_fork(run_ebpf({"/bin/sh", "-c", fixture("thread_fork") + " 30 leader-first; exit 0"}), 30);
}

TEST_CASE("ebpf: an exec ends an image at its peak and starts another", "[ebpf]") {
    if (skipped()) return;
    auto r = run_ebpf({fixture("touch_exec"), "200", fixture("touch"), "10"});
    REQUIRE(r.processes.size() == 1);
    const auto& images = r.processes[0].images;
    REQUIRE(images.size() == 2);
    CHECK(images[1].program->argv == std::vector<std::string>{fixture("touch"), "10"});
    CHECK(images[1].program->exe == fixture("touch"));
    check_mib_near(images[0].peak_rss_bytes, 200);
    check_mib_near(images[1].peak_rss_bytes, 10);
    check_mib_near(r.peak.tree_bytes, 200);

    auto from_thread = run_ebpf({fixture("exec_thread"), "100", fixture("touch"), "10"});
    REQUIRE(from_thread.processes.size() == 1);
    REQUIRE(from_thread.processes[0].images.size() == 2);
    check_mib_near(from_thread.processes[0].images[0].peak_rss_bytes, 100);
    check_mib_near(from_thread.processes[0].images[1].peak_rss_bytes, 10);
}

TEST_CASE("ebpf: fork, vfork, posix_spawn and CLONE_VM children are charged what is theirs", "[ebpf]") {
    if (skipped()) return;
    auto r = run_ebpf({fixture("fork_exec"), "300", fixture("exit_code"), "3"});
    REQUIRE(r.processes.size() == 2);
    const Process& child = r.processes[1];
    CHECK(child.ppid == r.processes[0].pid);
    CHECK(child.exit.code == 3);  // from the kernel: max_rss did not wait for it
    REQUIRE(child.images.size() == 2);
    CHECK(child.images[0].origin == ImageOrigin::Fork);
    CHECK(mib(child.peak_rss_bytes) < 5);
    REQUIRE(child.ru_maxrss_bytes);
    CHECK(mib(*child.ru_maxrss_bytes) > 295);
    check_mib_near(r.processes[0].peak_rss_bytes, 300);

    for (const char* launcher : {"vfork_exec", "posix_spawn_exec"}) {
        INFO(launcher);
        auto s = run_ebpf({fixture(launcher), "200", fixture("touch"), "10"});
        REQUIRE(s.processes.size() == 2);
        REQUIRE(s.processes[1].images.size() == 2);
        CHECK(s.processes[1].images[0].origin == ImageOrigin::SharedMm);
        CHECK(s.processes[1].images[0].peak_rss_bytes == 0);
        check_mib_near(s.processes[1].images[1].peak_rss_bytes, 10);
        CHECK(mib(s.peak.tree_bytes) < 214);
    }

    auto vm = run_ebpf({fixture("clone_vm"), "100"});
    REQUIRE(vm.processes.size() == 2);
    REQUIRE(vm.processes[1].shares_mm_with);
    CHECK(vm.processes[1].peak_rss_bytes == 0);
    check_mib_near(vm.peak.tree_bytes, 100);

    // Its creator exits (or execs an image of 30 MiB) and leaves the mm to it.
    auto left = run_ebpf({fixture("clone_vm_leave"), "exit", "60", "40"});
    REQUIRE(left.processes.size() == 2);
    CHECK_FALSE(left.processes[1].shares_mm_with);
    check_mib_near(left.processes[0].peak_rss_bytes, 60);
    check_mib_near(left.processes[1].peak_rss_bytes, 100);
    check_mib_near(left.peak.tree_bytes, 100);
    auto execd = run_ebpf({fixture("clone_vm_leave"), "exec", "60", "40", "30"});
    REQUIRE(execd.processes.size() == 2);
    check_mib_near(execd.processes[1].peak_rss_bytes, 100);
    check_mib_near(execd.peak.tree_bytes, 131);

    auto worker = run_ebpf({fixture("fork_worker"), "100", "50"});
    REQUIRE(worker.processes.size() == 2);
    check_mib_near(worker.processes[1].peak_rss_bytes, 50);
    check_mib_near(worker.peak.tree_bytes, 150);
}

TEST_CASE("ebpf: children at once are summed, one after another are not, shared pages once", "[ebpf]") {
    if (skipped()) return;
    auto at_once = run_ebpf({fixture("children_touch"), "concurrent", "4", "50"});
    REQUIRE(at_once.processes.size() == 5);
    CHECK(mib(at_once.peak.tree_bytes) >= 200);
    CHECK(mib(at_once.peak.tree_bytes) <= 206);

    auto in_turn = run_ebpf({fixture("children_touch"), "sequential", "4", "50"});
    CHECK(mib(in_turn.peak.tree_bytes) >= 50);
    CHECK(mib(in_turn.peak.tree_bytes) <= 54);

    auto spawned = run_ebpf({fixture("children_touch"), "spawn", "4", "50"});
    CHECK(mib(spawned.peak.tree_bytes) >= 200);
    CHECK(mib(spawned.peak.tree_bytes) <= 208);

    auto shared = run_ebpf({fixture("shared_map"), "100", "4"});
    REQUIRE(shared.processes.size() == 5);
    CHECK(mib(shared.peak.tree_bytes) >= 100);
    CHECK(mib(shared.peak.tree_bytes) <= 110);
}

TEST_CASE("ebpf: a descendant that outlives the root is followed to its end", "[ebpf]") {
    if (skipped()) return;
    auto r = run_ebpf({fixture("orphan"), "100", "300"});
    REQUIRE(r.processes.size() == 3);
    // Not max_rss's child: its end and its status came from the kernel.
    const Process& orphan = r.processes.back();
    CHECK((orphan.orphaned && orphan.exit.code == 0 && r.exit.code == 0));
    CHECK(orphan.end_ns > r.processes.front().end_ns);
    check_mib_near(orphan.peak_rss_bytes, 100);

    auto many = run_ebpf({fixture("many_children"), "2000"});
    REQUIRE(many.processes.size() == 2001);
    CHECK_FALSE(has_warning(many, Warning::Kind::EventsLost));
}

// Whether name is in the kernel's BTF.
bool kernel_btf_has(const char* name) {
    const auto btf = procfs::read_file("/sys/kernel/btf/vmlinux");
    return btf && btf->find(name) != std::string::npos;
}

// Whether this kernel has the tracepoint the exact copy-on-write count needs
// (mod_memcg_lruvec_state, Linux >= 6.14).
bool kernel_counts_anon_mapped() { return kernel_btf_has("btf_trace_mod_memcg_lruvec_state"); }

// Whether this kernel has the kfuncs the kernel side wakes its reader with
// (bpf_send_signal_task: Linux >= 6.13; the other two are older).
bool kernel_has_wake_kfuncs() { return kernel_btf_has("bpf_send_signal_task"); }

TEST_CASE("ebpf: instant overlaps and copy-on-write copies, within 3% of the cgroup's peak", "[ebpf][exact]") {
    if (skipped()) return;
    if (!kernel_counts_anon_mapped()) {
        // Without it: the headline is the lower bound, and a warning gives
        // the upper one, which holds the truth.
        std::printf("skipped: this kernel has no mod_memcg_lruvec_state tracepoint (Linux < 6.14): bounds only\n");
        auto r = run_ebpf({fixture("cow_worker"), "100", "200"});
        if (mib(r.peak.tree_bytes) >= 200) return;  // the rmap hooks did it
        REQUIRE(has_warning(r, Warning::Kind::CowBounds));
        for (const Warning& w : r.warnings)
            if (w.kind == Warning::Kind::CowBounds) CHECK(mib(w.other_bytes) >= 200);
        return;
    }
    for (const auto& [shape, true_mib] : kPeakShapes) {
        MeasureOptions options;
        options.argv = {fixture("peak_shapes"), shape, "100"};
        options.backend = BackendKind::Ebpf;
        options.use_cgroup = true;
        const RunResult r = measure(options);
        INFO(shape << ": tree " << mib(r.peak.tree_bytes) << " MiB, truth " << true_mib << " MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK_FALSE(has_warning(r, Warning::Kind::CowBounds));
        CHECK(mib(r.peak.tree_bytes) >= true_mib);
        CHECK(mib(r.peak.tree_bytes) <= true_mib + 3);
        // Exact, or (where processes that each map files were alive at the
        // peak: the kernel side counts the largest file set, not their
        // union) a lower bound for that reason alone, with an upper bound
        // as close as the few MiB of libraries the processes map.
        if (r.peak.method != PeakMethod::Exact) {
            CHECK(r.peak.method == PeakMethod::LowerBound);
            CHECK(r.peak.inexact_reason == InexactReason::FilePagesUnresolved);
            REQUIRE(r.peak.upper_bound_bytes);
            INFO("upper bound " << mib(*r.peak.upper_bound_bytes) << " MiB");
            CHECK(*r.peak.upper_bound_bytes > r.peak.tree_bytes);
            CHECK(mib(*r.peak.upper_bound_bytes) <= true_mib + 6);
        }
        // The parent is gone when the daemon's peak comes: one address
        // space maps files then, and nothing bounds the peak but itself.
        if (std::string_view(shape) == "daemon") CHECK(r.peak.method == PeakMethod::Exact);
        if (r.peak.cgroup_bytes) {
            INFO("cgroup peak " << mib(*r.peak.cgroup_bytes) << " MiB");
            CHECK(mib(r.peak.tree_bytes) >= mib(*r.peak.cgroup_bytes) * 0.97);
            CHECK(mib(r.peak.tree_bytes) <= mib(*r.peak.cgroup_bytes) * 1.03);
        }
    }
    // A worker rewriting all it inherited, held: 200 MiB at once, and the
    // worker's own peak is its 100 MiB of copies (as under ptrace).
    auto cow = run_ebpf({fixture("cow_worker"), "100", "200"});
    CHECK(mib(cow.peak.tree_bytes) >= 200);
    CHECK(mib(cow.peak.tree_bytes) <= 204);
    REQUIRE(cow.processes.size() == 2);
    check_mib_near(cow.processes[1].peak_rss_bytes, 100);
}

TEST_CASE("ebpf: memory that falls where ptrace does not stop is counted at its height", "[ebpf][exact]") {
    // The shapes the ptrace backend can only bound (a file mmap(MAP_FIXED)
    // over the parent's 100 MiB, an open(O_TRUNC) of the file it maps, the
    // same after the parent was read at its height): the kernel side sees
    // every counter change, calls or no calls.
    if (skipped()) return;
    if (!kernel_counts_anon_mapped()) {
        std::printf("skipped: this kernel has no mod_memcg_lruvec_state tracepoint (Linux < 6.14)\n");
        return;
    }
    for (const char* shape : {"fixed_zero", "otrunc", "read_then_fall"}) {
        const RunResult r = run_ebpf({fixture("peak_shapes"), shape, "100"});
        INFO(shape << ": tree " << mib(r.peak.tree_bytes) << " MiB, truth 120 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(mib(r.peak.tree_bytes) >= 120);
        CHECK(mib(r.peak.tree_bytes) <= 123);
        if (r.peak.method != PeakMethod::Exact) {
            CHECK(r.peak.inexact_reason == InexactReason::FilePagesUnresolved);
            REQUIRE(r.peak.upper_bound_bytes);
            CHECK(mib(*r.peak.upper_bound_bytes) <= 126);
        }
    }
}

// Two children each fill their own half of a 100 MiB shared mapping and
// hold it: the tree holds 100 MiB of shmem, each process 50. The kernel
// side counts how many file and shmem pages each address space maps, not
// which, so its total counts the larger set (50): never reported as exact,
// and the upper bound it gives holds the truth. (ptrace unites the sets:
// test_exact_peak.cpp.) Tolerance on the bound: the three processes'
// libraries, counted once per process.
TEST_CASE("ebpf: file and shmem pages several processes hold are a bound, never called exact", "[ebpf][exact]") {
    if (skipped()) return;
    for (const char* kind : {"shmem", "file"}) {
        auto r = run_ebpf({fixture("shared_parts"), kind, "100", "2"});
        INFO(kind << ": tree " << mib(r.peak.tree_bytes) << " MiB, truth 100 MiB + baseline");
        CHECK(r.exit.code == 0);
        CHECK(r.peak.method == PeakMethod::LowerBound);
        CHECK(r.peak.inexact_reason == InexactReason::FilePagesUnresolved);
        CHECK(mib(r.peak.tree_bytes) >= 50);
        CHECK(mib(r.peak.tree_bytes) < 100);
        REQUIRE(r.peak.upper_bound_bytes);
        INFO("upper bound " << mib(*r.peak.upper_bound_bytes) << " MiB");
        CHECK(mib(*r.peak.upper_bound_bytes) >= 100);
        CHECK(mib(*r.peak.upper_bound_bytes) <= 100 + 8);
    }
    // One process alone maps files: exact, as before.
    auto alone = run_ebpf({fixture("touch"), "100"});
    CHECK(alone.peak.method == PeakMethod::Exact);
}

TEST_CASE("ebpf: the libbpf loader, the fallback for other kernels, measures as the light one does", "[ebpf][exact]") {
    if (skipped()) return;
    // The light object (the default here) and libbpf's skeleton are built
    // from one source; the second is what kernels without the light
    // object's attach points get. Both are exercised here.
    const ScopedEnv libbpf("MAX_RSS_EBPF_LOADER", "libbpf");
    auto cow = run_ebpf({fixture("cow_worker"), "100", "200"});
    CHECK(cow.exit.code == 0);
    REQUIRE(cow.processes.size() == 2);
    if (kernel_counts_anon_mapped()) {
        CHECK(mib(cow.peak.tree_bytes) >= 200);
        CHECK(mib(cow.peak.tree_bytes) <= 204);
        check_mib_near(cow.processes[1].peak_rss_bytes, 100);
    }
    auto threads = run_ebpf({fixture("threads_touch"), "4", "50"});
    CHECK(threads.processes.at(0).threads == 5);
    check_mib_near(threads.peak.tree_bytes, 200);
}

TEST_CASE("ebpf: SIGKILL of max_rss takes its whole tree along, with either loader", "[ebpf][signals]") {
    if (skipped()) return;
    for (const char* loader : {"light", "libbpf"}) {
        INFO("loader " << loader);
        // None of the tree is traced: only the kernel side's guard (max_rss's
        // own exit, seen in the kernel) can end it.
        check_sigkill_ends_tree({"-q", "--backend", "ebpf"}, {std::string("MAX_RSS_EBPF_LOADER=") + loader});
    }
}

TEST_CASE("ebpf: programs that use ptrace run as without max_rss", "[ebpf]") {
    if (skipped()) return;
    const std::string max_rss = max_rss_bin();
    const std::vector<std::vector<std::string>> commands = {
        {"strace", "-f", "-o", "/dev/null", "true"},
        {"gdb", "-batch", "-ex", "run", "--args", "/bin/true"},
        {max_rss, "-q", "--", fixture("touch"), "10"},  // max_rss's ptrace backend under it
    };
    for (const auto& command : commands) {
        if (command[0] != max_rss && !os::find_in_path(command[0])) {
            std::printf("skipped: %s is not installed\n", command[0].c_str());
            continue;
        }
        INFO(command[0]);
        std::vector<std::string> args{"-q", "--backend", "ebpf", "--"};
        args.insert(args.end(), command.begin(), command.end());
        const Output out = run_max_rss(args);
        CHECK(out.exit_code == 0);
        CHECK(out.err.find("max_rss:") == std::string::npos);
    }
}

TEST_CASE("ebpf: a LeakSanitizer binary exits 0 and its peak is measured", "[ebpf]") {
    if (skipped()) return;
    const Output untraced = run_program({fixture("asan_touch"), "50"});
    REQUIRE(untraced.exit_code == 0);
    auto r = run_ebpf({fixture("asan_touch"), "50"});
    CHECK(r.exit.code == 0);  // under ptrace: 1, "LeakSanitizer does not work under ptrace"
    CHECK(mib(r.peak.tree_bytes) >= 50);
}

TEST_CASE("ebpf: without the privilege it refuses before running anything, in one line", "[ebpf]") {
    if (::geteuid() != 0) {
        std::printf("skipped: needs root to drop it\n");
        return;
    }
    const std::string marker = temp_path("ebpf-ran");
    const Output out = run_program({max_rss_bin(), "--backend", "ebpf", "--", "/bin/sh", "-c", "touch " + marker}, "",
                                   60, [] {
                                       if (::setgid(65534) != 0 || ::setuid(65534) != 0) _exit(99);
                                   });
    CHECK(out.exit_code == 125);
    CHECK(out.err.rfind("max_rss: --backend ebpf cannot run here: ", 0) == 0);
    CHECK(std::count(out.err.begin(), out.err.end(), '\n') == 1);
    CHECK(::access(marker.c_str(), F_OK) != 0);
}

TEST_CASE("ebpf: in a pid namespace of its own it refuses before running anything, in one line", "[ebpf]") {
    // A container's: the kernel side's pids are the host's, max_rss's are not.
    if (skipped()) return;
    if (!file_exists("/usr/bin/unshare")) {
        std::printf("skipped: no unshare(1) to make a pid namespace\n");
        return;
    }
    const std::string marker = temp_path("ebpf-ns-ran");
    std::remove(marker.c_str());
    const Output out = run_program({"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", max_rss_bin(), "--backend",
                                    "ebpf", "--", "/bin/sh", "-c", "touch " + marker});
    CHECK(out.exit_code == 125);
    CHECK(out.err ==
          "max_rss: --backend ebpf cannot run here: max_rss runs in a pid namespace of its own (a container's), and "
          "the kernel side knows processes by their pids in the host's: use --backend ptrace\n");
    CHECK(::access(marker.c_str(), F_OK) != 0);
    // ptrace, as the line says, measures there.
    const Output traced = run_program({"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", max_rss_bin(), "-q",
                                       "--", "/bin/sh", "-c", "touch " + marker});
    CHECK(traced.exit_code == 0);
    CHECK(::access(marker.c_str(), F_OK) == 0);
    std::remove(marker.c_str());
}

TEST_CASE("ebpf: copy-on-write copies of a private file mapping counted as under ptrace", "[ebpf][exact]") {
    if (skipped()) return;
    // 32 MiB of file pages, then a copy of each: file pages give way to
    // anonymous ones one page at a time; together never more than 32 MiB.
    // With a second process holding another file's pages (48 MiB: always
    // the larger set; 16 MiB: the larger one only once most pages are
    // copied), the tree ends at both sets at once: the kernel side must not
    // forget the other process's set when the copier's shrinks.
    const std::vector<std::pair<std::vector<std::string>, double>> cases = {
        {{fixture("cow_file"), "32"}, 32},
        {{fixture("cow_file"), "32", "48"}, 80},
        {{fixture("cow_file"), "64", "16"}, 80},
    };
    for (BackendKind backend : {BackendKind::Ptrace, BackendKind::Ebpf}) {
        for (const auto& [argv, true_mib] : cases) {
            MeasureOptions options;
            options.argv = argv;
            options.backend = backend;
            const RunResult r = measure(options);
            INFO("backend " << static_cast<int>(backend) << ", " << argv.size() - 1 << " args, truth " << true_mib
                            << " MiB: tree " << mib(r.peak.tree_bytes) << " MiB");
            CHECK(r.exit.code == 0);
            check_mib_near(r.peak.tree_bytes, true_mib);
        }
    }
}

#ifdef MAX_RSS_HAVE_EBPF
// Runs argv, tracked by program from before it ran, to its end (with exit
// status 0), with the signal mask it is given.
void run_tracked(ebpf::BpfProgram& program, std::vector<std::string> argv, const sigset_t& mask) {
    os::LaunchSpec spec;
    spec.argv = std::move(argv);
    spec.child_mask = mask;
    spec.before_release = [&program](pid_t pid) { program.track(pid); };
    os::Launched launched = os::launch(spec);
    int status = 0;
    REQUIRE(waitpid(launched.pid, &status, 0) == launched.pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    os::read_launch_report(launched.report_fd);
}

// The kernel side's totals once argv, tracked from before it ran, has ended.
ebpf::KernelTotals kernel_totals_of(std::vector<std::string> argv) {
    auto program = ebpf::BpfProgram::load();
    sigset_t mask;
    sigprocmask(SIG_SETMASK, nullptr, &mask);
    run_tracked(*program, std::move(argv), mask);
    return program->totals();
}

// Each of those copies lowers the largest address space's shared count
// (file - 1) just before a new peak (anon + 1): the kernel side's maximum of
// the shared counts must come down with it at once, or the peak would count
// the copied pages twice (64 MiB here). Once the program is gone, its slot
// leaves the maximum too: the total falls to the few anonymous pages of the
// launch that the kernel side cannot tell apart, not to its last file count
// (its binaries' pages, ~1 MiB). (The maximum was once kept as a bound that
// a shrink made stale until a walk of the whole table, ~230 us a walk: 65,536
// copies took 15 s against 0.2 s untraced.)
TEST_CASE("ebpf: the largest shared count comes down at every shrink and exit", "[ebpf][exact]") {
    if (skipped()) return;
    const ebpf::KernelTotals totals = kernel_totals_of({fixture("cow_file"), "32"});  // 8,192 copy-on-write faults
    INFO("peak " << totals.peak_pages << " pages, total at the end " << totals.total_pages << " pages (anonymous "
                 << totals.anon_pages << ")");
    check_mib_near(totals.peak_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)), 32);
    CHECK(totals.total_pages <= 16);
}

// The largest file set is kept in a max-tree with one leaf per address
// space, in the order they were tracked (the root, then its children): here
// six holders of their own files, the largest (24 MiB) the third child, the
// next (12 MiB) the fifth, so that the maximum must come up through a leaf
// that is neither the first nor the second of its node's four, and from
// beside a second node. The tree's total counts the largest set, not the
// sum, and nothing is left once they are gone. Tolerance: the seven
// processes' own pages, up to 4 MiB. The files are distinct, so the true
// file part is their union, 41 MiB: the upper bound (total + the sets'
// excess over the largest) must hold it, with each of the seven processes'
// libraries counted once per process (up to 12 MiB more).
TEST_CASE("ebpf: the largest file set of many processes is found in any leaf of the max-tree", "[ebpf][exact]") {
    if (skipped()) return;
    const ebpf::KernelTotals totals = kernel_totals_of({fixture("file_holders"), "1", "2", "24", "1", "12", "1"});
    const auto page_bytes = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    INFO("peak " << totals.peak_pages << " pages, total at the end " << totals.total_pages << " pages, upper bound "
                 << totals.shared_upper_peak_pages << " pages, largest excess " << totals.shared_excess_peak_pages);
    const double peak_mib = mib(totals.peak_pages * page_bytes);
    CHECK(peak_mib >= 24 - 0.5);
    CHECK(peak_mib <= 24 + 4);
    CHECK(totals.total_pages <= 16);
    const double upper_mib = mib(totals.shared_upper_peak_pages * page_bytes);
    CHECK(upper_mib >= 41);
    CHECK(upper_mib <= 41 + 12);
    CHECK(mib(totals.shared_excess_peak_pages * page_bytes) >= 41 - 24);
}

// A file count's rise is written into the max-tree without its lock, its
// leaf and then each node above it (shared_rise()); a fall is recomputed
// under the lock from the children. Here the largest set (24 MiB, the third
// child: leaf 3) leaves first, and the next (12 MiB, the seventeenth child:
// leaf 17, whose path meets leaf 3's two levels up) must then be the
// maximum: had its rise stopped below that level, the tree would fall to
// the 2 MiB beside leaf 3. Then the parent touches 20 MiB of its own: the
// peak is 12 + 20 MiB, above the 24 MiB before. Tolerance: as above.
TEST_CASE("ebpf: when the largest file set leaves, the next largest is the maximum", "[ebpf][exact]") {
    if (skipped()) return;
    std::vector<std::string> argv = {fixture("file_holders"), "1", "2", "24"};
    for (int k = 4; k <= 16; k++) argv.emplace_back("1");
    argv.insert(argv.end(), {"12", "1", "then", "20"});
    const ebpf::KernelTotals totals = kernel_totals_of(argv);
    INFO("peak " << totals.peak_pages << " pages, total at the end " << totals.total_pages << " pages");
    const double peak_mib = mib(totals.peak_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
    CHECK(peak_mib >= 12 + 20 - 0.5);
    CHECK(peak_mib <= 12 + 20 + 4);
    CHECK(totals.total_pages <= 16);
}

// The records' ring buffer, not read for a while (a reader starved of CPU,
// stopped, or slower than the tree). An exit that finds a quarter of the
// ring taken signals the reader (SIGALRM, its tick signal) rather than
// leaving the rest to its next tick; a record that finds the ring full is
// counted in lost_records, never dropped unseen. Here nobody reads until the
// program has ended: its children's fork, exec-entry, exec and exit records
// (~1.26 KB a child) are half again what the ring holds. Every record the
// kernel side made is either read afterwards or counted lost: the root's
// exec and exit, and four for each child. (The wake needs kfuncs of Linux
// >= 6.13, which the light object's kernels have; the libbpf object, for
// older ones, leaves it out where they are missing, and reads at its ticks.)
TEST_CASE("ebpf: a reader that falls behind is woken, and records a full ring had no room for are counted",
          "[ebpf]") {
    if (skipped()) return;
    struct stat ns {};
    if (::stat("/proc/self/ns/pid", &ns) != 0 || ns.st_ino != 0xEFFFFFFCU) {
        // The kernel side finds the reader by its pid in the initial namespace only.
        std::printf("skipped: not in the initial pid namespace, where the kernel side signals its reader\n");
        return;
    }
    auto program = ebpf::BpfProgram::load();
    // A record's room: the ring's 8-byte header, and the record rounded up to 8 bytes.
    auto room = [](uint64_t bytes) { return 8 + (bytes + 7) / 8 * 8; };
    const uint64_t per_child = 3 * room(sizeof(mrss_record)) + room(sizeof(mrss_exec_record));
    const uint64_t children = program->ring_bytes() * 3 / 2 / per_child;
    INFO("ring " << program->ring_bytes() << " bytes, " << children << " children of " << per_child << " bytes");

    static std::atomic<int> alarms{0};
    alarms = 0;
    struct sigaction counting {}, before {};
    counting.sa_handler = [](int) { alarms.fetch_add(1); };
    counting.sa_flags = SA_RESTART;
    sigemptyset(&counting.sa_mask);
    REQUIRE(sigaction(SIGALRM, &counting, &before) == 0);
    sigset_t alarm_only, mask;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    REQUIRE(pthread_sigmask(SIG_UNBLOCK, &alarm_only, &mask) == 0);
    struct Restore {
        ebpf::BpfProgram& program;
        const struct sigaction& action;
        const sigset_t& mask;
        ~Restore() {
            program.read_from(0);
            pthread_sigmask(SIG_SETMASK, &mask, nullptr);
            sigaction(SIGALRM, &action, nullptr);
        }
    } restore{*program, before, mask};

    program->read_from(static_cast<pid_t>(::gettid()));
    run_tracked(*program, {fixture("many_children"), std::to_string(children), "/bin/true"}, mask);

    const int woken = alarms.load();
    const ebpf::KernelTotals totals = program->totals();
    uint64_t read = 0;
    program->on_record([&read](const mrss_record&, size_t) { ++read; });
    program->consume();
    INFO("woken " << woken << " times, " << read << " records read, " << totals.lost_records << " lost");
    if (kernel_has_wake_kfuncs())
        CHECK(woken >= 1);
    else
        std::printf("skipped: the wake: this kernel has no bpf_send_signal_task (Linux < 6.13)\n");
    CHECK(totals.untracked == 0);
    CHECK(totals.lost_records > 0);
    CHECK(read > 0);
    CHECK(read + totals.lost_records == 4 * children + 2);
}

// As root the kernel side loads while the program already runs (under
// ptrace, held at its exit among other stops) and adopts it then: the peak it
// reached and freed before must be the tree's, its memory now the total. Here
// the program is held at its exit stop, as the backend holds it, and adopted.
// touch_free_touch 64 16 (64 MiB touched and freed, 16 MiB held), launched
// under ptrace and held at its exit stop, as the backend holds a program while
// it loads: its address space whole and still. Let go (and reaped) at the end.
// Or argv, with before_release run once it is seized, before it execs (to
// track it from its start).
class HeldAtExit {
public:
    explicit HeldAtExit(std::vector<std::string> argv = {fixture("touch_free_touch"), "64", "16"},
                        std::function<void(pid_t)> before_release = {}) {
        sigset_t mask;
        sigprocmask(SIG_SETMASK, nullptr, &mask);
        os::LaunchSpec spec;
        spec.argv = std::move(argv);
        spec.child_mask = mask;
        spec.ptrace_options = PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
        spec.before_release = std::move(before_release);
        launched_ = os::launch(spec);
        REQUIRE(launched_.traced);
        int status = 0;
        REQUIRE(waitpid(launched_.pid, &status, __WALL) == launched_.pid);
        REQUIRE(WIFSTOPPED(status));
        REQUIRE((status >> 16) == PTRACE_EVENT_EXIT);
    }
    [[nodiscard]] pid_t pid() const { return launched_.pid; }
    // Lets it finish its exit; returns its wait status.
    int let_go() {
        int status = 0;
        REQUIRE(ptrace(PTRACE_DETACH, launched_.pid, nullptr, 0) == 0);
        REQUIRE(waitpid(launched_.pid, &status, 0) == launched_.pid);
        os::read_launch_report(launched_.report_fd);
        return status;
    }

private:
    os::Launched launched_;
};

TEST_CASE("ebpf: a program adopted while it runs keeps the peak it freed before", "[ebpf][adopt]") {
    if (skipped()) return;
    HeldAtExit held;
    auto program = ebpf::BpfProgram::load();
    program->adopt(held.pid());
    const ebpf::KernelTotals totals = program->totals();
    check_mib_near(totals.peak_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)), 64);
    check_mib_near(totals.total_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)), 16);
    CHECK(WIFEXITED(held.let_go()));
}

// The kernel side's loops over every possible CPU (the per-CPU offsets at
// the load, an address space's four counters when it is registered, one
// counter at each of its changes) are bounded loops up to
// MAX_RSS_EBPF_UNROLLED_CPUS CPUs (8), which the verifier walks pass by
// pass, and bpf_loop() past it, which machines with many CPUs get. With 0,
// bpf_loop on this machine's few: the same figures, for a process's peak
// (its counters summed at every change), copy-on-write copies, and the
// largest file set (read at registration and at each change).
TEST_CASE("ebpf: per-CPU sums through bpf_loop, as on many CPUs, measure as the unrolled loops do", "[ebpf][exact]") {
    if (skipped()) return;
    const ScopedEnv always_loop("MAX_RSS_EBPF_UNROLLED_CPUS", "0");
    for (const char* loader : {"light", "libbpf"}) {
        INFO("loader " << loader);
        const ScopedEnv which("MAX_RSS_EBPF_LOADER", loader);
        auto freed = run_ebpf({fixture("touch_free_touch"), "100", "10"});
        CHECK(freed.exit.code == 0);
        REQUIRE(freed.processes.size() == 1);
        check_mib_near(freed.peak.tree_bytes, 100);
        check_mib_near(freed.processes[0].peak_rss_bytes, 100);
        if (kernel_counts_anon_mapped()) {
            auto cow = run_ebpf({fixture("cow_worker"), "100", "200"});
            CHECK(mib(cow.peak.tree_bytes) >= 200);
            CHECK(mib(cow.peak.tree_bytes) <= 204);
            REQUIRE(cow.processes.size() == 2);
            check_mib_near(cow.processes[1].peak_rss_bytes, 100);
        }
        const ebpf::KernelTotals totals = kernel_totals_of({fixture("file_holders"), "1", "2", "24", "1", "12", "1"});
        const double peak_mib = mib(totals.peak_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
        CHECK(peak_mib >= 24 - 0.5);
        CHECK(peak_mib <= 24 + 4);
    }
}
// The per-CPU sums themselves, to the page: MiB tolerances cannot see one
// CPU's part left out (at most the kernel's batch, 32 pages or more, a
// counter). A program held at its exit stop (its address space whole and
// still) is adopted: its counters are read at their global and per-CPU
// parts, and the total (its anon pages plus its file and shmem pages) must
// be what a walk of its page tables finds (smaps_rollup's Rss, exact), for
// both ways of looping over the CPUs. It maps and touches 64 MiB and frees
// 48, which leaves its CPUs' parts rarely all zero (a build that left the
// parts out was off by 1-17 pages in 5 of 6 runs). The walk is read before
// and after the adoption: nothing but the kernel's own reclaim could change
// a stopped program's pages, and a walk that moved is done again.
TEST_CASE("ebpf: an address space's counters summed over every CPU equal its page-table walk", "[ebpf][exact][adopt]") {
    if (skipped()) return;
    for (const char* unrolled : {"8", "0"}) {
        for (int attempt = 1; attempt <= 3; ++attempt) {
            INFO("MAX_RSS_EBPF_UNROLLED_CPUS=" << unrolled << ", attempt " << attempt);
            const ScopedEnv loops("MAX_RSS_EBPF_UNROLLED_CPUS", unrolled);
            HeldAtExit held;
            auto program = ebpf::BpfProgram::load();
            const auto before = procfs::read_smaps_rollup(held.pid());
            program->adopt(held.pid());
            const auto walked = procfs::read_smaps_rollup(held.pid());
            const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
            const uint64_t counted = program->totals().total_pages;
            held.let_go();
            REQUIRE(before);
            REQUIRE(walked);
            REQUIRE(walked->rss_bytes);
            if (before->rss_bytes != walked->rss_bytes && attempt < 3) continue;
            INFO("counted " << counted << " pages, the page tables hold " << *walked->rss_bytes / page);
            CHECK(counted == *walked->rss_bytes / page);
            break;
        }
    }
}

// The same, for the counts kept at each change rather than read once: a
// program tracked from before its exec has every page it maps and frees
// counted by on_rss_stat, which sums the one counter that changed over the
// CPUs at each change (every possible CPU on a machine of few, those its
// address space was seen on past unrolled_cpus). Its exit record carries
// its address space's counts as they were at its last change; held at its
// exit stop, just before, its page tables are walked. Anonymous pages must
// equal smaps_rollup's Anonymous, and all three counts its Rss, to the
// page. touch_each_cpu changes its counters on each CPU in turn, leaving 5
// pages in each CPU's part. (A build whose per-change sum left the CPUs'
// parts out passed the test above, which reads the counters at
// registration; one that never marked the CPU of a change as seen was off
// by 5 pages here, before the fallback to every CPU for a sum that does not
// move, which a seen-CPU sum that reads nothing now meets at every change:
// full_sums.)
TEST_CASE("ebpf: an address space's counts kept at each change equal its page-table walk at its exit", "[ebpf][exact]") {
    if (skipped()) return;
    // MAX_RSS_EBPF_UNROLLED_CPUS and MAX_RSS_EBPF_CPUS_PER_BIT: every
    // possible CPU read at each change (a machine of few CPUs); the CPUs
    // seen, one bit each (many); one bit for two CPUs (more than 64).
    const std::pair<const char*, const char*> modes[] = {{"8", ""}, {"0", ""}, {"0", "2"}};
    for (const char* loader : {"light", "libbpf"}) {
        const ScopedEnv which("MAX_RSS_EBPF_LOADER", loader);
        for (const auto& [unrolled, per_bit] : modes) {
            for (int attempt = 1; attempt <= 3; ++attempt) {
                INFO("loader " << loader << ", MAX_RSS_EBPF_UNROLLED_CPUS=" << unrolled
                               << ", MAX_RSS_EBPF_CPUS_PER_BIT=" << per_bit << ", attempt " << attempt);
                const ScopedEnv loops("MAX_RSS_EBPF_UNROLLED_CPUS", unrolled);
                const ScopedEnv bits("MAX_RSS_EBPF_CPUS_PER_BIT", per_bit);
                auto program = ebpf::BpfProgram::load();
                HeldAtExit held({fixture("touch_each_cpu"), "8"}, [&program](pid_t pid) { program->track(pid); });
                const pid_t pid = held.pid();
                const auto before = procfs::read_smaps_rollup(pid);
                const auto walked = procfs::read_smaps_rollup(pid);
                const int status = held.let_go();
                CHECK(WIFEXITED(status));
                CHECK(WEXITSTATUS(status) == 0);  // 99: it could not move itself to every CPU
                std::optional<mrss_mm_figures> at_exit;
                program->on_record([&at_exit, pid](const mrss_record& record, size_t) {
                    if (record.kind == MRSS_REC_EXIT && record.tgid == static_cast<__u32>(pid)) at_exit = record.mm;
                });
                program->consume();
                REQUIRE(before);
                REQUIRE(walked);
                REQUIRE(walked->rss_bytes);
                REQUIRE(walked->anonymous_bytes);
                REQUIRE(at_exit);
                REQUIRE(at_exit->valid == 1);
                if (before->rss_bytes != walked->rss_bytes && attempt < 3) continue;
                // Each change's own CPU is marked before the sum: none should
                // need the fallback to every CPU (which would hide a mask
                // that marks nothing, at the full cost).
                CHECK(program->totals().full_sums <= 2);
                const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
                const mrss_mm_figures& counted = *at_exit;
                INFO("counted anon " << counted.anon_pages << ", file " << counted.file_pages << ", shmem "
                                     << counted.shmem_pages << " pages; the page tables hold "
                                     << *walked->anonymous_bytes / page << " anonymous of " << *walked->rss_bytes / page);
                CHECK(counted.anon_pages == *walked->anonymous_bytes / page);
                CHECK(counted.anon_pages + counted.file_pages + counted.shmem_pages == *walked->rss_bytes / page);
                break;
            }
        }
    }
}
// bench measures many runs in one process: the kernel side is loaded once
// (prepare_backend) and handed from run to run (MeasureOptions::keep). Each
// run must measure as a fresh load would: a smaller program after a larger
// one reads its own peak, not the last run's; children at once and
// copy-on-write copies as in the cases above; a run after one that an
// orphan ended; and every run uses the one kernel side that was loaded,
// with either loader.
TEST_CASE("ebpf: a kernel side kept from run to run measures each run as a fresh load does", "[ebpf][keep]") {
    if (skipped()) return;
    for (const char* loader : {"light", "libbpf"}) {
        INFO("loader " << loader);
        std::optional<ScopedEnv> libbpf;
        if (std::string_view(loader) == "libbpf") libbpf.emplace("MAX_RSS_EBPF_LOADER", "libbpf");
        KeptBackends keep;
        prepare_backend(BackendKind::Ebpf, keep);
        REQUIRE(keep.ebpf);
        const ebpf::BpfProgram* loaded = keep.ebpf.get();
        auto run_kept = [&](std::vector<std::string> argv) {
            MeasureOptions options;
            options.argv = std::move(argv);
            options.backend = BackendKind::Ebpf;
            options.keep = &keep;
            RunResult r = measure(options);
            CHECK(r.exit.code == 0);
            CHECK(r.warnings.empty());
            CHECK(keep.ebpf.get() == loaded);  // handed on, not loaded again
            return r;
        };
        auto large = run_kept({fixture("touch"), "100"});
        check_mib_near(large.peak.tree_bytes, 100);
        auto small = run_kept({fixture("touch"), "10"});
        check_mib_near(small.peak.tree_bytes, 10);
        REQUIRE(small.processes.size() == 1);
        check_mib_near(small.processes[0].peak_rss_bytes, 10);
        // Its peak is on its own timeline, inside its own run.
        const auto& points = small.timeline.points;
        REQUIRE(!points.empty());
        const auto top = std::max_element(points.begin(), points.end(),
                                          [](const auto& a, const auto& b) { return a.total_bytes < b.total_bytes; });
        CHECK(top->total_bytes == small.peak.tree_bytes);
        CHECK(top->t_ns > 0);
        CHECK(static_cast<double>(top->t_ns) <= small.wall_seconds * 1e9);
        auto at_once = run_kept({fixture("children_touch"), "concurrent", "4", "50"});
        REQUIRE(at_once.processes.size() == 5);
        CHECK(mib(at_once.peak.tree_bytes) >= 200);
        CHECK(mib(at_once.peak.tree_bytes) <= 206);
        if (kernel_counts_anon_mapped()) {
            auto cow = run_kept({fixture("cow_worker"), "100", "200"});
            CHECK(mib(cow.peak.tree_bytes) >= 200);
            CHECK(mib(cow.peak.tree_bytes) <= 204);
        }
        // An orphan that touches 1 GiB after its parents are gone ends the
        // run with its exit record; the unmapping of its pages comes after
        // (tens of ms here), and must not count down the next run's tree
        // total, which only a tree of several processes shows (a process's
        // own peak is a floor under the tree's).
        auto orphaned = run_kept({fixture("orphan"), "1000", "0"});
        check_mib_near(orphaned.peak.tree_bytes, 1000);
        auto after_orphan = run_kept({fixture("children_touch"), "concurrent", "4", "50"});
        CHECK(mib(after_orphan.peak.tree_bytes) >= 200);
        CHECK(mib(after_orphan.peak.tree_bytes) <= 206);
        auto last = run_kept({fixture("touch"), "5"});
        check_mib_near(last.peak.tree_bytes, 5);
        // The trees before had several processes mapping files at once
        // (a bound); this one process's peak is exact: none of their sums
        // or excess is left in the kernel side.
        CHECK(last.peak.method == PeakMethod::Exact);
    }
}

// A kernel side that still follows a process is not handed to another run:
// its tables would be that run's from the start.
TEST_CASE("ebpf: a kernel side still following a process is not readied for another run", "[ebpf][keep]") {
    if (skipped()) return;
    auto program = ebpf::BpfProgram::load();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    program->track(child);
    CHECK_FALSE(program->ready_for_next_run());
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    // Gone (its entry only waits for the reaping's RCU grace period): ready.
    CHECK(program->ready_for_next_run());
}
#endif

namespace {

// Waits for remote_filled's "mapped PID ADDR", writes one byte into each page
// of its mib MiB from this process (outside the traced tree), then lets it
// exit with SIGUSR1. Returns how many pages it wrote.
size_t fill_from_outside(const std::string& ready, size_t mib) {
    std::istringstream line(wait_for_line_starting(ready, "mapped "));
    std::string word;
    pid_t pid = 0;
    uintptr_t addr = 0;
    line >> word >> pid >> addr;
    if (pid <= 0 || addr == 0) return 0;
    const size_t pages = mib * MiB / 4096;
    std::vector<char> ones(pages, 1);
    size_t written = 0;
    while (written < pages) {
        std::vector<iovec> remote;
        for (size_t i = written; i < pages && remote.size() < 1024; ++i)
            remote.push_back(iovec{reinterpret_cast<void*>(addr + i * 4096), 1});
        iovec local{ones.data() + written, remote.size()};
        const ssize_t n = ::process_vm_writev(pid, &local, 1, remote.data(), remote.size(), 0);
        if (n <= 0) break;
        written += static_cast<size_t>(n);
    }
    ::kill(pid, SIGUSR1);
    return written;
}

}  // namespace

TEST_CASE("ebpf: pages faulted into the tree's memory by a process outside it count (khugepaged, a debugger)",
          "[ebpf]") {
    if (skipped()) return;
    // The kernel side counts the tree's anonymous pages as the changes the
    // tree's own tasks make; khugepaged's collapses and a debugger's writes
    // are made by others, and were missed: the tree read as its largest
    // process (64 of 85 MiB here; a khugepaged collapse: 33 of 53).
    const std::string ready = temp_path("remote_filled.ready");
    for (const BackendKind backend : {BackendKind::Ebpf, BackendKind::Ptrace}) {
        INFO((backend == BackendKind::Ebpf ? "ebpf" : "ptrace"));
        std::remove(ready.c_str());
        ScopedEnv env("FX_READY_FILE", ready.c_str());
        size_t written = 0;
        std::thread writer([&] { written = fill_from_outside(ready, 64); });
        MeasureOptions options;
        // 64 MiB written from outside, beside a child's 20.
        options.argv = {fixture("remote_filled"), "64", "20"};
        options.backend = backend;
        const RunResult r = measure(options);
        writer.join();
        CHECK(written == 64 * MiB / 4096);
        CHECK(r.exit.code == 0);
        REQUIRE(r.processes.size() == 2);
        check_mib_near(r.processes[0].peak_rss_bytes, 64);
        check_mib_near(r.peak.tree_bytes, 85);
    }
    std::remove(ready.c_str());
}

TEST_CASE("ebpf: compare warns when one report is ptrace's and the other ebpf's", "[ebpf][compare]") {
    if (skipped()) return;
    const std::string base = temp_path("compare-ptrace.json");
    const std::string after = temp_path("compare-ebpf.json");
    const std::vector<std::string> program{fixture("touch"), "10"};
    std::vector<std::string> run_ptrace{max_rss_bin(), "-q", "-o", base, "--"};
    run_ptrace.insert(run_ptrace.end(), program.begin(), program.end());
    std::vector<std::string> run_ebpf_cli{max_rss_bin(), "-q", "--backend", "ebpf", "-o", after, "--"};
    run_ebpf_cli.insert(run_ebpf_cli.end(), program.begin(), program.end());
    REQUIRE(run_program(run_ptrace).exit_code == 0);
    REQUIRE(run_program(run_ebpf_cli).exit_code == 0);

    const Output mixed = run_program({max_rss_bin(), "compare", base, after});
    CHECK(mixed.exit_code == 0);  // the same 10 MiB either way: no regression
    CHECK(mixed.err.find("max_rss: compare: warning: " + base + " was measured with --backend ptrace, " + after +
                         " with --backend ebpf: ") != std::string::npos);
    const Output same = run_program({max_rss_bin(), "compare", after, after});
    CHECK(same.exit_code == 0);
    CHECK(same.err.find("--backend") == std::string::npos);
    ::unlink(base.c_str());
    ::unlink(after.c_str());
}
