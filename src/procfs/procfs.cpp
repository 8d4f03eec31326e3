#include <max_rss/procfs/procfs.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace max_rss::procfs {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// A 64-bit mask in hex, as SigPnd and ShdPnd print it.
std::optional<uint64_t> parse_hex_mask(std::string_view s) {
    s = trim(s);
    if (s.empty() || s.size() > 16) return std::nullopt;
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return value;
}

template <typename T>
std::optional<T> parse_unsigned(std::string_view s) {
    s = trim(s);
    // from_chars accepts a minus sign for signed types (pid_t): a pid is never negative.
    if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
    T value{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return value;
}

// Calls fn(key, value) for each complete "Key:<spaces>value" line. A last
// line without its newline was cut short by a truncated read: a number there
// could be a prefix of the real one, so it is ignored. A CR before the
// newline (CRLF text) is not part of the value.
template <typename Fn>
void for_each_field(std::string_view text, Fn&& fn) {
    while (!text.empty()) {
        size_t nl = text.find('\n');
        if (nl == std::string_view::npos) break;
        std::string_view line = text.substr(0, nl);
        text = text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) continue;
        fn(line.substr(0, colon), line.substr(colon + 1));
    }
}

std::optional<uint64_t> sum(std::optional<uint64_t> a, std::optional<uint64_t> b) {
    if (!a || !b) return std::nullopt;
    return *a + *b;
}

}  // namespace

std::optional<uint64_t> parse_kb_value(std::string_view value) {
    value = trim(value);
    if (value.size() < 3 || value.substr(value.size() - 2) != "kB") return std::nullopt;
    auto kb = parse_unsigned<uint64_t>(value.substr(0, value.size() - 2));
    if (!kb || *kb > UINT64_MAX / 1024) return std::nullopt;
    return *kb * 1024;
}

Status parse_status(std::string_view text) {
    Status s;
    for_each_field(text, [&](std::string_view key, std::string_view value) {
        if (key == "Tgid") s.tgid = parse_unsigned<pid_t>(value);
        else if (key == "PPid") s.ppid = parse_unsigned<pid_t>(value);
        else if (key == "Threads") s.threads = parse_unsigned<uint32_t>(value);
        else if (key == "Seccomp_filters") s.seccomp_filters = parse_unsigned<uint32_t>(value);
        else if (key == "VmHWM") s.hwm_bytes = parse_kb_value(value);
        else if (key == "VmRSS") s.rss_bytes = parse_kb_value(value);
        else if (key == "RssAnon") s.rss_anon_bytes = parse_kb_value(value);
        else if (key == "RssFile") s.rss_file_bytes = parse_kb_value(value);
        else if (key == "RssShmem") s.rss_shmem_bytes = parse_kb_value(value);
        else if (key == "VmSwap") s.swap_bytes = parse_kb_value(value);
        else if (key == "SigPnd" || key == "ShdPnd") {
            if (auto mask = parse_hex_mask(value)) s.pending_signals = s.pending_signals.value_or(0) | *mask;
        }
    });
    return s;
}

std::optional<SmapsRollup> parse_smaps_rollup(std::string_view text) {
    // The first line is the "[rollup]" pseudo-mapping header; a text without it
    // was truncated or is not smaps_rollup.
    if (text.find("[rollup]") == std::string_view::npos) return std::nullopt;
    SmapsRollup r;
    bool any = false;
    for_each_field(text, [&](std::string_view key, std::string_view value) {
        std::optional<uint64_t>* field = nullptr;
        if (key == "Rss") field = &r.rss_bytes;
        else if (key == "Pss") field = &r.pss_bytes;
        else if (key == "Pss_Anon") field = &r.pss_anon_bytes;
        else if (key == "Pss_File") field = &r.pss_file_bytes;
        else if (key == "Pss_Shmem") field = &r.pss_shmem_bytes;
        else if (key == "Shared_Clean") field = &r.shared_clean_bytes;
        else if (key == "Shared_Dirty") field = &r.shared_dirty_bytes;
        else if (key == "Private_Clean") field = &r.private_clean_bytes;
        else if (key == "Private_Dirty") field = &r.private_dirty_bytes;
        else if (key == "Anonymous") field = &r.anonymous_bytes;
        else if (key == "Swap") field = &r.swap_bytes;
        else if (key == "SwapPss") field = &r.swap_pss_bytes;
        if (field) {
            *field = parse_kb_value(value);
            any = any || field->has_value();
        }
    });
    if (!any) return std::nullopt;
    return r;
}

