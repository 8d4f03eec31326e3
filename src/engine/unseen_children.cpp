#include <max_rss/engine/unseen_children.hpp>

#include <algorithm>
#include <thread>
#include <utility>

namespace max_rss {

std::optional<size_t> UnseenChildren::look(MemoryProbe& probe, ProcessTable& table) {
    const std::optional<pid_t> newest = probe.newest_pid();
    if (!newest) return std::nullopt;
    const std::optional<pid_t> last = std::exchange(last_seen_, newest);
    if (!last) return std::nullopt;
    // Those without a /proc entry at the last look, once more (a process
    // between its pid and its /proc entry shows up within microseconds).
    size_t found = 0;
    for (const pid_t pid : std::exchange(unsure_, {}))
        if (consider(pid, probe, table, false) == Seen::Child) ++found;
    if (*newest == *last) return found;
    // (last, newest], around pid_max when the pids wrapped (the kernel starts
    // again low, above a few reserved ones). Past kMostPids, the newest ones:
    // a child whose fork is still not reported was made lately.
    const pid_t pid_max = probe.pid_max();
    const bool wrapped = *newest < *last;
    if (wrapped && pid_max <= *last) return std::nullopt;
    const int64_t count = wrapped ? int64_t{pid_max} - *last - 1 + *newest : int64_t{*newest} - *last;
    int64_t left = std::min(count, kMostPids);
    // Newest first, down to the oldest looked at.
    for (pid_t pid = *newest; left > 0; --left) {
        if (consider(pid, probe, table) == Seen::Child) ++found;
        pid = pid > 1 ? pid - 1 : pid_max - 1;
    }
    return found;
}

size_t UnseenChildren::settle(MemoryProbe& probe, ProcessTable& table) {
    size_t found = 0;
    for (int attempt = 0; attempt < kSettleAttempts && !unsure_.empty(); ++attempt) {
        std::this_thread::sleep_for(kSettlePause);
        std::vector<pid_t> still;
        for (const pid_t pid : std::exchange(unsure_, {})) {
            const Seen seen = consider(pid, probe, table, false);
            if (seen == Seen::Child) ++found;
            if (seen == Seen::Absent) still.push_back(pid);
        }
        unsure_ = std::move(still);
    }
    unsure_.clear();  // gone: someone's short-lived process
    return found;
}

UnseenChildren::Seen UnseenChildren::consider(pid_t pid, MemoryProbe& probe, ProcessTable& table,
                                              bool keep_absent) {
    if (table.task(pid)) return Seen::Other;  // known (most of a tree's new pids)
    if (std::any_of(children_.begin(), children_.end(), [pid](const UnseenChild& c) { return c.pid == pid; }))
        return Seen::Other;
    const auto status = probe.status(pid);
    if (!status) {
        if (keep_absent) unsure_.push_back(pid);
        return Seen::Absent;
    }
    if (status->tgid != pid || !status->ppid || !table.live(*status->ppid)) return Seen::Other;
    children_.push_back(UnseenChild{pid, *status->ppid});
    return Seen::Child;
}

void UnseenChildren::forget_settled(MemoryProbe& probe, ProcessTable& table) {
    std::erase_if(children_, [&](const UnseenChild& child) {
        if (table.task(child.pid)) return true;
        const auto status = probe.status(child.pid);
        return !status || status->ppid != child.creator || !table.live(child.creator);
    });
}

}  // namespace max_rss
