// Pure parsers for /proc text, plus one small file reader. No ptrace, no logging.
// Parsers convert kB to bytes once, here, so nothing else handles kB.
#pragma once

#include <max_rss/model.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss::procfs {

// The fields of /proc/<tid>/status that max_rss uses. Absent lines stay nullopt:
// a task past exit_mm has no Vm lines at all, and that is "unknown", not 0.
struct Status {
    std::optional<pid_t> tgid;
    std::optional<pid_t> ppid;
    std::optional<uint32_t> threads;
    std::optional<uint64_t> hwm_bytes;        // VmHWM
    std::optional<uint64_t> rss_bytes;        // VmRSS
    std::optional<uint64_t> rss_anon_bytes;   // RssAnon
    std::optional<uint64_t> rss_file_bytes;   // RssFile
    std::optional<uint64_t> rss_shmem_bytes;  // RssShmem
    std::optional<uint64_t> swap_bytes;       // VmSwap
    // Signals pending for the thread (SigPnd) or the whole process (ShdPnd),
    // OR-ed: bit N-1 is signal N.
    std::optional<uint64_t> pending_signals;
    std::optional<uint32_t> seccomp_filters;  // Seccomp_filters: the task's stacked filters (Linux 5.9)
};

// The totals of /proc/<tid>/smaps_rollup, in bytes.
struct SmapsRollup {
    std::optional<uint64_t> rss_bytes;
    std::optional<uint64_t> pss_bytes;
    std::optional<uint64_t> pss_anon_bytes;
    std::optional<uint64_t> pss_file_bytes;
    std::optional<uint64_t> pss_shmem_bytes;
    std::optional<uint64_t> shared_clean_bytes;
    std::optional<uint64_t> shared_dirty_bytes;
    std::optional<uint64_t> private_clean_bytes;
    std::optional<uint64_t> private_dirty_bytes;
    std::optional<uint64_t> anonymous_bytes;
    std::optional<uint64_t> swap_bytes;
    std::optional<uint64_t> swap_pss_bytes;
};

// Parses status text. Malformed lines are skipped (a field with a garbled value
// stays nullopt rather than becoming a wrong number).
Status parse_status(std::string_view text);

// Parses smaps_rollup text; nullopt when it has no totals line at all.
std::optional<SmapsRollup> parse_smaps_rollup(std::string_view text);

// The two fields of /proc/<pid>/statm that matter, in bytes.
struct Statm {
    uint64_t resident_bytes = 0;
    uint64_t shared_bytes = 0;  // file-backed + shmem resident (RssFile + RssShmem)
};

// Parses /proc/<pid>/statm ("size resident shared ..." in pages).
std::optional<Statm> parse_statm(std::string_view text, uint64_t page_size_bytes);

// The last field of /proc/loadavg ("0.20 0.18 0.12 1/80 11206\n"): the pid
// most recently handed out in the reader's pid namespace.
std::optional<pid_t> parse_newest_pid(std::string_view loadavg);

// An address range of /proc/<pid>/maps, [start, end).
struct MapsRange {
    uint64_t start = 0;
    uint64_t end = 0;
};

// One line of /proc/<pid>/maps: "start-end perms offset major:minor inode   path".
struct MapsLine {
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t offset_bytes = 0;
    uint64_t dev = 0;       // makedev(major, minor)
    uint64_t inode = 0;     // 0: no file (anonymous memory, [heap], [stack], [vvar], [vdso])
    std::string_view path;  // "" for anonymous memory; a file's path, "[heap]", "anon_inode:..."
};

// A maps line's fields, or nullopt: the line does not parse (or ends before
// it starts).
std::optional<MapsLine> parse_maps_line(std::string_view line);

// The ranges of /proc/<pid>/maps whose path (the last field) is exactly
// `path`; lines that do not parse, or were cut short, are skipped.
std::vector<MapsRange> parse_maps_ranges(std::string_view text, std::string_view path);

// Splits /proc/<pid>/cmdline (NUL-separated) into arguments.
std::vector<std::string> parse_cmdline(std::string_view text);