std::optional<pid_t> parse_newest_pid(std::string_view loadavg) {
    // Cut short (no newline), the number may be a prefix of the real one.
    if (loadavg.empty() || loadavg.back() != '\n') return std::nullopt;
    loadavg.remove_suffix(1);
    const size_t space = loadavg.rfind(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const auto pid = parse_unsigned<pid_t>(loadavg.substr(space + 1));
    if (!pid || *pid <= 0) return std::nullopt;
    return pid;
}

std::optional<Statm> parse_statm(std::string_view text, uint64_t page_size_bytes) {
    // "size resident shared text lib data dt\n"; without the newline the
    // text was cut short and its last number may be a prefix.
    if (text.empty() || text.back() != '\n') return std::nullopt;
    std::optional<uint64_t> fields[3];
    text = trim(text.substr(0, text.size() - 1));
    for (auto& field : fields) {
        size_t end = text.find_first_of(" \n");
        field = parse_unsigned<uint64_t>(text.substr(0, end));
        if (!field || *field > UINT64_MAX / page_size_bytes) return std::nullopt;
        if (end == std::string_view::npos) {
            text = {};
        } else {
            text = text.substr(end + 1);
        }
    }
    return Statm{*fields[1] * page_size_bytes, *fields[2] * page_size_bytes};
}

std::optional<MapsLine> parse_maps_line(std::string_view line) {
    // Hex addresses, offset and device numbers; a decimal inode; the path is
    // everything after the inode's padding.
    const auto next_field = [&line] {
        line = trim(line);
        const size_t space = line.find(' ');
        const std::string_view field = line.substr(0, space);
        line.remove_prefix(space == std::string_view::npos ? line.size() : space);
        return field;
    };
    const std::string_view range = next_field();
    next_field();  // perms
    const std::string_view offset = next_field();
    const std::string_view dev = next_field();
    const std::string_view inode = next_field();
    const size_t dash = range.find('-');
    const size_t colon = dev.find(':');
    if (dash == std::string_view::npos || colon == std::string_view::npos) return std::nullopt;
    const auto start = parse_hex_mask(range.substr(0, dash));
    const auto end = parse_hex_mask(range.substr(dash + 1));
    const auto off = parse_hex_mask(offset);
    const auto major = parse_hex_mask(dev.substr(0, colon));
    const auto minor = parse_hex_mask(dev.substr(colon + 1));
    const auto ino = parse_unsigned<uint64_t>(inode);
    if (!start || !end || !off || !major || !minor || !ino || *start >= *end) return std::nullopt;
    return MapsLine{*start, *end, *off, makedev(static_cast<unsigned>(*major), static_cast<unsigned>(*minor)), *ino,
                    trim(line)};
}

std::vector<MapsRange> parse_maps_ranges(std::string_view text, std::string_view path) {
    std::vector<MapsRange> ranges;
    if (path.empty()) return ranges;  // anonymous memory is not asked for by its (empty) path
    while (!text.empty()) {
        const size_t newline = text.find('\n');
        if (newline == std::string_view::npos) break;  // cut short
        const auto line = parse_maps_line(text.substr(0, newline));
        text.remove_prefix(newline + 1);
        if (line && line->path == path) ranges.push_back(MapsRange{line->start, line->end});
    }
    return ranges;
}

std::vector<std::string> parse_cmdline(std::string_view text) {
    // Each argument ends with a NUL: "a\0\0" is {"a", ""}, "a\0" is {"a"}.
    std::vector<std::string> args;
    while (!text.empty()) {
        size_t nul = text.find('\0');
        args.emplace_back(text.substr(0, nul));
        if (nul == std::string_view::npos) break;
        text = text.substr(nul + 1);
    }
    return args;
}

MemoryBreakdown make_breakdown(const std::optional<Status>& status,
                               const std::optional<SmapsRollup>& smaps) {
    MemoryBreakdown b;
    if (status) {
        b.hwm_bytes = status->hwm_bytes;
        b.rss_bytes = status->rss_bytes;
        b.rss_anon_bytes = status->rss_anon_bytes;
        b.rss_file_bytes = status->rss_file_bytes;
        b.rss_shmem_bytes = status->rss_shmem_bytes;
        b.swap_bytes = status->swap_bytes;
    }
    if (smaps) {
        if (!b.rss_bytes) b.rss_bytes = smaps->rss_bytes;
        if (!b.swap_bytes) b.swap_bytes = smaps->swap_bytes;
        auto s = std::make_shared<SmapsBreakdown>();
        s->pss_bytes = smaps->pss_bytes;
        s->pss_anon_bytes = smaps->pss_anon_bytes;
        s->pss_file_bytes = smaps->pss_file_bytes;
        s->pss_shmem_bytes = smaps->pss_shmem_bytes;
        s->private_bytes = sum(smaps->private_clean_bytes, smaps->private_dirty_bytes);
        s->shared_bytes = sum(smaps->shared_clean_bytes, smaps->shared_dirty_bytes);
        s->anonymous_bytes = smaps->anonymous_bytes;
        s->swap_pss_bytes = smaps->swap_pss_bytes;
        b.smaps = std::move(s);
    }
    return b;
}

std::optional<std::string> read_file(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            ::close(fd);
            errno = saved;
            return std::nullopt;
        }
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

namespace {
std::optional<std::string> read_proc(pid_t pid, const char* name) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), name);
    return read_file(path);
}
}  // namespace

