#include <max_rss/engine/unseen_children.hpp>

#include <algorithm>
#include <utility>

namespace max_rss {

std::optional<size_t> UnseenChildren::look(MemoryProbe& probe, ProcessTable& table) {
    const std::optional<pid_t> newest = probe.newest_pid();
    if (!newest) return std::nullopt;
    const std::optional<pid_t> last = std::exchange(last_seen_, newest);
    if (!last) return std::nullopt;
    if (*newest == *last) return 0;
    // (last, newest], around pid_max when the pids wrapped (the kernel starts
    // again low, above a few reserved ones).
    const pid_t pid_max = probe.pid_max();
    const bool wrapped = *newest < *last;
    if (wrapped && pid_max <= *last) return std::nullopt;
    const int64_t count = wrapped ? int64_t{pid_max} - *last - 1 + *newest : int64_t{*newest} - *last;
    if (count > kMostPids) return std::nullopt;
    size_t found = 0;
    if (wrapped) {
        for (pid_t pid = *last + 1; pid < pid_max; ++pid) found += consider(pid, probe, table);
        for (pid_t pid = 1; pid <= *newest; ++pid) found += consider(pid, probe, table);
    } else {
        for (pid_t pid = *last + 1; pid <= *newest; ++pid) found += consider(pid, probe, table);
    }
    return found;
}

bool UnseenChildren::consider(pid_t pid, MemoryProbe& probe, ProcessTable& table) {
    if (table.task(pid)) return false;  // known (most of a tree's new pids)
    if (std::any_of(children_.begin(), children_.end(), [pid](const UnseenChild& c) { return c.pid == pid; }))
        return false;
    const auto status = probe.status(pid);  // gone, most often: someone's short-lived process
    if (!status || status->tgid != pid || !status->ppid || !table.live(*status->ppid)) return false;
    children_.push_back(UnseenChild{pid, *status->ppid});
    return true;
}

void UnseenChildren::forget_settled(MemoryProbe& probe, ProcessTable& table) {
    std::erase_if(children_, [&](const UnseenChild& child) {
        if (table.task(child.pid)) return true;
        const auto status = probe.status(child.pid);
        return !status || status->ppid != child.creator || !table.live(child.creator);
    });
}

}  // namespace max_rss
