#include <max_rss/procfs/file_pages.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>

namespace max_rss::procfs {
namespace {

// The kernel's UAPI (include/uapi/linux/fs.h, Linux 6.7 and 6.11), spelt out
// here: Debian 12's headers are older than both calls.
struct PageRegion {
    uint64_t start, end, categories;
};
struct PmScanArg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct ProcmapQuery {
    uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
static_assert(sizeof(PmScanArg) == 96 && sizeof(ProcmapQuery) == 104);
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr unsigned long kProcmapQuery = _IOWR('f', 17, ProcmapQuery);
constexpr uint64_t kPageIsFile = 1u << 2;
constexpr uint64_t kPageIsPresent = 1u << 3;
constexpr uint64_t kQueryCoveringOrNext = 0x10;
constexpr uint64_t kQueryFileBacked = 0x20;

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPmPresent = 1ull << 63;
constexpr uint64_t kPmFileOrSharedAnon = 1ull << 61;

uint64_t page_size() {
    static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }

private:
    int fd_;
};

Fd open_proc(pid_t tid, const char* name) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(tid), name);
    return Fd(::open(path, O_RDONLY | O_CLOEXEC));
}

// Adds pages [start, end) of the mapping to runs, extending the last run
// where it continues it.
void add_run(std::vector<FilePageRun>& runs, const MapsLine& vma, uint64_t start, uint64_t end) {
    const uint64_t page = page_size();
    const FilePageRun run{vma.dev, vma.inode, vma.offset_bytes / page + (start - vma.start) / page,
                          (end - start) / page};
    if (!runs.empty()) {
        FilePageRun& last = runs.back();
        if (last.dev == run.dev && last.inode == run.inode && last.first_page + last.pages == run.first_page) {
            last.pages += run.pages;
            return;
        }
    }
    runs.push_back(run);
}

enum class Scan { Done, Failed, Unsupported };

// The mappings that have a file (shmem included), in address order, then
// PAGEMAP_SCAN over each stretch of adjacent ones: anonymous memory, however
// large, is never walked.
Scan read_by_ioctl(pid_t tid, std::vector<FilePageRun>& runs) {
    const Fd pagemap = open_proc(tid, "pagemap");
    const Fd maps = open_proc(tid, "maps");
    if (!pagemap || !maps) return Scan::Failed;
    thread_local std::vector<MapsLine> vmas;
    vmas.clear();
    for (uint64_t addr = 0;;) {
        ProcmapQuery q{};
        q.size = sizeof q;
        q.query_flags = kQueryCoveringOrNext | kQueryFileBacked;
        q.query_addr = addr;
        if (::ioctl(maps.get(), kProcmapQuery, &q) != 0) {
            if (errno == ENOENT) break;  // no mapping with a file from addr on
            if (errno == EINTR) continue;
            return errno == ENOTTY || errno == EINVAL ? Scan::Unsupported : Scan::Failed;
        }
        addr = q.vma_end;
        // hugetlbfs pages are not resident memory as statm and VmRSS count it.
        if (q.vma_page_size != page_size()) continue;
        vmas.push_back(MapsLine{q.vma_start, q.vma_end, q.vma_offset, makedev(q.dev_major, q.dev_minor), q.inode, {}});
    }
    std::array<PageRegion, 256> regions{};
    for (size_t first = 0; first < vmas.size();) {
        size_t last = first;  // the stretch [first, last] of adjacent mappings
        while (last + 1 < vmas.size() && vmas[last + 1].start == vmas[last].end) ++last;
        PmScanArg arg{};
        arg.size = sizeof arg;
        arg.start = vmas[first].start;
        arg.end = vmas[last].end;
        arg.vec = reinterpret_cast<uint64_t>(regions.data());
        arg.vec_len = regions.size();
        arg.category_mask = kPageIsFile | kPageIsPresent;
        arg.return_mask = kPageIsFile | kPageIsPresent;
        size_t vma = first;
        for (;;) {
            const long n = ::ioctl(pagemap.get(), kPagemapScan, &arg);
            if (n < 0) {
                if (errno == EINTR) continue;
                return errno == ENOTTY || errno == EINVAL || errno == EFAULT ? Scan::Unsupported : Scan::Failed;
            }
            for (long i = 0; i < n; ++i) {
                // A region may run across adjacent mappings: split it.
                uint64_t at = regions[static_cast<size_t>(i)].start;
                const uint64_t end = regions[static_cast<size_t>(i)].end;
                while (at < end) {
                    while (vma < last && at >= vmas[vma].end) ++vma;
                    const uint64_t upto = std::min(end, vmas[vma].end);
                    if (upto <= at) return Scan::Failed;  // outside the mappings read: they changed
                    add_run(runs, vmas[vma], at, upto);
                    at = upto;
                }
            }
            // A full vector: the walk stopped at walk_end, go on from there.
            if (static_cast<size_t>(n) < regions.size() || arg.walk_end >= arg.end) break;
            arg.start = arg.walk_end;
        }
        first = last + 1;
    }
    return Scan::Done;
}