std::optional<Status> read_status(pid_t tid) {
    auto text = read_proc(tid, "status");
    if (!text) return std::nullopt;
    return parse_status(*text);
}

std::optional<SmapsRollup> read_smaps_rollup(pid_t tid) {
    auto text = read_proc(tid, "smaps_rollup");
    if (!text) return std::nullopt;
    return parse_smaps_rollup(*text);
}

std::optional<Statm> read_statm(pid_t tid) {
    static const uint64_t page_size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    auto text = read_proc(tid, "statm");
    if (!text) return std::nullopt;
    return parse_statm(*text, page_size);
}

NewestPidReader::~NewestPidReader() {
    if (fd_ >= 0) ::close(fd_);
}

std::optional<pid_t> NewestPidReader::read() {
    if (fd_ < 0 && !failed_) {
        fd_ = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        failed_ = fd_ < 0;
    }
    if (fd_ < 0) return std::nullopt;
    char buf[128];
    ssize_t n;
    while ((n = ::pread(fd_, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return std::nullopt;
    return parse_newest_pid(std::string_view(buf, static_cast<size_t>(n)));
}

std::optional<pid_t> read_pid_max() {
    const auto text = read_file("/proc/sys/kernel/pid_max");
    if (!text) return std::nullopt;
    std::string_view value = *text;
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    const auto pid_max = parse_unsigned<pid_t>(value);
    if (!pid_max || *pid_max <= 0) return std::nullopt;
    return pid_max;
}

std::vector<std::string> read_cmdline(pid_t pid) {
    auto text = read_proc(pid, "cmdline");
    if (!text) return {};
    return parse_cmdline(*text);
}

std::optional<char> parse_stat_state(std::string_view text) {
    const size_t open = text.find(" (");
    const size_t close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    // ") S ...": the state is one letter between two spaces.
    if (text.size() < close + 4 || text[close + 1] != ' ' || text[close + 3] != ' ') return std::nullopt;
    const char state = text[close + 2];
    if (state < 'A' || state > 'z') return std::nullopt;
    return state;
}

std::optional<StatIdentity> parse_stat_identity(std::string_view text) {
    if (!parse_stat_state(text)) return std::nullopt;
    // After ") " come the fields from 3 (the state) on, one space apart.
    std::string_view rest = text.substr(text.rfind(')') + 2);
    auto number_at = [&rest](int field) -> std::optional<uint64_t> {
        std::string_view from = rest;
        for (int i = 3; i < field; ++i) {
            const size_t space = from.find(' ');
            if (space == std::string_view::npos) return std::nullopt;
            from.remove_prefix(space + 1);
        }
        uint64_t value = 0;
        const auto [end, ec] = std::from_chars(from.data(), from.data() + from.size(), value);
        if (ec != std::errc() || end == from.data() || (end != from.data() + from.size() && *end != ' ' && *end != '\n'))
            return std::nullopt;
        return value;
    };
    const auto ppid = number_at(4);
    const auto start_ticks = number_at(22);
    if (!ppid || !start_ticks) return std::nullopt;
    StatIdentity identity{static_cast<pid_t>(*ppid), *start_ticks, {}};
    const auto start_code = number_at(26), end_code = number_at(27);
    if (start_code && end_code) identity.layout = {*start_code, *end_code};
    return identity;
}

std::optional<std::vector<pid_t>> read_task_ids(pid_t tgid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(tgid));
    DIR* tasks = ::opendir(path);
    if (!tasks) return std::nullopt;
    std::vector<pid_t> ids;
    while (const dirent* entry = ::readdir(tasks))
        if (entry->d_name[0] != '.') ids.push_back(static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10)));
    ::closedir(tasks);
    return ids;
}

// /proc/<pid>/stat through parse; errno EINVAL when it does not parse.
template <typename Parse>
auto read_stat(pid_t pid, Parse parse) -> decltype(parse(std::string_view{})) {
    const auto text = read_proc(pid, "stat");
    if (!text) return std::nullopt;
    const auto parsed = parse(*text);
    if (!parsed) errno = EINVAL;
    return parsed;
}

std::optional<char> read_stat_state(pid_t tid) { return read_stat(tid, parse_stat_state); }

std::optional<StatIdentity> read_stat_identity(pid_t pid) { return read_stat(pid, parse_stat_identity); }

bool exit_finished(pid_t tgid) {
    const auto tids = read_task_ids(tgid);
    if (!tids) return errno == ENOENT || errno == ESRCH;
    for (const pid_t tid : *tids) {
        const auto state = read_stat_state(tid);
        if (!state && (errno == ENOENT || errno == ESRCH)) continue;  // released meanwhile
        if (!state || (*state != 'Z' && *state != 'X')) return false;
    }
    return true;
}

std::string read_exe(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/exe", static_cast<int>(pid));
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path, buf, sizeof buf - 1);
    if (n < 0) return {};
    return std::string(buf, static_cast<size_t>(n));
}

}  // namespace max_rss::procfs
