// Children of the tree the engine has not been told of, found among the pids
// handed out since the last look (a fake /proc: no kernel involved).
#include <max_rss/engine/unseen_children.hpp>

#include <catch2/catch.hpp>

#include <deque>
#include <map>

using namespace max_rss;

namespace {

class FakePids final : public MemoryProbe {
public:
    std::optional<pid_t> newest;
    pid_t max = 32768;
    std::map<pid_t, procfs::Status> statuses;
    int status_reads = 0;

    // A task: a process (tgid == pid) or a thread of tgid, child of ppid.
    void add(pid_t pid, pid_t ppid, pid_t tgid = 0) {
        procfs::Status s;
        s.tgid = tgid ? tgid : pid;
        s.ppid = ppid;
        statuses[pid] = s;
    }
    std::optional<procfs::Status> status(pid_t tid) override {
        ++status_reads;
        auto it = statuses.find(tid);
        if (it == statuses.end()) return std::nullopt;
        return it->second;
    }
    std::optional<procfs::Statm> statm(pid_t) override { return std::nullopt; }
    std::optional<procfs::SmapsRollup> smaps_rollup(pid_t) override { return std::nullopt; }
    Program program(pid_t) override { return {}; }
    std::optional<pid_t> newest_pid() override { return newest; }
    pid_t pid_max() override { return max; }
};

// A table whose one live process is 100.
struct Tree {
    std::deque<Process> processes;
    ProcessTable table{processes};
    Tree() {
        Process root;
        root.pid = 100;
        const uint32_t index = table.add_process(root, ProcessTable::kNoParent, SampledProcess{});
        table.add_task(100, index, false);
    }
};

}  // namespace

TEST_CASE("unseen children: the first look notes where pids are; later ones find the tree's new children",
          "[unseen]") {
    FakePids probe;
    Tree tree;
    UnseenChildren unseen;
    probe.newest = 100;
    CHECK_FALSE(unseen.look(probe, tree.table));  // nothing to compare with yet
    probe.add(102, 100, 100);  // a thread of 100
    probe.add(103, 100);       // a child of 100 the table does not know
    probe.add(104, 1);         // someone else's
    // 101: gone (a short-lived process of someone's)
    probe.newest = 104;
    CHECK(unseen.look(probe, tree.table) == size_t{1});
    REQUIRE(unseen.children().size() == 1);
    CHECK(unseen.children()[0].pid == 103);
    CHECK(unseen.children()[0].creator == 100);
    // Nothing new: only 101 (no /proc entry) is read once more, then taken for gone.
    int reads = probe.status_reads;
    CHECK(unseen.look(probe, tree.table) == size_t{0});
    CHECK(probe.status_reads == reads + 1);
    reads = probe.status_reads;
    CHECK(unseen.look(probe, tree.table) == size_t{0});
    CHECK(probe.status_reads == reads);
    // Told of it: no longer unseen.
    Process child;
    child.pid = 103;
    const uint32_t index = tree.table.add_process(child, 0, SampledProcess{});
    tree.table.add_task(103, index, true);
    unseen.forget_settled(probe, tree.table);
    CHECK(unseen.children().empty());
}

TEST_CASE("unseen children: a child that is gone, or was reparented out of the tree, is forgotten", "[unseen]") {
    FakePids probe;
    Tree tree;
    UnseenChildren unseen;
    probe.newest = 100;
    unseen.look(probe, tree.table);
    probe.add(101, 100);
    probe.add(102, 100);
    probe.newest = 102;
    CHECK(unseen.look(probe, tree.table) == size_t{2});
    probe.statuses.erase(101);
    probe.add(102, 1);
    unseen.forget_settled(probe, tree.table);
    CHECK(unseen.children().empty());
}

TEST_CASE("unseen children: pids that wrapped around pid_max are all looked at", "[unseen]") {
    FakePids probe;
    Tree tree;
    UnseenChildren unseen;
    probe.newest = 32760;
    unseen.look(probe, tree.table);
    probe.add(32765, 100);
    probe.add(301, 100);
    probe.newest = 302;
    CHECK(unseen.look(probe, tree.table) == size_t{2});
}

TEST_CASE("unseen children: without a pid counter a look cannot tell; after very many pids, the newest count",
          "[unseen]") {
    FakePids probe;
    Tree tree;
    UnseenChildren unseen;
    CHECK_FALSE(unseen.look(probe, tree.table));
    CHECK_FALSE(unseen.look(probe, tree.table));
    probe.max = 4194304;
    probe.newest = 10;
    unseen.look(probe, tree.table);
    probe.newest = 10 + UnseenChildren::kMostPids + 100;
    probe.add(20, 100);                // too old to be looked at
    probe.add(*probe.newest - 5, 100);  // lately made
    CHECK(unseen.look(probe, tree.table) == size_t{1});
    CHECK(probe.status_reads == UnseenChildren::kMostPids);
}

TEST_CASE("unseen children: a pid with no /proc entry yet is looked at again", "[unseen]") {
    // Between its pid and its /proc entry a child of fork is invisible.
    FakePids probe;
    Tree tree;
    UnseenChildren unseen;
    probe.newest = 100;
    unseen.look(probe, tree.table);
    probe.newest = 101;
    CHECK(unseen.look(probe, tree.table) == size_t{0});
    CHECK(unseen.unsure());
    probe.add(101, 100);  // now it shows
    CHECK(unseen.look(probe, tree.table) == size_t{1});
    CHECK_FALSE(unseen.unsure());
    // settle(): a few more looks, a pause apart; then gone.
    probe.newest = 103;
    unseen.look(probe, tree.table);
    CHECK(unseen.unsure());
    const int reads = probe.status_reads;
    CHECK(unseen.settle(probe, tree.table) == size_t{0});
    CHECK(probe.status_reads == reads + 2 * UnseenChildren::kSettleAttempts);
    CHECK_FALSE(unseen.unsure());
    CHECK(unseen.children().size() == 1);
}
