// The kernel side of the eBPF backend, loaded and attached: its maps, its
// globals and its ring buffer of records, behind a small C++ interface (the
// libbpf skeleton stays inside ebpf_load.cpp).
#pragma once

#include <linux/types.h>

#include "events.h"

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct ring_buffer;  // libbpf's

namespace max_rss::ebpf {

// The tree's figures the kernel side keeps, in pages.
struct KernelTotals {
    uint64_t total_pages = 0;   // the tree's total now
    uint64_t peak_pages = 0;    // its largest total so far
    uint64_t peak_ns = 0;       // when (CLOCK_MONOTONIC, to the scheduler tick: up to one tick early)
    // Without exact_cow: the peak with every mm's anon pages counted in full
    // (copy-on-write pages once per mm sharing them): an upper bound.
    uint64_t upper_peak_pages = 0;
    // The tree's file part is the union of its address spaces' file + shmem
    // sets, which lies between the largest set (what the totals count) and
    // their sum. The excess is the sum minus the largest: 0 while at most one
    // holds any. Its largest value, and the largest total + excess (an upper
    // bound of every moment's true total: above peak_pages, the peak is a
    // lower bound; else exact).
    uint64_t shared_excess_peak_pages = 0;
    uint64_t shared_upper_peak_pages = 0;
    uint64_t lost_records = 0;  // records the ring buffer had no room for
    uint64_t untracked = 0;     // processes and address spaces a full table could not take
    // Past unrolled_cpus: counter changes whose sum over the CPUs seen did
    // not move, summed again over every CPU (a change on a CPU not marked).
    uint64_t full_sums = 0;
    // With the exact anonymous count: the tree's anonymous pages it still
    // counts (0 once every process is gone and every unmapping was seen).
    int64_t anon_pages = 0;
};

class BpfProgram {
public:
    // Whether the program's root is forked from max_rss after the load
    // (its maps are then kept out of the root's copy) or was forked before
    // it (the overlap: the ring buffer is then mapped at the first read, off
    // the path between the load and the root's release).
    enum class Root { ForkedAfter, ForkedBefore };
    // Loads and attaches everything, or throws LaunchError (exit 125) with
    // one line saying why and what to do: no BTF, no privilege, a kernel
    // without one of the attach points. With Root::ForkedAfter nothing has
    // been started then; with Root::ForkedBefore the caller holds the root.
    static std::unique_ptr<BpfProgram> load(Root root = Root::ForkedAfter);
    // The checks load() makes before anything else (BTF; the initial pid
    // namespace, whose pids are the ones the kernel side knows), for a caller
    // that loads later, while the program already runs: throws as load() would.
    static void require_host();
    ~BpfProgram();
    BpfProgram(const BpfProgram&) = delete;
    BpfProgram& operator=(const BpfProgram&) = delete;

    // Copy-on-write pages are counted once (the rmap and teardown hooks are
    // attached); false: the tree total is a lower bound and upper_peak_pages
    // an upper one, see docs/backends.md.
    [[nodiscard]] bool exact_cow() const { return exact_cow_; }
    // Puts pid, the root, in the tree: its forks, execs and exits are
    // followed from now on, and the signals generated for it are counted.
    void track(pid_t pid);
    // Whether the root got a copy of its own of signal sig, which sender
    // also sent max_rss (a process-group kill): a signal of that number from
    // that sender was generated for the root since the last time this said
    // so. Then max_rss does not send it again.
    bool root_got(int sig, pid_t sender);
    // Whether the kernel side follows process tgid and it has not exited: a
    // pid the engine's table holds may since have been reaped and reused by
    // an unrelated process (its exit record lost, or not read yet).
    [[nodiscard]] bool follows(pid_t tgid) const;
    // Puts pid in the tree when it already runs (exec'd, alone, stopped):
    // its address space with its exact counters, the tree's peak so far its
    // high-water mark. Throws TracerError if the kernel side could not.
    void adopt(pid_t pid);
    // The thread that reads the records (calls consume()) while it waits in
    // wait4: the kernel side signals it (SIGALRM) when an exit finds a
    // quarter of the ring buffer taken, every 2 ms until its next consume().
    // 0: nobody (the kernel side then signals no one). Only in the initial
    // pid namespace, where the kernel side's pids are this process's.
    void read_from(pid_t tid);
    // Hands every record waiting in the ring buffer to on_record, in order.
    // The first call (of this or poll()) maps the ring if load() did not:
    // throws TracerError if it cannot be mapped.
    void consume();
    // Waits up to timeout_ms for records, then consumes them. From the first
    // call on, the kernel side wakes the ring's waiters at every record.
    void poll(int timeout_ms);
    void on_record(std::function<void(const mrss_record&, size_t bytes)> handler) { handler_ = std::move(handler); }
    [[nodiscard]] KernelTotals totals() const;
    // Readies the kernel side for another run of this process (bench), once
    // the last run's processes are all gone: true when they left nothing in
    // it (no address space followed, once the teardowns under way are done;
    // no thread group but exiting ones, which are let go, and whose
    // unmapping still under way then counts nothing)
    // and the run's figures are cleared, any record left unread dropped,
    // and the maps kept out of the next root's fork. False: it holds state
    // of the last run, and the next run loads its own.
    bool ready_for_next_run();
    // The size of the records' ring buffer (its data part), in bytes.
    [[nodiscard]] uint64_t ring_bytes() const;

private:
    struct Impl;
    explicit BpfProgram(std::unique_ptr<Impl> impl);
    static int dispatch(void* ctx, void* data, size_t bytes);
    // Waits until no address space is followed: while one of the exiting
    // thread groups is still exiting (its exit unmaps its pages: 1 GiB takes
    // tens of ms here, far longer on a slow, loaded machine), up to
    // kExitWait; once all have exited, up to kPinnedWait more (a process
    // outside the tree that pinned an address space tears it down when it
    // lets go). False past either, or if the table cannot be listed: the
    // next run loads a kernel side of its own, a cost, not a wrong figure.
    bool wait_for_teardowns(const std::vector<__u32>& exiting);
    static constexpr std::chrono::milliseconds kExitWait{60'000};
    static constexpr std::chrono::milliseconds kPinnedWait{1'000};
    // The ring buffer, mapped at the first call; throws TracerError if it cannot be.
    ring_buffer* ring();

    std::unique_ptr<Impl> impl_;
    bool exact_cow_ = false;
    // root_signal_count, by signal number, at root_got()'s last yes.
    std::array<uint32_t, MRSS_SIGNALS> signals_answered_{};
    std::function<void(const mrss_record&, size_t)> handler_;
};

}  // namespace max_rss::ebpf
