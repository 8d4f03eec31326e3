// The tracer on fixture programs whose true peak is known. Tolerances: a
// fixture program's own baseline is about 1.1-1.3 MiB on top of what it
// touches, and VmHWM may read a few hundred KiB low (per-CPU counters, see
// docs/how-it-works.md), so "N MiB" is asserted as [N - 0.5, N + 2.5] MiB.
#include "helpers.hpp"

#include <max_rss/engine/measure.hpp>
#include <max_rss/report/words.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <unistd.h>

using namespace max_rss;
using namespace max_rss::test;

namespace {
#define CHECK_MIB_NEAR(bytes, n) CHECK_THAT(mib(bytes), Catch::Matchers::WithinAbs((n) + 1.0, 1.5))
}  // namespace

TEST_CASE("touch 100 MiB and exit: tree peak 100 to 102.5 MiB", "[tracer]") {
    auto r = measure_argv({fixture("touch"), "100"});
    CHECK(r.exit.code == 0);
    REQUIRE(r.processes.size() == 1);
    CHECK(mib(r.peak.tree_bytes) >= 100.0);
    CHECK(mib(r.peak.tree_bytes) <= 102.5);
    CHECK(r.processes[0].images.size() == 1);
    CHECK(r.processes[0].images[0].program->argv == std::vector<std::string>{fixture("touch"), "100"});
    REQUIRE(r.ru_maxrss_bytes);
    CHECK_MIB_NEAR(*r.ru_maxrss_bytes, 100);
    // The final breakdown comes from the exit stop, before exit_mm.
    REQUIRE(r.processes[0].at_exit.smaps);
    REQUIRE(r.processes[0].at_exit.smaps->pss_bytes);
    CHECK_MIB_NEAR(*r.processes[0].at_exit.smaps->anonymous_bytes, 100);
}

TEST_CASE("a peak freed before exit is still the peak", "[tracer]") {
    auto r = measure_argv({fixture("touch_free_touch"), "200", "10"});
    CHECK_MIB_NEAR(r.peak.tree_bytes, 200);
    // What a reading of RSS at exit would have said:
    REQUIRE(r.processes[0].at_exit.rss_bytes);
    CHECK(mib(*r.processes[0].at_exit.rss_bytes) < 15);
}

TEST_CASE("4 threads each touching 50 MiB and freeing it before exit: 200 MiB", "[tracer]") {
    auto r = measure_argv({fixture("threads_touch"), "4", "50"});
    REQUIRE(r.processes.size() == 1);  // threads are counted, not listed
    CHECK(r.processes[0].threads == 5);
    CHECK_MIB_NEAR(r.peak.tree_bytes, 200);
}

TEST_CASE("a child forked by a non-leader thread is its process's child", "[tracer]") {
    check_thread_fork(measure_argv({fixture("thread_fork"), "30"}), 30);
    // Not the root: its task count and exit come from its own exit, not wait4.
    check_thread_fork(measure_argv({"/bin/sh", "-c", fixture("thread_fork") + " 30; exit 0"}), 30);
    // Its leader gone first (pthread_exit): the process ends with its last thread.
    check_thread_fork(measure_argv({"/bin/sh", "-c", fixture("thread_fork") + " 30 leader-first; exit 0"}), 30);
}

TEST_CASE("the timeline has no zero points from before the program's first exec", "[tracer]") {
    // Until its exec the root is max_rss's own copy and owns nothing: a point
    // there would read as "measured, empty" (the report's null is "not measured").
    auto r = measure_argv({"/bin/sh", "-c", fixture("touch") + " 10; true"});
    CHECK(r.exit.code == 0);
    REQUIRE_FALSE(r.timeline.points.empty());
    for (const auto& point : r.timeline.points) CHECK(point.total_bytes > 0);
    CHECK_MIB_NEAR(r.peak.tree_bytes, 10);
}