// Parses "<number> kB" (the value part of a status/smaps line) into bytes.
std::optional<uint64_t> parse_kb_value(std::string_view value);

// The state letter of /proc/<tid>/stat ('R', 'S', 'D', 'Z', 'X', ...): the
// first field after the command, which is in parentheses and may itself hold
// ") " (the last ')' ends it). nullopt for text that is not a stat line.
std::optional<char> parse_stat_state(std::string_view text);
// Where an exec laid out a process's image: its code's start and end (stat
// fields 26 and 27). Each exec sets them anew (at a random place, for a PIE
// program with ASLR; elsewhere, the end differs between programs), and
// nothing else moves them but prctl(PR_SET_MM), which needs
// CAP_SYS_RESOURCE: unlike the name (comm) or argv, which a program may
// rewrite, a change says the process exec'd. Not known (known() false): 0 0
// for a zombie, whose address space is gone, or for a new image whose exec
// has not set them yet; 1 1 for a process the reader may not ptrace-read.
// (The stack's start, field 28, is set in two steps of an exec: read between
// them, it would look like a second exec.)
struct ImageLayout {
    uint64_t start_code = 0;
    uint64_t end_code = 0;
    [[nodiscard]] bool known() const { return start_code > 1 && end_code > start_code; }
    bool operator==(const ImageLayout&) const = default;
};
// A process's parent (field 4 of /proc/<pid>/stat) and start time (field
// 22, clock ticks after boot): with the pid, the start time names one
// process for good, where a pid alone may have been reused; and where its
// image lies.
struct StatIdentity {
    pid_t ppid = 0;
    uint64_t start_ticks = 0;
    ImageLayout layout;  // not known where the line stops before field 27
};
// nullopt for text that is not a stat line.
std::optional<StatIdentity> parse_stat_identity(std::string_view text);

// Copies the status and smaps figures into one breakdown (either may be absent).
MemoryBreakdown make_breakdown(const std::optional<Status>& status,
                               const std::optional<SmapsRollup>& smaps);

// Reads a whole /proc file with one open and as few reads as needed. nullopt
// when it cannot be opened or read (ESRCH, ENOENT, EACCES: the task is gone or
// not ours); errno is left set for the caller to classify.
std::optional<std::string> read_file(const char* path);

// Convenience: read and parse /proc/<tid>/<name>.
std::optional<Status> read_status(pid_t tid);
std::optional<SmapsRollup> read_smaps_rollup(pid_t tid);
std::optional<Statm> read_statm(pid_t tid);
std::vector<std::string> read_cmdline(pid_t pid);
std::string read_exe(pid_t pid);
// The newest pid (/proc/loadavg), read again and again through one open file
// (~1 µs a read, against ~6 µs with an open each time: a fork-heavy tree asks
// at every fork's end).
class NewestPidReader {
public:
    NewestPidReader() = default;
    NewestPidReader(const NewestPidReader&) = delete;
    NewestPidReader& operator=(const NewestPidReader&) = delete;
    ~NewestPidReader();
    std::optional<pid_t> read();

private:
    int fd_ = -1;
    bool failed_ = false;
};
// The largest pid there can be (/proc/sys/kernel/pid_max).
std::optional<pid_t> read_pid_max();
// The ids of thread group tgid's tasks (/proc/<tgid>/task); nullopt, with
// errno set, when they cannot be listed (ENOENT: the group is gone).
std::optional<std::vector<pid_t>> read_task_ids(pid_t tgid);
// Task tid's state letter (/proc/<tid>/stat); nullopt, with errno set when
// the file could not be read (ENOENT, ESRCH: the task is gone).
std::optional<char> read_stat_state(pid_t tid);
// Process pid's parent and start time (/proc/<pid>/stat); nullopt, with
// errno set when the file could not be read (ENOENT, ESRCH: it is gone).
std::optional<StatIdentity> read_stat_identity(pid_t pid);
// Whether thread group tgid is done exiting: gone, or every task of it a
// zombie (Z, X), so that each has run all of its exit, its address space's
// teardown included. False while any task of it is anything else (or its
// tasks cannot be read).
bool exit_finished(pid_t tgid);

}  // namespace max_rss::procfs
