#include <max_rss/report/tree_view.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using max_rss::format_tree;
using max_rss::Image;
using max_rss::ImageOrigin;
using max_rss::Process;
using max_rss::Program;
using max_rss::RunResult;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

std::shared_ptr<const Program> program(std::vector<std::string> argv) {
    auto p = std::make_shared<Program>();
    p->argv = std::move(argv);
    return p;
}

Image image(std::shared_ptr<const Program> prog, uint64_t peak, ImageOrigin origin = ImageOrigin::Exec) {
    Image img;
    img.program = std::move(prog);
    img.origin = origin;
    img.peak_rss_bytes = peak;
    img.measured = true;
    return img;
}

Process process(pid_t pid, pid_t ppid, std::vector<Image> images) {
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    p.serial = static_cast<uint64_t>(pid);
    p.images = std::move(images);
    for (const auto& img : p.images) p.peak_rss_bytes = std::max(p.peak_rss_bytes, img.peak_rss_bytes);
    p.exit.code = 0;
    return p;
}

// fork_exec 300: the root allocates 300 MiB, a forked child execs touch 10
// whose own child is killed; a threaded sibling exits 3, and a daemon that
// outlived its parent was reparented (ppid still names its creator).
RunResult small_tree() {
    RunResult r;
    auto fork_exec = program({"/fixtures/fork_exec", "300"});
    r.processes.push_back(process(100, 0, {image(fork_exec, 300 * MiB)}));
    r.processes.push_back(process(
        101, 100, {image(fork_exec, 1 * MiB, ImageOrigin::Fork), image(program({"/usr/bin/touch", "10"}), 10 * MiB)}));
    r.processes.push_back(process(102, 100, {image(program({"worker", "--jobs", "4"}), 2 * MiB)}));
    r.processes[2].threads = 4;
    r.processes[2].exit.code = 3;
    r.processes.push_back(process(103, 101, {image(program({"sleep", "1"}), 512 * KiB)}));
    r.processes[3].exit.code.reset();
    r.processes[3].exit.signal = SIGKILL;
    r.processes.push_back(process(104, 102, {image(program({"daemon"}), 0)}));
    r.processes[4].images[0].measured = false;
    r.processes[4].orphaned = true;
    r.processes[4].exit.code.reset();
    return r;
}

}  // namespace

TEST_CASE("tree: children under their creator, peaks right-aligned", "[tree]") {
    const std::string expected =
        "100        300.0 MiB  fork_exec 300\n"
        "├─ 101      10.0 MiB  fork_exec 300 (1.0 MiB) → touch 10 (10.0 MiB)\n"
        "│  └─ 103  512.0 KiB  sleep 1  [killed by SIGKILL]\n"
        "└─ 102       2.0 MiB  worker --jobs 4  [4 threads, exit 3]\n"
        "   └─ 104          ?  daemon  [orphaned]\n";
    CHECK(format_tree(small_tree(), false) == expected);
}

TEST_CASE("tree: colour only decorates", "[tree]") {
    RunResult r;
    r.processes.push_back(process(7, 0, {image(program({"sh"}), 4 * MiB)}));
    r.processes.push_back(process(8, 7, {image(program({"false"}), 1 * MiB)}));
    r.processes[1].exit.code = 1;
    const std::string expected =
        "7     \x1b[1m4.0 MiB\x1b[0m  sh\n"
        "\x1b[2m└─ \x1b[0m8  \x1b[1m1.0 MiB\x1b[0m  false  \x1b[31m[exit 1]\x1b[0m\n";
    CHECK(format_tree(r, true) == expected);
    CHECK(format_tree(r, false) ==
          "7     4.0 MiB  sh\n"
          "└─ 8  1.0 MiB  false  [exit 1]\n");
}