TEST_CASE("touch 200 MiB then exec a 10 MiB program: one process with two images", "[tracer]") {
    auto r = measure_argv({fixture("touch_exec"), "200", fixture("touch"), "10"});
    REQUIRE(r.processes.size() == 1);
    const auto& images = r.processes[0].images;
    REQUIRE(images.size() == 2);
    CHECK(images[0].program->argv[0] == fixture("touch_exec"));
    CHECK(images[1].program->argv == std::vector<std::string>{fixture("touch"), "10"});
    CHECK(images[1].program->exe == fixture("touch"));
    CHECK_MIB_NEAR(images[0].peak_rss_bytes, 200);
    CHECK_MIB_NEAR(images[1].peak_rss_bytes, 10);
    CHECK_MIB_NEAR(r.peak.tree_bytes, 200);
    CHECK(images[0].end_ns == images[1].start_ns);
}

TEST_CASE("a 300 MiB parent fork+execs a tiny program: the child is tiny but its ru_maxrss is not",
          "[tracer]") {
    auto r = measure_argv({fixture("fork_exec"), "300", fixture("exit_code"), "0"});
    REQUIRE(r.processes.size() == 2);
    const Process& child = r.processes[1];
    CHECK(child.ppid == r.processes[0].pid);
    REQUIRE(child.images.size() == 2);
    CHECK(child.images[0].origin == ImageOrigin::Fork);
    CHECK(mib(child.images[0].peak_rss_bytes) < 5);   // its own, not the inherited copy
    REQUIRE(child.images[0].hwm_bytes);
    CHECK(mib(*child.images[0].hwm_bytes) > 295);       // what the kernel counted for it
    CHECK(mib(child.images[1].peak_rss_bytes) < 5);
    CHECK(mib(child.peak_rss_bytes) < 5);
    REQUIRE(child.ru_maxrss_bytes);
    CHECK(mib(*child.ru_maxrss_bytes) > 295);           // the inherited figure GNU time shows
    CHECK_MIB_NEAR(r.processes[0].peak_rss_bytes, 300);
    CHECK(mib(r.peak.tree_bytes) < 306);
}

TEST_CASE("vfork and posix_spawn children own no memory before exec", "[tracer]") {
    for (const char* launcher : {"vfork_exec", "posix_spawn_exec"}) {
        INFO(launcher);
        auto r = measure_argv({fixture(launcher), "200", fixture("touch"), "10"});
        REQUIRE(r.processes.size() == 2);
        const Process& child = r.processes[1];
        REQUIRE(child.images.size() == 2);
        CHECK(child.images[0].origin == ImageOrigin::SharedMm);
        CHECK(child.images[0].peak_rss_bytes == 0);
        CHECK_MIB_NEAR(child.images[1].peak_rss_bytes, 10);
        CHECK_MIB_NEAR(r.processes[0].peak_rss_bytes, 200);
        CHECK(mib(r.peak.tree_bytes) < 214);
    }
}

TEST_CASE("a forked worker that never execs is charged what it added", "[tracer]") {
    auto r = measure_argv({fixture("fork_worker"), "100", "50"});
    REQUIRE(r.processes.size() == 2);
    const Process& worker = r.processes[1];
    CHECK_MIB_NEAR(worker.peak_rss_bytes, 50);
    REQUIRE(worker.images[0].hwm_bytes);
    CHECK(mib(*worker.images[0].hwm_bytes) > 149);
    CHECK_MIB_NEAR(r.peak.tree_bytes, 150);
}

TEST_CASE("clone(CLONE_VM) children are counted once with the mm they share", "[tracer]") {
    auto r = measure_argv({fixture("clone_vm"), "100"});
    REQUIRE(r.processes.size() == 2);
    REQUIRE(r.processes[1].shares_mm_with);
    CHECK(*r.processes[1].shares_mm_with == r.processes[0].pid);
    CHECK(r.processes[1].peak_rss_bytes == 0);
    CHECK_MIB_NEAR(r.processes[0].peak_rss_bytes, 100);
    CHECK_MIB_NEAR(r.peak.tree_bytes, 100);
}

