// The summary printed after a run: what was alive at the peak, ru_maxrss
// said for what it is, warnings in words.
#include <max_rss/report/console.hpp>
#include <max_rss/report/words.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>
#include "units.hpp"

using namespace max_rss;

namespace {


Process summary_process(pid_t pid, pid_t ppid, std::vector<std::string> argv, uint64_t peak) {
    auto program = std::make_shared<Program>();
    program->argv = std::move(argv);
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    Image img;
    img.program = program;
    img.peak_rss_bytes = peak;
    img.measured = true;
    p.images.push_back(img);
    p.peak_rss_bytes = peak;
    p.exit.code = 0;
    return p;
}

// make -j2: two compilers at once, most of the peak their shared program file.
RunResult make_run() {
    RunResult r;
    r.command = {"make", "-j2"};
    r.exit.code = 0;
    r.wall_seconds = 1.5;
    r.ru_maxrss_bytes = 29 * MiB;  // wait4 of make: its largest waited-for descendant
    r.processes.push_back(summary_process(100, 0, {"make", "-j2"}, 2 * MiB));
    r.processes.push_back(summary_process(101, 100, {"cc1", "-quiet", "alpha.c", "-o", "/tmp/a.s"}, 29 * MiB));
    r.processes.push_back(summary_process(102, 100, {"cc1", "-quiet", "beta.c", "-o", "/tmp/b.s"}, 28 * MiB));
    r.processes.push_back(summary_process(103, 100, {"as", "-o", "alpha.o"}, 4 * MiB));
    r.processes.push_back(summary_process(104, 100, {"sh"}, 1 * MiB));
    r.peak.tree_bytes = 40 * MiB;
    r.peak.largest_pid = 101;
    r.peak.largest_process_bytes = 29 * MiB;
    TimelinePoint small{100'000'000, 10 * MiB, {{0, 1 * MiB}}};
    TimelinePoint peak{400'000'000, 40 * MiB, {{1, 8 * MiB}, {2, 6 * MiB}, {0, 2 * MiB}, {3, 1 * MiB}, {4, 1 * MiB}}};
    r.timeline.points = {small, peak};
    return r;
}

}  // namespace

TEST_CASE("summary: what was alive at the peak, each with its share", "[summary]") {
    const std::string text = format_summary(make_run());
    const std::string expected =
        "max_rss: 40.0 MiB peak of the whole tree (5 processes, 5 images)\n"
        "  at the peak:       40.0 MiB  at 0.400 s, of which:\n"
        "                      8.0 MiB   20% pid 101 cc1 -quiet alpha.c -o /tmp/a.s\n"
        "                      6.0 MiB   15% pid 102 cc1 -quiet beta.c -o /tmp/b.s\n"
        "                      2.0 MiB    5% pid 100 make -j2\n"
        "                      2.0 MiB    5% 2 other processes\n"
        "                     22.0 MiB   55% shared pages: libraries and program files, counted once\n"
        "  largest process:   29.0 MiB  pid 101 cc1 -quiet alpha.c -o /tmp/a.s\n"
        "  ru_maxrss:         29.0 MiB  what GNU time and hyperfine report: the largest single process waited for\n"
        "  wall time:          1.500 s  exit code 0\n";
    CHECK(text == expected);
    CHECK(text.find("root only") == std::string::npos);
}

TEST_CASE("summary: a headline above every snapshot names no moment", "[summary]") {
    RunResult r = make_run();
    r.peak.tree_bytes = 41 * MiB;  // the largest process's own peak, between snapshots
    const std::string text = format_summary(r);
    CHECK(text.find("at the peak") == std::string::npos);
    CHECK(text.find("largest process:   29.0 MiB  pid 101") != std::string::npos);
}

TEST_CASE("summary: a full snapshot says its rest may hold smaller processes", "[summary]") {
    RunResult r = make_run();
    auto& top = r.timeline.points[1].top;
    while (top.size() < 8) top.emplace_back(4, 64 * KiB);
    CHECK(format_summary(r).find("% shared pages (counted once) and smaller processes\n") != std::string::npos);
}

TEST_CASE("summary: a total with no one named (eBPF) gives the moment, not a split", "[summary]") {
    RunResult r = make_run();
    r.timeline.points[1].top.clear();
    const std::string text = format_summary(r);
    CHECK(text.find("  at the peak:       40.0 MiB  at 0.400 s\n  largest process:") != std::string::npos);
    CHECK(text.find("shared pages") == std::string::npos);
}

TEST_CASE("summary: one process gets no breakdown", "[summary]") {
    RunResult r = make_run();
    r.processes.resize(1);
    r.timeline.points[1].top = {{0, 2 * MiB}};
    CHECK(format_summary(r).find("at the peak") == std::string::npos);
}

TEST_CASE("summary: a program that met ptrace gets one line naming the way out", "[summary][words]") {
    RunResult r = make_run();
    r.warnings.push_back(Warning{Warning::Kind::PtraceRefused, 104, 0, 0, EPERM, "PTRACE_TRACEME"});
    const std::string text = format_summary(r);
    CHECK(text.find("  warning: pid 104 called ptrace(PTRACE_TRACEME): refused (Operation not permitted), since "
                    "max_rss already traces the tree (debuggers, strace and LeakSanitizer cannot run under --backend "
                    "ptrace); --backend ebpf (root, kernel BTF) or --backend sample measures it "
                    "untouched\n") != std::string::npos);
}