bool read_by_text(pid_t tid, std::vector<FilePageRun>& runs) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(tid));
    const std::optional<std::string> text = read_file(path);
    const Fd pagemap = open_proc(tid, "pagemap");
    if (!text || !pagemap) return false;
    const uint64_t page = page_size();
    std::array<uint64_t, 4096> entries{};
    std::string_view rest = *text;
    while (!rest.empty()) {
        const size_t newline = rest.find('\n');
        if (newline == std::string_view::npos) break;
        const std::optional<MapsLine> vma = parse_maps_file_range(rest.substr(0, newline));
        rest.remove_prefix(newline + 1);
        if (!vma) continue;
        uint64_t run_start = 0;
        bool in_run = false;
        for (uint64_t at = vma->start; at < vma->end;) {
            const size_t want = static_cast<size_t>(std::min<uint64_t>((vma->end - at) / page, entries.size()));
            const ssize_t got = ::pread(pagemap.get(), entries.data(), want * sizeof(uint64_t),
                                        static_cast<off_t>(at / page * sizeof(uint64_t)));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;
            const size_t count = static_cast<size_t>(got) / sizeof(uint64_t);
            for (size_t i = 0; i < count; ++i, at += page) {
                const bool file_page = (entries[i] & kPmPresent) && (entries[i] & kPmFileOrSharedAnon);
                if (file_page && !in_run) run_start = at;
                if (!file_page && in_run) add_run(runs, *vma, run_start, at);
                in_run = file_page;
            }
        }
        if (in_run) add_run(runs, *vma, run_start, vma->end);
    }
    return true;
}

// 0: not chosen yet; 1: ioctls; 2: text.
std::atomic<int> chosen_method{0};

}  // namespace

std::optional<MapsLine> parse_maps_file_range(std::string_view line) {
    auto vma = parse_maps_line(line);
    if (!vma || vma->inode == 0) return std::nullopt;  // no file (see the header)
    return vma;
}

uint64_t merge_file_page_runs(std::vector<FilePageRun>& runs) {
    std::sort(runs.begin(), runs.end(), [](const FilePageRun& a, const FilePageRun& b) {
        if (a.dev != b.dev) return a.dev < b.dev;
        if (a.inode != b.inode) return a.inode < b.inode;
        return a.first_page < b.first_page;
    });
    size_t kept = 0;
    uint64_t pages = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
        const FilePageRun& r = runs[i];
        if (r.pages == 0) continue;
        if (kept > 0) {
            FilePageRun& last = runs[kept - 1];
            const uint64_t last_end = last.first_page + last.pages;
            if (last.dev == r.dev && last.inode == r.inode && r.first_page <= last_end) {
                const uint64_t end = std::max(last_end, r.first_page + r.pages);
                pages += end - last_end;
                last.pages = end - last.first_page;
                continue;
            }
        }
        runs[kept++] = r;
        pages += r.pages;
    }
    runs.resize(kept);
    return pages;
}

bool read_file_pages(pid_t tid, std::vector<FilePageRun>& runs, FilePagesMethod method) {
    if (method == FilePagesMethod::Text) return read_by_text(tid, runs);
    return read_by_ioctl(tid, runs) == Scan::Done;
}

bool read_file_pages(pid_t tid, std::vector<FilePageRun>& runs) {
    if (chosen_method.load(std::memory_order_relaxed) != 2) {
        const size_t before = runs.size();
        switch (read_by_ioctl(tid, runs)) {
            case Scan::Done:
                chosen_method.store(1, std::memory_order_relaxed);
                return true;
            case Scan::Failed:
                return false;
            case Scan::Unsupported:
                if (chosen_method.load(std::memory_order_relaxed) == 1) return false;
                runs.resize(before);
                chosen_method.store(2, std::memory_order_relaxed);
                break;
        }
    }
    return read_by_text(tid, runs);
}

}  // namespace max_rss::procfs