TEST_CASE("a CLONE_VM child holds the mm once its creator exits or execs, and is counted there", "[tracer]") {
    // 60 MiB touched by the creator, 40 more by the child after the creator
    // left: one mm of 100 MiB, which only the child holds at the end.
    auto left = measure_argv({fixture("clone_vm_leave"), "exit", "60", "40"});
    CHECK(left.exit.code == 0);
    REQUIRE(left.processes.size() == 2);
    CHECK_MIB_NEAR(left.processes[0].peak_rss_bytes, 60);
    CHECK_FALSE(left.processes[1].shares_mm_with);
    CHECK_MIB_NEAR(left.processes[1].peak_rss_bytes, 100);
    CHECK_MIB_NEAR(left.peak.tree_bytes, 100);
    CHECK(left.peak.method == PeakMethod::Exact);

    // The creator execs an image of 30 MiB and waits: 100 + 30 at the child's exit.
    auto execd = measure_argv({fixture("clone_vm_leave"), "exec", "60", "40", "30"});
    CHECK(execd.exit.code == 0);
    REQUIRE(execd.processes.size() == 2);
    REQUIRE(execd.processes[0].images.size() == 2);
    CHECK_MIB_NEAR(execd.processes[0].images[1].peak_rss_bytes, 30);
    CHECK_MIB_NEAR(execd.processes[1].peak_rss_bytes, 100);
    CHECK_THAT(mib(execd.peak.tree_bytes), Catch::Matchers::WithinAbs(130 + 2.2, 1.5));
    CHECK(execd.peak.method == PeakMethod::Exact);
}

TEST_CASE("exec from a non-leader thread keeps one process with two images", "[tracer]") {
    auto r = measure_argv({fixture("exec_thread"), "100", fixture("touch"), "10"});
    REQUIRE(r.processes.size() == 1);
    const auto& images = r.processes[0].images;
    REQUIRE(images.size() == 2);
    CHECK_MIB_NEAR(images[0].peak_rss_bytes, 100);
    CHECK_MIB_NEAR(images[1].peak_rss_bytes, 10);
    CHECK(r.exit.code == 0);
}

TEST_CASE("a program SIGKILLed after touching 100 MiB: signal 9 and the right peak", "[tracer]") {
    auto r = measure_argv({fixture("self_kill"), "100"});
    CHECK(r.exit.signal == SIGKILL);
    CHECK_FALSE(r.exit.code);
    CHECK(r.exit.shell_code() == 137);
    CHECK(mib(r.peak.tree_bytes) >= 100.0);
    CHECK(mib(r.peak.tree_bytes) <= 102.5);
}

TEST_CASE("2000 short-lived children: 2001 processes in the report", "[tracer]") {
    auto r = measure_argv({fixture("many_children"), "2000"});
    CHECK(r.exit.code == 0);
    REQUIRE(r.processes.size() == 2001);
    size_t exited_zero = 0;
    for (size_t i = 1; i < r.processes.size(); ++i) {
        const Process& p = r.processes[i];
        if (p.exit.code == 0 && p.ppid == r.processes[0].pid) ++exited_zero;
    }
    CHECK(exited_zero == 2000);
    CHECK(mib(r.peak.tree_bytes) < 10);
}

TEST_CASE("children holding memory one after another are not summed", "[tracer]") {
    auto r = measure_argv({fixture("children_touch"), "sequential", "4", "50"});
    REQUIRE(r.processes.size() == 5);
    CHECK(mib(r.peak.tree_bytes) >= 50);
    CHECK(mib(r.peak.tree_bytes) <= 54);
    CHECK(mib(r.peak.sum_of_process_peaks_bytes) >= 200);
}

TEST_CASE("children holding memory at the same time are summed", "[tracer]") {
    auto r = measure_argv({fixture("children_touch"), "concurrent", "4", "50"});
    REQUIRE(r.processes.size() == 5);
    CHECK(mib(r.peak.tree_bytes) >= 200);
    CHECK(mib(r.peak.tree_bytes) <= 206);
}

