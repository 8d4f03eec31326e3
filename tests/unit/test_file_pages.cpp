#include <max_rss/procfs/file_pages.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

using namespace max_rss;
using procfs::FilePageRun;

TEST_CASE("file pages: a maps line names a file's pages, or none", "[procfs]") {
    const auto lib = procfs::parse_maps_file_range(
        "7f3a1c200000-7f3a1c228000 r--p 00002000 fd:01 1835012                    /usr/lib/x86_64-linux-gnu/libc.so.6");
    REQUIRE(lib);
    CHECK(lib->start == 0x7f3a1c200000);
    CHECK(lib->end == 0x7f3a1c228000);
    CHECK(lib->offset_bytes == 0x2000);
    CHECK(lib->dev == makedev(0xfd, 0x01));
    CHECK(lib->inode == 1835012);
    // Shared anonymous memory is a shmem file: it has an inode.
    const auto shm = procfs::parse_maps_file_range("7f00000000-7f00100000 rw-s 00000000 00:01 4242   /dev/zero (deleted)");
    REQUIRE(shm);
    CHECK(shm->inode == 4242);
    // No file: anonymous memory, the heap, the stack, [vvar], [vdso].
    CHECK_FALSE(procfs::parse_maps_file_range("7ffd4b5f0000-7ffd4b5f2000 r-xp 00000000 00:00 0   [vdso]"));
    CHECK_FALSE(procfs::parse_maps_file_range("55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0   [heap]"));
    CHECK_FALSE(procfs::parse_maps_file_range("7f3a1c000000-7f3a1c021000 rw-p 00000000 00:00 0 "));
    CHECK_FALSE(procfs::parse_maps_file_range("7ffd4b5ec000-7ffd4b5f0000 r--p 00000000 00:00 0   [vvar]"));
    // Garbage, and a line cut short before its inode.
    CHECK_FALSE(procfs::parse_maps_file_range("not a maps line"));
    CHECK_FALSE(procfs::parse_maps_file_range("7f3a1c200000-7f3a1c228000 r--p 00002000 fd:01"));
    CHECK_FALSE(procfs::parse_maps_file_range("7f3a1c228000-7f3a1c200000 r--p 00002000 fd:01 5 /x"));  // end < start
}

TEST_CASE("file pages: runs of several processes unite page by page", "[procfs]") {
    std::vector<FilePageRun> runs{
        {1, 7, 0, 10},  // process A: pages 0-9 of file 7
        {1, 9, 0, 4},   // and file 9
        {1, 7, 5, 10},  // process B: pages 5-14 of file 7 (5-9 shared)
        {1, 7, 15, 1},  // adjacent: page 15
        {2, 7, 0, 3},   // another device's inode 7: other pages
        {1, 9, 0, 4},   // file 9 again, whole
        {1, 8, 3, 0},   // empty
    };
    CHECK(procfs::merge_file_page_runs(runs) == 16 + 4 + 3);
    CHECK(runs == std::vector<FilePageRun>{{1, 7, 0, 16}, {1, 9, 0, 4}, {2, 7, 0, 3}});
    std::vector<FilePageRun> none;
    CHECK(procfs::merge_file_page_runs(none) == 0);
}