TEST_CASE("tree: a recycled pid is matched to its latest holder", "[tree]") {
    RunResult r;
    r.processes.push_back(process(10, 0, {image(program({"make"}), 3 * MiB)}));
    r.processes.push_back(process(11, 10, {image(program({"cc", "a.c"}), 5 * MiB)}));
    r.processes.push_back(process(12, 11, {image(program({"as"}), 1 * MiB)}));
    // 11 exited; the pid came back for another child of make, which forks.
    r.processes.push_back(process(11, 10, {image(program({"cc", "b.c"}), 6 * MiB)}));
    r.processes.push_back(process(13, 11, {image(program({"ld"}), 2 * MiB)}));
    // Created by a process outside the run (a CLONE_PARENT sibling, say).
    r.processes.push_back(process(20, 999, {image(program({"stray"}), 100)}));
    r.processes[5].exit.code.reset();
    r.processes[5].exit.signal = SIGSEGV;
    r.processes[5].exit.core_dumped = true;
    // Columns align across the whole tree; a process whose creator is not in
    // the run starts a tree of its own after the root's.
    const std::string expected =
        "10        3.0 MiB  make\n"
        "├─ 11     5.0 MiB  cc a.c\n"
        "│  └─ 12  1.0 MiB  as\n"
        "└─ 11     6.0 MiB  cc b.c\n"
        "   └─ 13  2.0 MiB  ld\n"
        "20          100 B  stray  [killed by SIGSEGV (core dumped)]\n";
    CHECK(format_tree(r, false) == expected);
}

TEST_CASE("tree: vfork images and shared address spaces", "[tree]") {
    RunResult r;
    auto sh = program({"sh", "-c", "exec env"});
    r.processes.push_back(process(30, 0, {image(sh, 2 * MiB)}));
    r.processes.push_back(
        process(31, 30, {image(sh, 0, ImageOrigin::SharedMm), image(program({"/usr/bin/env"}), 1536 * KiB)}));
    r.processes.push_back(process(32, 30, {image(sh, 0, ImageOrigin::SharedMm)}));
    r.processes[2].shares_mm_with = 30;
    const std::string expected =
        "30     2.0 MiB  sh -c exec env\n"
        "├─ 31  1.5 MiB  sh -c exec env (shared mm) → env (1.5 MiB)\n"
        "└─ 32      0 B  sh -c exec env  [shares memory of 30]\n";
    CHECK(format_tree(r, false) == expected);
}

TEST_CASE("tree: small trees are never collapsed", "[tree]") {
    RunResult r;
    r.processes.push_back(process(1, 0, {image(program({"many_children", "3"}), 1 * MiB)}));
    for (pid_t i = 2; i <= 4; ++i) r.processes.push_back(process(i, 1, {image(program({"true"}), 100 * KiB)}));
    const std::string expected =
        "1       1.0 MiB  many_children 3\n"
        "├─ 2  100.0 KiB  true\n"
        "├─ 3  100.0 KiB  true\n"
        "└─ 4  100.0 KiB  true\n";
    CHECK(format_tree(r, false) == expected);
}

TEST_CASE("tree: runs of alike leaves collapse in trees of more than 200", "[tree]") {
    RunResult r;
    auto many = program({"/fixtures/many_children", "2000"});
    r.processes.push_back(process(100, 0, {image(many, 3 * MiB)}));
    // A first child that itself has a child: not a leaf, never collapsed.
    r.processes.push_back(process(101, 100, {image(many, 1 * MiB, ImageOrigin::Fork)}));
    r.processes.push_back(process(102, 101, {image(program({"sleep", "0"}), 600 * KiB)}));
    // 1999 alike leaves, with one that failed in the middle of them.
    for (pid_t pid = 103; pid < 103 + 1999; ++pid) {
        r.processes.push_back(process(pid, 100, {image(many, (pid % 3 + 1) * 400 * KiB, ImageOrigin::Fork)}));
        if (pid == 1000) r.processes.back().exit.code = 2;
    }
    const std::string expected =
        "100          3.0 MiB  many_children 2000\n"
        "├─ 101       1.0 MiB  many_children 2000\n"
        "│  └─ 102  600.0 KiB  sleep 0\n"
        "├─ ×897      1.2 MiB  many_children 2000  [peak max of 897, pids 103…999]\n"
        "├─ 1000    800.0 KiB  many_children 2000  [exit 2]\n"
        "└─ ×1101     1.2 MiB  many_children 2000  [peak max of 1101, pids 1001…2101]\n";
    CHECK(format_tree(r, false) == expected);
}

TEST_CASE("tree: an empty run is an empty string", "[tree]") { CHECK(format_tree(RunResult{}, false).empty()); }