TEST_CASE("children started by posix_spawn holding memory at once are summed", "[tracer]") {
    // Each spawned child is a new image with its own ~1.2 MiB of libc and
    // stack; summed per image that is ~5 MiB over 200 (shared library pages
    // counted once per process).
    auto r = measure_argv({fixture("children_touch"), "spawn", "4", "50"});
    REQUIRE(r.processes.size() == 5);
    for (size_t i = 1; i < r.processes.size(); ++i) {
        REQUIRE(r.processes[i].images.size() == 2);
        CHECK(r.processes[i].images[0].origin == ImageOrigin::SharedMm);
        CHECK_MIB_NEAR(r.processes[i].images[1].peak_rss_bytes, 50);
    }
    CHECK(mib(r.peak.tree_bytes) >= 200);
    CHECK(mib(r.peak.tree_bytes) <= 208);
}

TEST_CASE("a descendant that outlives the root is waited for and measured", "[tracer]") {
    auto r = measure_argv({fixture("orphan"), "100", "300"});
    REQUIRE(r.processes.size() == 3);
    const Process& grandchild = r.processes[2];
    CHECK(grandchild.orphaned);
    CHECK(grandchild.exit.code == 0);
    CHECK(grandchild.end_ns > r.processes[0].end_ns);
    CHECK_MIB_NEAR(grandchild.peak_rss_bytes, 100);
    CHECK(mib(r.peak.tree_bytes) >= 100);
    CHECK(mib(r.peak.tree_bytes) <= 103);
    CHECK(r.exit.code == 0);  // the root's own exit status
}

TEST_CASE("a command that does not exist is a LaunchError with 127", "[tracer]") {
    MeasureOptions options;
    options.argv = {"max-rss-no-such-command-xyz"};
    try {
        measure(options);
        FAIL("no exception");
    } catch (const LaunchError& e) {
        CHECK(e.exit_code == 127);
        CHECK(std::string(e.what()) == "max-rss-no-such-command-xyz: command not found");
    }
}

TEST_CASE("100 MiB MAP_SHARED read by 4 children at once counts once", "[tracer][concurrent]") {
    auto r = measure_argv({fixture("shared_map"), "100", "4"});
    REQUIRE(r.processes.size() == 5);
    CHECK(mib(r.peak.tree_bytes) >= 100);
    CHECK(mib(r.peak.tree_bytes) <= 110);
    CHECK(r.peak.method == PeakMethod::Exact);
    CHECK(mib(r.peak.sum_of_process_peaks_bytes) > 400);  // what summing Rss would claim
}

TEST_CASE("the timeline records the live tree and is bounded", "[tracer][concurrent]") {
    MeasureOptions options;
    options.argv = {fixture("touch"), "50", "300"};
    options.sample_interval_ns = 5'000'000;
    auto r = measure(options);
    // ~300 ms at 5 ms: dozens of points (a few on a loaded machine, where
    // timer signals coalesce), and they saw the 50 MiB held.
    CHECK(r.timeline.points.size() >= 5);
    CHECK(r.timeline.points.size() <= 2048);
    uint64_t best = 0;
    for (const auto& p : r.timeline.points) best = std::max(best, p.total_bytes);
    CHECK_MIB_NEAR(best, 50);
    CHECK(r.peak.sampled_bytes >= best);  // release points add snapshots of their own
}

namespace {
std::string python3() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }
}  // namespace