namespace {
struct Holder {
    pid_t pid = -1;
    ~Holder() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

std::vector<FilePageRun> of_inode(const std::vector<FilePageRun>& runs, ino_t inode) {
    std::vector<FilePageRun> out;
    std::copy_if(runs.begin(), runs.end(), std::back_inserter(out),
                 [&](const FilePageRun& r) { return r.inode == inode; });
    return out;
}
}  // namespace

TEST_CASE("file pages: a live process's resident file pages, by file and page, both ways", "[procfs]") {
    const long page = ::sysconf(_SC_PAGESIZE);
    // memfd a (256 pages): pages 8-23 through one mapping, 32-35 through a
    // second; 100-107 and 200-207 through two mappings side by side in
    // memory (one run of present pages across two mappings). memfd b (2048
    // pages): every other page, 1,024 runs (more than one scan's vector).
    const int a = ::memfd_create("file_pages_a", 0);
    const int b = ::memfd_create("file_pages_b", 0);
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    REQUIRE(::ftruncate(a, 256 * page) == 0);
    REQUIRE(::ftruncate(b, 2048 * page) == 0);
    struct stat st_a {}, st_b {};
    REQUIRE(::fstat(a, &st_a) == 0);
    REQUIRE(::fstat(b, &st_b) == 0);
    int ready[2], hold[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(hold) == 0);
    Holder holder;
    holder.pid = ::fork();
    REQUIRE(holder.pid >= 0);
    if (holder.pid == 0) {
        constexpr int prot = PROT_READ | PROT_WRITE;
        auto* m1 = static_cast<char*>(::mmap(nullptr, 64 * page, prot, MAP_SHARED, a, 0));
        auto* m2 = static_cast<char*>(::mmap(nullptr, 8 * page, prot, MAP_SHARED, a, 32 * page));
        auto* m3 = static_cast<char*>(::mmap(nullptr, 16 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        auto* mb = static_cast<char*>(::mmap(nullptr, 2048 * page, prot, MAP_SHARED, b, 0));
        if (m1 == MAP_FAILED || m2 == MAP_FAILED || m3 == MAP_FAILED || mb == MAP_FAILED) ::_exit(1);
        if (::mmap(m3, 8 * page, prot, MAP_SHARED | MAP_FIXED, a, 100 * page) == MAP_FAILED ||
            ::mmap(m3 + 8 * page, 8 * page, prot, MAP_SHARED | MAP_FIXED, a, 200 * page) == MAP_FAILED)
            ::_exit(1);
        for (long i = 8; i < 24; ++i) m1[i * page] = 1;
        for (long i = 0; i < 4; ++i) m2[i * page] = 1;
        for (long i = 0; i < 16; ++i) m3[i * page] = 1;
        for (long i = 0; i < 2048; i += 2) mb[i * page] = 1;
        char c = 'r';
        if (::write(ready[1], &c, 1) != 1) ::_exit(1);
        (void)::read(hold[0], &c, 1);
        ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);  // mapped and touched; it does nothing more
    std::vector<FilePageRun> by_text;
    REQUIRE(procfs::read_file_pages(holder.pid, by_text, procfs::FilePagesMethod::Text));
    procfs::merge_file_page_runs(by_text);
    const auto runs_a = of_inode(by_text, st_a.st_ino);
    REQUIRE(runs_a.size() == 4);
    const uint64_t dev = runs_a[0].dev;  // the memfd's: shmem's device
    CHECK(runs_a == std::vector<FilePageRun>{{dev, st_a.st_ino, 8, 16},
                                             {dev, st_a.st_ino, 32, 4},
                                             {dev, st_a.st_ino, 100, 8},
                                             {dev, st_a.st_ino, 200, 8}});
    const auto runs_b = of_inode(by_text, st_b.st_ino);
    CHECK(runs_b.size() == 1024);
    CHECK(std::all_of(runs_b.begin(), runs_b.end(),
                      [](const FilePageRun& r) { return r.pages == 1 && r.first_page % 2 == 0; }));
    CHECK(by_text.size() > 1024 + 4);  // and the test binary's and its libraries' pages
    std::vector<FilePageRun> by_ioctl;
    if (procfs::read_file_pages(holder.pid, by_ioctl, procfs::FilePagesMethod::Ioctl)) {
        procfs::merge_file_page_runs(by_ioctl);
        CHECK(by_ioctl == by_text);  // every run of every file, the same both ways
    } else {
        WARN("PAGEMAP_SCAN/PROCMAP_QUERY not available (Linux < 6.11): only the text method checked");
    }
    std::vector<FilePageRun> auto_chosen;
    CHECK(procfs::read_file_pages(holder.pid, auto_chosen));
    CHECK_FALSE(procfs::read_file_pages(999999999, auto_chosen));  // no such process
    ::close(a);
    ::close(b);
}
