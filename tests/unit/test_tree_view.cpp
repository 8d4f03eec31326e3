#include <max_rss/report/tree_view.hpp>
#include <max_rss/util/text.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include "units.hpp"
#include "../e2e/helpers.hpp"

using max_rss::display_width;
using max_rss::format_tree;
using max_rss::TreeOptions;
using max_rss::Image;
using max_rss::ImageOrigin;
using max_rss::Process;
using max_rss::Program;
using max_rss::RunResult;

using max_rss::test::program;

namespace {


Image image(std::shared_ptr<const Program> prog, uint64_t peak, ImageOrigin origin = ImageOrigin::Exec) {
    Image img;
    img.program = std::move(prog);
    img.origin = origin;
    img.peak_rss_bytes = peak;
    img.measured = true;
    return img;
}

Process view_process(pid_t pid, pid_t ppid, std::vector<Image> images) {
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
    r.processes.push_back(view_process(100, 0, {image(fork_exec, 300 * MiB)}));
    r.processes.push_back(view_process(
        101, 100, {image(fork_exec, 1 * MiB, ImageOrigin::Fork), image(program({"/usr/bin/touch", "10"}), 10 * MiB)}));
    r.processes.push_back(view_process(102, 100, {image(program({"worker", "--jobs", "4"}), 2 * MiB)}));
    r.processes[2].threads = 4;
    r.processes[2].exit.code = 3;
    r.processes.push_back(view_process(103, 101, {image(program({"sleep", "1"}), 512 * KiB)}));
    r.processes[3].exit.code.reset();
    r.processes[3].exit.signal = SIGKILL;
    r.processes.push_back(view_process(104, 102, {image(program({"daemon"}), 0)}));
    r.processes[4].images[0].measured = false;
    r.processes[4].orphaned = true;
    r.processes[4].exit.code.reset();
    return r;
}

std::string plain(const RunResult& r) { return format_tree(r, TreeOptions{}); }

// The lines of text, without the trailing "key:" part.
std::vector<std::string> tree_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("key:", 0) == 0) break;
        lines.push_back(line);
    }
    return lines;
}

const std::string kEnded = "[exit N], [killed by SIG…]: how it ended, when not exit 0";
const std::string kGroup = "×N: N alike siblings in one line, with their largest peak";

}  // namespace

TEST_CASE("tree: children under their creator, peaks right-aligned, notation explained", "[tree]") {
    const std::string expected =
        "100        300.0 MiB  fork_exec 300\n"
        "├─ 101      10.0 MiB  fork (1.0 MiB) → touch 10 (10.0 MiB)\n"
        "│  └─ 103  512.0 KiB  sleep 1  [killed by SIGKILL]\n"
        "└─ 102       2.0 MiB  worker --jobs 4  [4 threads, exit 3]\n"
        "   └─ 104          ?  daemon  [orphaned]\n"
        "key: fork (A) → prog (B): a forked copy of its parent that added A, then ran prog; ?: no stop of it could "
        "be measured; " + kEnded + "; [orphaned]: outlived its parent\n";
    CHECK(plain(small_tree()) == expected);
}

TEST_CASE("tree: colour only decorates", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(7, 0, {image(program({"sh"}), 4 * MiB)}));
    r.processes.push_back(view_process(8, 7, {image(program({"false"}), 1 * MiB)}));
    r.processes[1].exit.code = 1;
    TreeOptions colour;
    colour.color = true;
    const std::string expected =
        "7     \x1b[1m4.0 MiB\x1b[0m  sh\n"
        "\x1b[2m└─ \x1b[0m8  \x1b[1m1.0 MiB\x1b[0m  false  \x1b[31m[exit 1]\x1b[0m\n"
        "\x1b[2mkey: " + kEnded + "\x1b[0m\n";
    CHECK(format_tree(r, colour) == expected);
    CHECK(plain(r) ==
          "7     4.0 MiB  sh\n"
          "└─ 8  1.0 MiB  false  [exit 1]\n"
          "key: " + kEnded + "\n");
}

TEST_CASE("tree: a recycled pid is matched to its latest holder", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(10, 0, {image(program({"make"}), 3 * MiB)}));
    r.processes.push_back(view_process(11, 10, {image(program({"cc", "a.c"}), 5 * MiB)}));
    r.processes.push_back(view_process(12, 11, {image(program({"as"}), 1 * MiB)}));
    // 11 exited; the pid came back for another child of make, which forks.
    r.processes.push_back(view_process(11, 10, {image(program({"cc", "b.c"}), 6 * MiB)}));
    r.processes.push_back(view_process(13, 11, {image(program({"ld"}), 2 * MiB)}));
    // Created by a process outside the run (a CLONE_PARENT sibling, say).
    r.processes.push_back(view_process(20, 999, {image(program({"stray"}), 100)}));
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
        "20          100 B  stray  [killed by SIGSEGV (core dumped)]\n"
        "key: " + kEnded + "\n";
    CHECK(plain(r) == expected);
}