TEST_CASE("a shell pipeline of three python3 processes holding memory at once", "[tracer][concurrent][runtimes]") {
    // 100 + 60 + 40 MiB held together, each python3 adding ~5 MiB of its own
    // (interpreter heap); its library pages are shared and counted once. The
    // overlap is made by the pipes, not by sleeps (python3 may be a pyenv
    // shim that takes seconds to start): the first holds x until the last
    // has allocated z and writes to a FIFO; each later one allocates only
    // after reading the line of the one before, and holds until its stdin ends.
    const std::string fifo = temp_path("pipeline.fifo");
    std::remove(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string py = python3();
    const std::string script =
        py + " -c 'import sys; x = bytearray(100 << 20); print(1, flush=True); open(sys.argv[1]).read()' " + fifo +
        " | " + py +
        " -c 'import sys; sys.stdin.readline(); y = bytearray(60 << 20); print(1, flush=True); sys.stdin.read()' | " +
        py + " -c 'import sys; sys.stdin.readline(); z = bytearray(40 << 20); open(sys.argv[1], \"w\").write(\"go\"); "
             "sys.stdin.read()' " + fifo;
    auto r = measure_argv({"/bin/sh", "-c", script});
    std::remove(fifo.c_str());
    CHECK(r.exit.code == 0);
    CHECK(mib(r.peak.tree_bytes) >= 200);
    CHECK(mib(r.peak.tree_bytes) <= 230);
    REQUIRE(r.ru_maxrss_bytes);
    CHECK(mib(*r.ru_maxrss_bytes) < 120);  // one python3: what GNU time would say
}

TEST_CASE("node holding a 100 MiB buffer", "[tracer][runtimes]") {
    if (::access("/usr/bin/node", X_OK) != 0 && ::access("/usr/local/bin/node", X_OK) != 0) {
        WARN("node is not installed; skipped");
        return;
    }
    auto r = measure_argv({"/bin/sh", "-c", "node -e 'const b = Buffer.alloc(100 * 2 ** 20, 1); console.log(b[7])'"});
    CHECK(r.exit.code == 0);
    CHECK(mib(r.peak.tree_bytes) >= 100);
    CHECK(mib(r.peak.tree_bytes) <= 170);  // node's own baseline is ~40 MiB
}

TEST_CASE("a program that resets VmHWM through clear_refs is flagged and sampled", "[tracer][reliability]") {
    // clear_refs 200 10: touch 200 MiB, free it, write 5 to /proc/self/clear_refs
    // (VmHWM falls to ~1 MiB), touch 10 MiB. The kernel's figures now say ~11 MiB.
    MeasureOptions options;
    options.argv = {fixture("clear_refs"), "200", "10"};
    options.sample_interval_ns = 1'000'000;  // touching 200 MiB takes ~40 ms: dozens of samples
    auto r = measure(options);
    REQUIRE(r.processes.size() == 1);
    REQUIRE(r.processes[0].at_exit.hwm_bytes);
    CHECK(mib(*r.processes[0].at_exit.hwm_bytes) < 20);  // the kernel lost the peak
    CHECK(mib(r.processes[0].peak_rss_bytes) >= 150);   // the samples did not
    CHECK(mib(r.processes[0].peak_rss_bytes) <= 202.5);
    REQUIRE(r.warnings.size() == 1);
    CHECK(describe(r.warnings[0]).find("clear_refs") != std::string::npos);
}

TEST_CASE("a program that keeps VmHWM is not flagged", "[tracer][reliability]") {
    MeasureOptions options;
    options.argv = {fixture("touch_free_touch"), "200", "10"};
    options.sample_interval_ns = 1'000'000;
    auto r = measure(options);
    CHECK(r.warnings.empty());
}

TEST_CASE("a forked worker that writes to every inherited page holds a second copy", "[tracer][concurrent]") {
    // Copy-on-write copies leave RSS unchanged (statm cannot see them); the
    // child's private pages at its exit stop (smaps_rollup) do.
    auto r = measure_argv({fixture("cow_worker"), "100", "200"});
    REQUIRE(r.processes.size() == 2);
    CHECK_MIB_NEAR(r.processes[1].peak_rss_bytes, 100);
    CHECK(mib(r.peak.tree_bytes) >= 200);
    CHECK(mib(r.peak.tree_bytes) <= 204);
}

TEST_CASE("a small copy-on-write worker's copies are still counted", "[tracer]") {
    // 2 MiB rewritten by the child: below the 4 MiB from which an exec'd
    // image's smaps_rollup is read, above the 1 MiB from which a fork
    // image's is. Only smaps' private pages at its exit see the copies.
    auto r = measure_argv({fixture("cow_worker"), "2", "0"});
    REQUIRE(r.processes.size() == 2);
    CHECK(mib(r.processes[1].peak_rss_bytes) >= 1.5);
    CHECK(mib(r.processes[1].peak_rss_bytes) <= 3);
}
