// Which file-backed and shmem pages a process has resident, named by file and
// page (never by address), so that several processes' sets can be united: a
// page of libc or of a MAP_SHARED buffer is one page however many processes
// map it, and two processes that touch different parts of one file hold
// both parts.
//
// Read without privileges: the present and file bits of /proc/<pid>/pagemap
// (PAGEMAP_SCAN, Linux 6.7, returns them as ranges) and the file and offset of
// each mapping (PROCMAP_QUERY, Linux 6.11); on older kernels from the text of
// /proc/<pid>/maps and 8 bytes of pagemap a page. A page counts when it is
// present and not anonymous in a mapping of a file: file pages and shmem
// (memfd, MAP_SHARED|MAP_ANONYMOUS, SysV, tmpfs). Copy-on-write copies of a
// private file mapping are anonymous, counted with the anonymous pages. Left
// out: the vDSO (two pages, the same in every process, that RssFile counts),
// pages of device mappings with no struct page, and hugetlbfs mappings (not
// in RSS; the text method, on kernels before 6.11, cannot tell them apart).
// A file is named by the device and inode /proc/<pid>/maps shows: on btrfs,
// subvolumes share one device and reuse inode numbers, so two files of
// different subvolumes with the same inode number share a name here.
#pragma once

#include <max_rss/procfs/procfs.hpp>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace max_rss::procfs {

// Pages [first_page, first_page + pages) of one file (dev, inode), resident
// and mapped by the process.
struct FilePageRun {
    uint64_t dev = 0;
    uint64_t inode = 0;
    uint64_t first_page = 0;
    uint64_t pages = 0;
    bool operator==(const FilePageRun&) const = default;
};

// A /proc/<pid>/maps line's mapping (parse_maps_line), or nullopt: the line
// does not parse, or the mapping has no file (inode 0: anonymous memory,
// [heap], [stack], [vvar], [vdso]).
std::optional<MapsLine> parse_maps_file_range(std::string_view line);

// Sorts runs by file and page and merges overlapping and adjacent ones;
// returns how many distinct pages they hold.
uint64_t merge_file_page_runs(std::vector<FilePageRun>& runs);

enum class FilePagesMethod : uint8_t {
    Ioctl,  // PAGEMAP_SCAN + PROCMAP_QUERY
    Text,   // /proc/<pid>/maps and pagemap entries
};

// The resident file and shmem pages of tid's process, appended to runs (not
// merged). False when they cannot be read (the process is gone, or not ours);
// runs may then hold part of them. The method is chosen once: Ioctl where the
// kernel has both calls, else Text.
bool read_file_pages(pid_t tid, std::vector<FilePageRun>& runs);
// The same by one method (tests compare them); false also when the kernel
// lacks it.
bool read_file_pages(pid_t tid, std::vector<FilePageRun>& runs, FilePagesMethod method);

}  // namespace max_rss::procfs