TEST_CASE("tree: vfork images and shared address spaces", "[tree]") {
    RunResult r;
    auto sh = program({"sh", "-c", "exec env"});
    r.processes.push_back(view_process(30, 0, {image(sh, 2 * MiB)}));
    r.processes.push_back(
        view_process(31, 30, {image(sh, 0, ImageOrigin::SharedMm), image(program({"/usr/bin/env"}), 1536 * KiB)}));
    r.processes.push_back(view_process(32, 30, {image(sh, 0, ImageOrigin::SharedMm)}));
    r.processes[2].shares_mm_with = 30;
    // One image of 31 held memory: its peak is the process's, said once.
    const std::string expected =
        "30     2.0 MiB  sh -c exec env\n"
        "├─ 31  1.5 MiB  vfork → env\n"
        "└─ 32      0 B  sh -c exec env  [shares memory of 30]\n"
        "key: vfork → prog: ran in its parent's memory until it started prog; [shares memory of P]: a thread-like "
        "child, counted in P\n";
    CHECK(plain(r) == expected);
}

TEST_CASE("tree: two alike siblings stay apart, three collapse with their peak range", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(1, 0, {image(program({"many_children", "3"}), 1 * MiB)}));
    r.processes.push_back(view_process(2, 1, {image(program({"true"}), 100 * KiB)}));
    r.processes.push_back(view_process(3, 1, {image(program({"true"}), 100 * KiB)}));
    CHECK(plain(r) ==
          "1       1.0 MiB  many_children 3\n"
          "├─ 2  100.0 KiB  true\n"
          "└─ 3  100.0 KiB  true\n");
    r.processes.push_back(view_process(4, 1, {image(program({"true"}), 300 * KiB)}));
    CHECK(plain(r) ==
          "1        1.0 MiB  many_children 3\n"
          "└─ ×3  300.0 KiB  true  [3 alike: 100.0–300.0 KiB, pids 2…4]\n"
          "key: " + kGroup + "\n");
}

TEST_CASE("tree: runs of alike leaves collapse around one that differs", "[tree]") {
    RunResult r;
    auto many = program({"/fixtures/many_children", "2000"});
    r.processes.push_back(view_process(100, 0, {image(many, 3 * MiB)}));
    // A first child that itself has a child: not alike the leaves.
    r.processes.push_back(view_process(101, 100, {image(many, 1 * MiB, ImageOrigin::Fork)}));
    r.processes.push_back(view_process(102, 101, {image(program({"sleep", "0"}), 600 * KiB)}));
    // 1999 alike leaves, with one that failed in the middle of them.
    for (pid_t pid = 103; pid < 103 + 1999; ++pid) {
        r.processes.push_back(view_process(pid, 100, {image(many, (pid % 3 + 1) * 400 * KiB, ImageOrigin::Fork)}));
        if (pid == 1000) r.processes.back().exit.code = 2;
    }
    const std::string expected =
        "100          3.0 MiB  many_children 2000\n"
        "├─ 101       1.0 MiB  many_children 2000\n"
        "│  └─ 102  600.0 KiB  sleep 0\n"
        "├─ ×897      1.2 MiB  many_children 2000  [897 alike: 400.0 KiB–1.2 MiB, pids 103…999]\n"
        "├─ 1000    800.0 KiB  many_children 2000  [exit 2]\n"
        "└─ ×1101     1.2 MiB  many_children 2000  [1101 alike: 400.0 KiB–1.2 MiB, pids 1001…2101]\n"
        "key: " + kGroup + "; " + kEnded + "\n";
    CHECK(plain(r) == expected);
}

TEST_CASE("tree: alike siblings with alike subtrees collapse level by level", "[tree]") {
    // pyenv's shims: a shell forks subshells that each fork a readlink.
    RunResult r;
    auto bash = program({"bash", "/root/.pyenv/libexec/pyenv-hooks", "which"});
    r.processes.push_back(view_process(1, 0, {image(bash, 3 * MiB)}));
    pid_t pid = 2;
    for (int i = 0; i < 3; ++i) {
        const pid_t sub = pid++;
        r.processes.push_back(view_process(sub, 1, {image(bash, (2 + i) * MiB, ImageOrigin::Fork)}));
        r.processes.push_back(view_process(pid++, sub, {image(program({"readlink", "x.bash"}), 1 * MiB)}));
        r.processes.back().exit.code = 1;
    }
    const std::string expected =
        "1         3.0 MiB  bash /root/.pyenv/libexec/pyenv-hooks which\n"
        "└─ ×3     4.0 MiB  bash /root/.pyenv/libexec/pyenv-hooks which  [3 alike: 2.0–4.0 MiB, pids 2…6]\n"
        "   └─ ×3  1.0 MiB  readlink x.bash  [3 alike: 1.0 MiB, pids 3…7, exit 1]\n"
        "key: " + kGroup + "; " + kEnded + "\n";
    CHECK(plain(r) == expected);
}

