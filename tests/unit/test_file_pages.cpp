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
// A child that maps 64 pages of a memfd and touches pages 8-23, and maps
// the same memfd again at offset 32 pages and touches its first 4 (pages
// 32-35), then waits (stopped by the read of a pipe) until killed.
struct Holder {
    pid_t pid = -1;
    ino_t memfd_inode = 0;
    ~Holder() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};
}  // namespace

TEST_CASE("file pages: a live process's resident file pages, by file and page, both ways", "[procfs]") {
    const long page = ::sysconf(_SC_PAGESIZE);
    const int fd = ::memfd_create("file_pages_test", 0);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 64 * page) == 0);
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    int ready[2], hold[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(hold) == 0);
    Holder holder;
    holder.memfd_inode = st.st_ino;
    holder.pid = ::fork();
    REQUIRE(holder.pid >= 0);
    if (holder.pid == 0) {
        auto* a = static_cast<char*>(::mmap(nullptr, 64 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        auto* b = static_cast<char*>(::mmap(nullptr, 8 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 32 * page));
        if (a == MAP_FAILED || b == MAP_FAILED) ::_exit(1);
        for (long i = 8; i < 24; ++i) a[i * page] = 1;
        for (long i = 0; i < 4; ++i) b[i * page] = 1;
        char c = 'r';
        if (::write(ready[1], &c, 1) != 1) ::_exit(1);
        (void)::read(hold[0], &c, 1);
        ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);  // mapped and touched
    for (const auto method : {procfs::FilePagesMethod::Ioctl, procfs::FilePagesMethod::Text}) {
        std::vector<FilePageRun> runs;
        if (!procfs::read_file_pages(holder.pid, runs, method)) {
            // Only the ioctls may be missing (a kernel before 6.11).
            CHECK(method == procfs::FilePagesMethod::Ioctl);
            WARN("PAGEMAP_SCAN/PROCMAP_QUERY not available: only the text method checked");
            continue;
        }
        procfs::merge_file_page_runs(runs);
        std::vector<FilePageRun> memfd;
        std::copy_if(runs.begin(), runs.end(), std::back_inserter(memfd),
                     [&](const FilePageRun& r) { return r.inode == holder.memfd_inode; });
        REQUIRE(memfd.size() == 2);
        CHECK(memfd[0].first_page == 8);
        CHECK(memfd[0].pages == 16);
        CHECK(memfd[1].first_page == 32);
        CHECK(memfd[1].pages == 4);
        // And the rest are the test binary's and its libraries' pages.
        CHECK(runs.size() > 2);
    }
    std::vector<FilePageRun> auto_chosen;
    CHECK(procfs::read_file_pages(holder.pid, auto_chosen));
    CHECK_FALSE(procfs::read_file_pages(999999999, auto_chosen));  // no such process
    ::close(fd);
}
