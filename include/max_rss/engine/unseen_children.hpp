// Children of the tree that exist but that the engine has not been told of:
// made by a fork whose event the backend has not handled yet (the tracer was
// busy measuring), or made while a snapshot read the tree.
//
// Such a child maps its creator's pages copy-on-write, so smaps_rollup's
// Pss_Anon divides those pages among one more process than a snapshot reads:
// a fork family summed without it reads low (150 MiB read as 139-145 MiB in
// 6 runs of 30, labelled exact). They are found among the pids handed out
// since the last look (/proc/loadavg's newest pid): a pid the table does not
// know is such a child if it is a process whose parent is a live process of
// the tree.
#pragma once

#include <max_rss/engine/probe.hpp>
#include <max_rss/engine/process_table.hpp>

#include <sys/types.h>

#include <optional>
#include <vector>

namespace max_rss {

struct UnseenChild {
    pid_t pid = 0;
    pid_t creator = 0;  // its parent, a live process of the tree
};

class UnseenChildren {
public:
    // More pids than this since the last look (a pid_max of millions that
    // wrapped): not looked at, the look cannot tell.
    static constexpr int64_t kMostPids = 65536;

    // Looks at the pids handed out since the last look (the first look only
    // notes where they are). Returns how many unseen children it found among
    // them; nullopt when it cannot tell (no pid counter, too many pids).
    std::optional<size_t> look(MemoryProbe& probe, ProcessTable& table);
    // Drops the children the table knows now, and those gone.
    void forget_settled(MemoryProbe& probe, ProcessTable& table);
    [[nodiscard]] const std::vector<UnseenChild>& children() const { return children_; }

private:
    bool consider(pid_t pid, MemoryProbe& probe, ProcessTable& table);

    std::optional<pid_t> last_seen_;
    std::vector<UnseenChild> children_;
};

}  // namespace max_rss