TEST_CASE("tree: lines are cut to the width, the notes kept, the key wrapped", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(100, 0, {image(program({"sh", "-c", "make"}), 2 * MiB)}));
    r.processes.push_back(view_process(
        101, 100, {image(program({"python3", "-c", "import time; x = bytearray(80 << 20); time.sleep(0.5)"}), 80 * MiB)}));
    r.processes[1].exit.code = 1;
    TreeOptions narrow;
    narrow.width_columns = 50;
    const std::string text = format_tree(r, narrow);
    CHECK(text ==
          "100      2.0 MiB  sh -c make\n"
          "└─ 101  80.0 MiB  python3 -c import tim…  [exit 1]\n"
          "key: " + kEnded + "\n");
    for (const auto& line : tree_lines(text)) CHECK(display_width(line) <= 50);
    // Too narrow for the notes: the command keeps the room.
    narrow.width_columns = 30;
    CHECK(tree_lines(format_tree(r, narrow))[1] == "└─ 101  80.0 MiB  python3 -c…");
    // Unlimited: every word.
    CHECK(tree_lines(plain(r))[1] ==
          "└─ 101  80.0 MiB  python3 -c import time; x = bytearray(80 << 20); time.sleep(0.5)  [exit 1]");
}

TEST_CASE("tree: a long chain of images keeps its first and last program", "[tree]") {
    RunResult r;
    auto shim = program({"/usr/bin/env", "bash", "/root/.pyenv/shims/python3", "pool.py"});
    r.processes.push_back(view_process(
        1, 0,
        {image(shim, 1 * MiB), image(program({"bash", "/root/.pyenv/libexec/pyenv", "exec", "python3"}), 3 * MiB),
         image(program({"bash", "/root/.pyenv/libexec/pyenv-exec", "python3"}), 3 * MiB),
         image(program({"/root/.pyenv/versions/3.11.7/bin/python3", "pool.py"}), 15 * MiB)}));
    TreeOptions narrow;
    narrow.width_columns = 70;
    CHECK(tree_lines(format_tree(r, narrow))[0] == "1  15.0 MiB  env… (1.0 MiB) → 2 more → python3 pool.py (15.0 MiB)");
    CHECK(format_tree(r, narrow).find("N more: programs run between the first and the last") != std::string::npos);
}

TEST_CASE("tree: --tree-min hides small processes but keeps the way to large ones", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(1, 0, {image(program({"make"}), 3 * MiB)}));
    r.processes.push_back(view_process(2, 1, {image(program({"cc1", "a.c"}), 10 * MiB)}));
    r.processes.push_back(view_process(3, 1, {image(program({"echo"}), 100 * KiB)}));
    r.processes.push_back(view_process(4, 1, {image(program({"sh"}), 200 * KiB)}));
    r.processes.push_back(view_process(5, 4, {image(program({"ld"}), 5 * MiB)}));
    TreeOptions options;
    options.min_peak_bytes = 1 * MiB;
    CHECK(format_tree(r, options) ==
          "1          3.0 MiB  make\n"
          "├─ 2      10.0 MiB  cc1 a.c\n"
          "└─ 4     200.0 KiB  sh\n"
          "   └─ 5    5.0 MiB  ld\n"
          "(1 process below --tree-min 1.0 MiB not shown)\n");
    // A root below the minimum is still the first line.
    options.min_peak_bytes = 1024 * MiB;
    CHECK(format_tree(r, options) == "1  3.0 MiB  make\n(4 processes below --tree-min 1.0 GiB not shown)\n");
}

TEST_CASE("tree: --tree-depth cuts below a level and says how many are deeper", "[tree]") {
    RunResult r;
    r.processes.push_back(view_process(1, 0, {image(program({"a"}), 1 * MiB)}));
    r.processes.push_back(view_process(2, 1, {image(program({"b"}), 1 * MiB)}));
    r.processes.push_back(view_process(3, 2, {image(program({"c"}), 1 * MiB)}));
    r.processes.push_back(view_process(4, 3, {image(program({"d"}), 1 * MiB)}));
    r.processes.push_back(view_process(5, 1, {image(program({"e"}), 9 * MiB)}));
    TreeOptions options;
    options.max_depth = 1;
    CHECK(format_tree(r, options) ==
          "1     1.0 MiB  a\n"
          "├─ 2  1.0 MiB  b  [+2 deeper]\n"
          "└─ 5  9.0 MiB  e\n"
          "(2 processes deeper than --tree-depth 1 not shown)\n"
          "key: +N deeper: descendants below --tree-depth\n");
    options.max_depth = 0;
    options.min_peak_bytes = 2 * MiB;
    CHECK(format_tree(r, options) ==
          "1  1.0 MiB  a  [+4 deeper]\n"
          "(4 processes deeper than --tree-depth 0 not shown)\n"
          "key: +N deeper: descendants below --tree-depth\n");
}

TEST_CASE("tree: every notation is in the help", "[tree]") {
    const std::string help = max_rss::tree_notation();
    for (const char* word : {"fork (A)", "vfork →", "×N", "[exit N]", "[orphaned]", "+N deeper", "?: "})
        CHECK(help.find(word) != std::string::npos);
}

TEST_CASE("tree: an empty run is an empty string", "[tree]") { CHECK(plain(RunResult{}).empty()); }
