#include <max_rss/procfs/procfs.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <optional>
#include <sstream>
#include "../e2e/helpers.hpp"
#include "units.hpp"

using namespace max_rss;

namespace {
std::string load(const char* name) {
    std::ifstream in(std::string(MAX_RSS_TEST_DATA_DIR) + "/proc/" + name);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

TEST_CASE("parse_status reads a real status file in bytes", "[procfs]") {
    auto s = procfs::parse_status(load("status_touch50.txt"));
    REQUIRE(s.hwm_bytes);
    CHECK(*s.hwm_bytes == 52476 * KiB);
    CHECK(*s.rss_bytes == 52476 * KiB);
    CHECK(s.rss_anon_bytes.has_value());
    CHECK(*s.rss_anon_bytes + *s.rss_file_bytes + *s.rss_shmem_bytes == *s.rss_bytes);
    CHECK(*s.swap_bytes == 0);
    CHECK(s.tgid.has_value());
    CHECK(s.ppid.has_value());
    CHECK(*s.threads == 1);
    REQUIRE(s.seccomp_filters);
    CHECK(*s.seccomp_filters == 0);
    const auto filtered = procfs::parse_status("Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\n");
    REQUIRE(filtered.seccomp_filters);
    CHECK(*filtered.seccomp_filters == 3);
}

TEST_CASE("parse_status of a task without an mm has no Vm figures", "[procfs]") {
    auto s = procfs::parse_status(load("status_kthread.txt"));
    CHECK_FALSE(s.hwm_bytes.has_value());
    CHECK_FALSE(s.rss_bytes.has_value());
    CHECK(*s.tgid == 2);
}

TEST_CASE("parse_status never turns garbled or truncated text into a number", "[procfs]") {
    SECTION("value cut before its unit") {
        auto s = procfs::parse_status("Name:\tx\nVmHWM:\t   524");
        CHECK_FALSE(s.hwm_bytes.has_value());
    }
    SECTION("letters in the number") {
        auto s = procfs::parse_status("VmHWM:\t 5x24 kB\nVmRSS:\t 12 kB\n");
        CHECK_FALSE(s.hwm_bytes.has_value());
        CHECK(*s.rss_bytes == 12 * KiB);
    }
    SECTION("wrong unit") {
        CHECK_FALSE(procfs::parse_status("VmHWM:\t 524 MB\n").hwm_bytes.has_value());
    }
    SECTION("overflow") {
        CHECK_FALSE(procfs::parse_status("VmHWM:\t 99999999999999999999 kB\n").hwm_bytes.has_value());
        CHECK_FALSE(procfs::parse_status("VmHWM:\t 18014398509481984 kB\n").hwm_bytes.has_value());
    }
    SECTION("negative") { CHECK_FALSE(procfs::parse_status("VmHWM:\t -5 kB\n").hwm_bytes.has_value()); }
    SECTION("empty text and lines without a colon") {
        CHECK_FALSE(procfs::parse_status("").hwm_bytes.has_value());
        CHECK_FALSE(procfs::parse_status("VmHWM 12 kB\n:\n\n").hwm_bytes.has_value());
    }
    SECTION("every prefix of a real file parses without a wrong figure") {
        const std::string full = load("status_touch50.txt");
        for (size_t n = 0; n <= full.size(); ++n) {
            auto s = procfs::parse_status(std::string_view(full).substr(0, n));
            if (s.hwm_bytes) CHECK(*s.hwm_bytes == 52476 * KiB);
        }
    }
}

TEST_CASE("parse_smaps_rollup reads a real rollup in bytes", "[procfs]") {
    auto r = procfs::parse_smaps_rollup(load("smaps_rollup_touch50.txt"));
    REQUIRE(r);
    CHECK(*r->rss_bytes == 52476 * KiB);
    CHECK(*r->pss_bytes == 51372 * KiB);
    REQUIRE(r->anonymous_bytes);
    CHECK(*r->anonymous_bytes >= 50 * 1024 * KiB);
    CHECK(*r->swap_bytes == 0);
    auto b = procfs::make_breakdown(std::nullopt, r);
    REQUIRE(b.smaps);
    CHECK(*b.smaps->private_bytes == *r->private_clean_bytes + *r->private_dirty_bytes);
    CHECK(*b.smaps->shared_bytes == *r->shared_clean_bytes + *r->shared_dirty_bytes);
    CHECK(*b.smaps->pss_bytes == 51372 * KiB);
    CHECK(*b.rss_bytes == *r->rss_bytes);
    CHECK_FALSE(b.hwm_bytes.has_value());
    CHECK_FALSE(procfs::make_breakdown(procfs::Status{}, std::nullopt).smaps);  // not read: no smaps part
}

TEST_CASE("parse_smaps_rollup rejects text that is not a rollup", "[procfs]") {
    CHECK_FALSE(procfs::parse_smaps_rollup("").has_value());
    CHECK_FALSE(procfs::parse_smaps_rollup("Rss: 12 kB\n").has_value());  // no [rollup] header
    CHECK_FALSE(procfs::parse_smaps_rollup("0-1 ---p 0 00:00 0 [rollup]\nRss: x kB\n").has_value());
    const std::string full = load("smaps_rollup_touch50.txt");
    for (size_t n = 0; n <= full.size(); ++n) {
        auto r = procfs::parse_smaps_rollup(std::string_view(full).substr(0, n));
        if (r && r->pss_bytes) CHECK(*r->pss_bytes == 51372 * KiB);
    }
}

TEST_CASE("parse_newest_pid reads the last field of /proc/loadavg", "[procfs]") {
    CHECK(procfs::parse_newest_pid("0.20 0.18 0.12 1/80 11206\n") == pid_t{11206});
    CHECK_FALSE(procfs::parse_newest_pid("0.20 0.18 0.12 1/80 112"));  // cut short: maybe a prefix
    CHECK_FALSE(procfs::parse_newest_pid("0.20 0.18 0.12 1/80 -3\n"));
    CHECK_FALSE(procfs::parse_newest_pid("0.20 0.18 0.12 1/80 0\n"));
    CHECK_FALSE(procfs::parse_newest_pid("\n"));
    CHECK_FALSE(procfs::parse_newest_pid(""));
    // And the real one: a pid that exists or existed.
    const auto newest = procfs::NewestPidReader().read();
    REQUIRE(newest);
    CHECK(*newest > 0);
    const auto pid_max = procfs::read_pid_max();
    REQUIRE(pid_max);
    CHECK(*newest < *pid_max);
}

TEST_CASE("parse_statm reads resident and shared pages in bytes", "[procfs]") {
    auto s = procfs::parse_statm("1188 13119 290 193 0 13058 0\n", 4096);
    REQUIRE(s);
    CHECK(s->resident_bytes == 13119ull * 4096);
    CHECK(s->shared_bytes == 290ull * 4096);
    auto real = procfs::parse_statm(load("statm_touch50.txt"), 4096);
    REQUIRE(real);
    CHECK(real->resident_bytes == 52476 * KiB);  // the same moment as status_touch50.txt
    CHECK_FALSE(procfs::parse_statm("1188", 4096).has_value());
    CHECK_FALSE(procfs::parse_statm("1188 12", 4096).has_value());
    CHECK_FALSE(procfs::parse_statm("1188 x 2", 4096).has_value());
    CHECK_FALSE(procfs::parse_statm("", 4096).has_value());
    CHECK_FALSE(procfs::parse_statm("1 99999999999999999999 2", 4096).has_value());
}

TEST_CASE("parse_cmdline keeps empty arguments", "[procfs]") {
    using V = std::vector<std::string>;
    CHECK(procfs::parse_cmdline(std::string_view("prog\0a\0\0", 8)) == V{"prog", "a", ""});
    CHECK(procfs::parse_cmdline(std::string_view("prog\0", 5)) == V{"prog"});
    CHECK(procfs::parse_cmdline("").empty());
}

TEST_CASE("read_status of a vanished task is nullopt, not zero", "[procfs]") {
    CHECK_FALSE(procfs::read_status(999999999).has_value());
    auto self = procfs::read_status(getpid());
    REQUIRE(self);
    CHECK(*self->hwm_bytes > 0);
}

TEST_CASE("parse_status reads the pending signals of the thread and of the process", "[procfs]") {
    CHECK(procfs::parse_status(load("status_touch50.txt")).pending_signals == 0);
    // SIGINT (2) pending for the process, SIGUSR1 (10) for the thread.
    auto s = procfs::parse_status("SigPnd:\t0000000000000200\nShdPnd:\t0000000000000002\n");
    CHECK(s.pending_signals == ((1u << 9) | (1u << 1)));
    CHECK_FALSE(procfs::parse_status("SigPnd:\t00000000000000zz\n").pending_signals.has_value());
    CHECK_FALSE(procfs::parse_status("SigPnd:\t00000000000000000200\n").pending_signals.has_value());
}

TEST_CASE("parse_maps_ranges finds the ranges of one path, nothing else", "[procfs]") {
    const std::string text =
        "55d0c0a00000-55d0c0a21000 r--p 00000000 fe:00 5309273                    /work/build/max_rss\n"
        "7f394333d000-7f394533e000 r--s 00001000 00:10 1039                       anon_inode:bpf-map\n"
        "7f394533e000-7f394533f000 rw-s 00000000 00:10 1039                       anon_inode:bpf-map\n"
        "7f3945364000-7f39454ba000 r-xp 00026000 fe:00 332835                     /usr/lib/libc.so.6\n"
        "7ffd075de000-7ffd075ff000 rw-p 00000000 00:00 0                          [stack]\n"
        "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
        "garbage anon_inode:bpf-map\n"
        "7f5000000000-7f5000001000 rw-s 00000000 00:10 1039 anon_inode:bpf-map";  // cut short
    const auto ranges = procfs::parse_maps_ranges(text, "anon_inode:bpf-map");
    REQUIRE(ranges.size() == 2);
    CHECK(ranges[0].start == 0x7f394333d000);
    CHECK(ranges[0].end == 0x7f394533e000);
    CHECK(ranges[1].start == 0x7f394533e000);
    CHECK(ranges[1].end == 0x7f394533f000);
    CHECK(procfs::parse_maps_ranges(text, "[stack]").size() == 1);
    CHECK(procfs::parse_maps_ranges(text, "").empty());  // an anonymous mapping has no path: not asked for
    CHECK(procfs::parse_maps_ranges(text, "/usr/lib/libc.so").empty());
}

TEST_CASE("parse_stat_state reads the state after the command, whatever the command holds", "[procfs]") {
    CHECK(procfs::parse_stat_state("9838 (cat) R 9835 9835 1421 0 -1 4194304 132 0 0") == 'R');
    CHECK(procfs::parse_stat_state("41 (sh) Z 1 41 41 0 -1 4227084 0 0 0") == 'Z');
    // A program may name itself anything, ") S " and newlines included.
    CHECK(procfs::parse_stat_state("7 (evil) S 1 (x) D\n) X 1 7 7 0") == 'X');
    CHECK(procfs::parse_stat_state("7 () D 1 7 7 0") == 'D');
}

TEST_CASE("parse_stat_identity reads fields 4 and 22, whatever the command holds", "[procfs]") {
    const std::string tail = " 26500 26500 1376 0 -1 4194304 126 0 0 0 0 0 0 0 20 0 1 0 80026 3133440 394 1844\n";
    auto check = [](const std::string& text, pid_t ppid, uint64_t start_ticks) {
        INFO(text);
        const auto identity = procfs::parse_stat_identity(text);
        REQUIRE(identity);
        CHECK(identity->ppid == ppid);
        CHECK(identity->start_ticks == start_ticks);
    };
    check("26544 (cat) R" + tail, 26500, 80026);
    check("7 (evil) S 1 2 3 4 5 6 7 8 9 (x) R" + tail, 26500, 80026);
    check("1 (init) S 0 1 1 0 -1 4194560 9 0 0 0 0 0 0 0 20 0 1 0 7", 0, 7);
    check("1 (init) S 0 1 1 0 -1 4194560 9 0 0 0 0 0 0 0 20 0 1 0 7\n", 0, 7);
    // Cut short, or not a number where the parent or the start time is.
    CHECK_FALSE(procfs::parse_stat_identity("26544 (cat) R 26500 26500 1376 0 -1 4194304 126 0 0 0 0"));
    CHECK_FALSE(procfs::parse_stat_identity("1 (init) S 0 1 1 0 -1 4194560 9 0 0 0 0 0 0 0 20 0 1 0 x 1"));
    CHECK_FALSE(procfs::parse_stat_identity("1 (init) S 0 1 1 0 -1 4194560 9 0 0 0 0 0 0 0 20 0 1 0 "));
    CHECK_FALSE(procfs::parse_stat_identity("1 (init) S x 1 1 0 -1 4194560 9 0 0 0 0 0 0 0 20 0 1 0 7"));
    CHECK_FALSE(procfs::parse_stat_identity("cat R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"));
}

TEST_CASE("read_stat_identity: the same for a process all its life, none once it is gone", "[procfs]") {
    const pid_t child = max_rss::test::fork_waiter();
    REQUIRE(child >= 0);
    const auto first = procfs::read_stat_identity(child);
    REQUIRE(first.has_value());
    CHECK(first->ppid == ::getpid());
    CHECK(procfs::read_stat_identity(child)->start_ticks == first->start_ticks);
    const auto own = procfs::read_stat_identity(::getpid());
    REQUIRE(own.has_value());
    CHECK(first->start_ticks >= own->start_ticks);  // started after this test's process
    max_rss::test::end_child(child);
    CHECK_FALSE(procfs::read_stat_identity(child).has_value());
}

TEST_CASE("parse_stat_identity reads the image's layout (fields 26-27) where the line has it", "[procfs]") {
    // A real line of `sleep 100` (Linux 6.18), its command holding ") ".
    const std::string head = "4242 (a) b) S 4200 4242 4200 34816 4242 4194304 95 0 0 0 0 0 0 0 20 0 1 0 123456 5734400 256 "
                             "18446744073709551615 ";
    const std::string tail = " 140727224216432 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94813367979856 94813367981200 "
                             "94813383077888 140727224220393 140727224220403 140727224220403 140727224225769 0\n";
    const auto identity = procfs::parse_stat_identity(head + "94813367951360 94813367966817" + tail);
    REQUIRE(identity);
    CHECK(identity->ppid == 4200);
    CHECK(identity->start_ticks == 123456);
    CHECK(identity->layout.known());
    CHECK(identity->layout.start_code == 94813367951360ULL);
    CHECK(identity->layout.end_code == 94813367966817ULL);
    // What the kernel prints where there is no layout to compare: a zombie
    // or an exec that has not set it yet (0 0), a process the reader may not
    // ptrace-read (1 1). The identity stands; the layout is not known.
    for (const char* fields : {"0 0", "1 1", "0 94813367966817"}) {
        INFO(fields);
        const auto unknown = procfs::parse_stat_identity(head + fields + tail);
        REQUIRE(unknown);
        CHECK(unknown->start_ticks == 123456);
        CHECK_FALSE(unknown->layout.known());
    }
    // Cut short before field 27.
    const auto short_line = procfs::parse_stat_identity(head + "94813367951360");
    REQUIRE(short_line);
    CHECK(short_line->start_ticks == 123456);
    CHECK_FALSE(short_line->layout.known());
}

TEST_CASE("read_stat_identity: a fork has its creator's layout, an exec another", "[procfs]") {
    // go: the child execs when it reads a byte. execed: close-on-exec, its
    // end in the child closes at the exec, so EOF here says the exec is done.
    int go[2], execed[2];
    REQUIRE(::pipe(go) == 0);
    REQUIRE(::pipe2(execed, O_CLOEXEC) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(go[1]);
        ::close(execed[0]);
        char byte = 0;
        if (::read(go[0], &byte, 1) == 1) ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(go[0]);
    ::close(execed[1]);
    const auto own = procfs::read_stat_identity(::getpid());
    REQUIRE(own);
    REQUIRE(own->layout.known());
    const auto forked = procfs::read_stat_identity(child);
    REQUIRE(forked);
    CHECK(forked->layout == own->layout);
    const char byte = 1;
    REQUIRE(::write(go[1], &byte, 1) == 1);
    char none = 0;
    CHECK(::read(execed[0], &none, 1) == 0);  // EOF: the exec has begun
    // The new image's layout is set a little later in the exec, once its
    // program is mapped: until then it is not known.
    std::optional<procfs::StatIdentity> after;
    CHECK(max_rss::test::wait_until([&] {
        after = procfs::read_stat_identity(child);
        return after && after->layout.known();
    }));
    REQUIRE(after);
    CHECK_FALSE(after->layout == own->layout);
    CHECK(after->start_ticks == forked->start_ticks);  // the same process
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(go[1]);
    ::close(execed[0]);
}

TEST_CASE("parse_stat_state rejects text that is not a stat line", "[procfs]") {
    CHECK_FALSE(procfs::parse_stat_state(""));
    CHECK_FALSE(procfs::parse_stat_state("9838 cat R 9835"));
    CHECK_FALSE(procfs::parse_stat_state("9838 (cat)"));
    CHECK_FALSE(procfs::parse_stat_state("9838 (cat) "));
    CHECK_FALSE(procfs::parse_stat_state("9838 (cat) RR 1"));
    CHECK_FALSE(procfs::parse_stat_state("9838 (cat)R 1"));
    CHECK_FALSE(procfs::parse_stat_state("9838 (cat) 1 2"));
    CHECK_FALSE(procfs::parse_stat_state(") R 1 (x"));
}

TEST_CASE("exit_finished: false while a process runs, true once it is a zombie and once it is gone", "[procfs]") {
    CHECK_FALSE(procfs::exit_finished(::getpid()));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) ::_exit(0);
    // Its exit, waited for without reaping it: a zombie from here.
    siginfo_t info{};
    REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
    CHECK(procfs::exit_finished(child));
    REQUIRE(::waitpid(child, nullptr, 0) == child);
    CHECK(procfs::exit_finished(child));
}
