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

#include <chrono>
#include <optional>
#include <vector>

namespace max_rss {

struct UnseenChild {
    pid_t pid = 0;
    pid_t creator = 0;  // its parent, a live process of the tree
};

class UnseenChildren {
public:
    // At most this many of the newest pids are looked at, whatever came
    // before (a pid_max of millions): a child whose fork is still not
    // reported was made lately.
    static constexpr int64_t kMostPids = 65536;
    // How long settle() gives a pid to show in /proc.
    static constexpr int kSettleAttempts = 3;
    static constexpr std::chrono::microseconds kSettlePause{50};

    // Looks at the pids handed out since the last look (the first look only
    // notes where they are), and once more at those that had no /proc entry
    // at the last one. Returns how many unseen children it found; nullopt
    // when it cannot tell (no pid counter).
    std::optional<size_t> look(MemoryProbe& probe, ProcessTable& table);
    // A pid has no /proc entry from the moment it is handed out until its
    // process is in the pid table: a child in the middle of fork (its pages
    // already mapped), or a process already gone. Looks at such pids a few
    // more times, a short pause apart, then takes them for gone. Returns how
    // many unseen children showed.
    size_t settle(MemoryProbe& probe, ProcessTable& table);
    // Drops the children the table knows now, and those gone.
    void forget_settled(MemoryProbe& probe, ProcessTable& table);
    [[nodiscard]] const std::vector<UnseenChild>& children() const { return children_; }
    [[nodiscard]] bool unsure() const { return !unsure_.empty(); }

private:
    enum class Seen : uint8_t { Child, Other, Absent };
    Seen consider(pid_t pid, MemoryProbe& probe, ProcessTable& table, bool keep_absent = true);

    std::optional<pid_t> last_seen_;
    std::vector<UnseenChild> children_;
    std::vector<pid_t> unsure_;  // no /proc entry at the last look
};

}  // namespace max_rss
