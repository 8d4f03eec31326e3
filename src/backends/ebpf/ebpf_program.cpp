// The eBPF backend's kernel side while a run goes on: the tree handed to
// it (track, adopt), its records read (consume, poll), its figures
// (totals), and its reset between the runs of a bench. Loading it is in
// ebpf_load.cpp.
#include "ebpf_program_impl.hpp"

#include <max_rss/errors.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace max_rss::ebpf {

BpfProgram::BpfProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfProgram::~BpfProgram() = default;

ring_buffer* BpfProgram::Impl::open_ring(BpfProgram* program) {
    if (!ring) ring = ring_buffer__new(records_fd, &BpfProgram::dispatch, program, nullptr);
    return ring;
}

int BpfProgram::dispatch(void* ctx, void* data, size_t bytes) {
    auto* self = static_cast<BpfProgram*>(ctx);
    if (bytes < sizeof(mrss_record) || !self->handler_) return 0;
    // Records are 8-byte aligned in the ring; an exec record carries its
    // strings after the common part (the handler casts, knowing bytes).
    self->handler_(*static_cast<const mrss_record*>(data), bytes);
    return 0;
}

void BpfProgram::track(pid_t pid) {
    const __u32 key = static_cast<__u32>(pid);
    TaskState value{};
    if (bpf_map_update_elem(impl_->tracked_fd, &key, &value, BPF_ANY) != 0)
        throw TracerError(std::string("ebpf: tracking the program: ") + std::strerror(errno));
    for (size_t sig = 0; sig < signals_answered_.size(); ++sig)
        signals_answered_[sig] = __atomic_load_n(&impl_->globals.root_signal_count[sig], __ATOMIC_SEQ_CST);
    __atomic_store_n(impl_->globals.root_tgid, static_cast<__u32>(pid), __ATOMIC_SEQ_CST);
}

bool BpfProgram::root_got(int sig, pid_t sender) {
    if (sig <= 0 || static_cast<size_t>(sig) >= signals_answered_.size()) return false;
    const uint32_t count = __atomic_load_n(&impl_->globals.root_signal_count[sig], __ATOMIC_SEQ_CST);
    const uint32_t from = __atomic_load_n(&impl_->globals.root_signal_sender[sig], __ATOMIC_SEQ_CST);
    if (count == signals_answered_[sig] || from != static_cast<uint32_t>(sender)) return false;
    signals_answered_[sig] = count;
    return true;
}

bool BpfProgram::follows(pid_t tgid) const {
    const auto key = static_cast<__u32>(tgid);
    TaskState state{};
    return bpf_map_lookup_elem(impl_->tracked_fd, &key, &state) == 0 && state.exiting == 0;
}

void BpfProgram::Impl::run_adopt(const char* what) const {
    const int iter_fd = adopt_link_fd >= 0 ? bpf_iter_create(adopt_link_fd) : -1;
    if (iter_fd < 0) throw TracerError(std::string("ebpf: ") + what + ": " + std::strerror(errno));
    char buffer[64];
    while (::read(iter_fd, buffer, sizeof buffer) > 0) {
    }
    ::close(iter_fd);
}

void BpfProgram::adopt(pid_t pid) {
    track(pid);
    *impl_->globals.adopt_tgid = static_cast<__u32>(pid);
    impl_->run_adopt("adopting the program");
    const __u32 key = static_cast<__u32>(pid);
    TaskState value{};
    if (*impl_->globals.adopt_tgid != 0 || bpf_map_lookup_elem(impl_->tracked_fd, &key, &value) != 0 || value.mm == 0)
        throw TracerError("ebpf: the kernel side did not find the program's address space to adopt");
}

std::optional<bool> in_initial_pid_namespace() {
    constexpr ino_t kInitialPidNamespaceInode = 0xEFFFFFFCU;
    struct stat ns {};
    if (::stat("/proc/self/ns/pid", &ns) != 0) return std::nullopt;
    return ns.st_ino == kInitialPidNamespaceInode;
}

void BpfProgram::read_from(pid_t tid) {
    // The kernel side finds the reader by its pid in the initial namespace:
    // elsewhere this tid could be another process's there.
    if (tid != 0 && in_initial_pid_namespace() != true) tid = 0;
    __atomic_store_n(impl_->globals.reader_tid, static_cast<__u32>(tid), __ATOMIC_SEQ_CST);
}

ring_buffer* BpfProgram::ring() {
    ring_buffer* records = impl_->open_ring(this);
    if (!records) throw TracerError(std::string("ebpf: mapping the ring buffer: ") + std::strerror(errno));
    return records;
}

void BpfProgram::consume() {
    ring_buffer* records = ring();
    // Cleared first: an exit that finds the ring filling while this reads
    // wakes the reader again rather than finding a wake still pending.
    __atomic_store_n(impl_->globals.reader_woken_ns, 0ULL, __ATOMIC_SEQ_CST);
    ring_buffer__consume(records);
}

void BpfProgram::poll(int timeout_ms) {
    ring_buffer* records = ring();
    __atomic_store_n(impl_->globals.reader_polls, 1U, __ATOMIC_SEQ_CST);
    if (ring_buffer__poll(records, timeout_ms) < 0 && errno != EINTR) log::debug("ring_buffer__poll: {}", std::strerror(errno));
}

uint64_t BpfProgram::ring_bytes() const {
    bpf_map_info info{};
    __u32 length = sizeof info;
    if (bpf_obj_get_info_by_fd(impl_->records_fd, &info, &length) != 0)
        throw TracerError(std::string("ebpf: the ring buffer's size: ") + std::strerror(errno));
    return info.max_entries;
}

namespace {

// Every key of a hash map, or nullopt when the kernel would not list them.
template <typename Key>
std::optional<std::vector<Key>> map_keys(int fd) {
    std::vector<Key> keys;
    Key key{};
    // Entries deleted meanwhile can make the walk start over: bounded.
    for (size_t i = 0; i <= MRSS_TABLE_ENTRIES; ++i) {
        Key next{};
        if (bpf_map_get_next_key(fd, keys.empty() ? nullptr : &key, &next) != 0)
            return errno == ENOENT ? std::optional(keys) : std::nullopt;
        keys.push_back(next);
        key = next;
    }
    return std::nullopt;
}

}  // namespace

bool BpfProgram::wait_for_teardowns(const std::vector<__u32>& exiting) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    std::optional<Clock::time_point> exits_done;
    for (;;) {
        const auto mms = map_keys<__u64>(impl_->mms_fd);
        if (!mms) return false;
        if (mms->empty()) return true;
        const auto now = Clock::now();
        const bool exit_running = std::any_of(exiting.begin(), exiting.end(), [](__u32 tgid) {
            return !procfs::exit_finished(static_cast<pid_t>(tgid));
        });
        if (!exit_running && !exits_done) exits_done = now;
        const bool waited_enough = exit_running ? now - start >= kExitWait : now - *exits_done >= kPinnedWait;
        if (waited_enough) {
            log::debug("ebpf: {} address spaces not torn down after {} ms ({})", mms->size(),
                       std::chrono::duration_cast<std::chrono::milliseconds>(now - start).count(),
                       exit_running ? "an exit still running" : "every exit done");
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

bool BpfProgram::ready_for_next_run() {
    Impl& in = *impl_;
    handler_ = nullptr;
    // A record of the last run not read yet would be handed to the next: dropped.
    if (in.ring) ring_buffer__consume(in.ring);
    // A thread group stays until it is reaped (sched_process_free runs
    // after an RCU grace period), marked exiting: its exit record is read,
    // but the unmapping of its pages after its exit hook (exit_mm) still
    // counts down the tree's anonymous pages. Any other entry is a process
    // of the last run still followed.
    const auto tgids = map_keys<__u32>(in.tracked_fd);
    if (!tgids) return false;
    for (const __u32 tgid : *tgids) {
        TaskState state{};
        if (bpf_map_lookup_elem(in.tracked_fd, &tgid, &state) == 0 && state.exiting == 0) {
            log::debug("ebpf: process {} of the last run still followed", tgid);
            return false;
        }
    }
    // No address space may still be followed: its max-tree leaf, its filter
    // slot and its pages in the anonymous count would start the next run.
    // With the copy-on-write hooks an address space leaves at its teardown
    // (exit_mmap), which can come after the run: an orphan's exit record
    // ends the run before its exit unmaps its pages (tens of ms for 1 GiB),
    // and a process that pinned it meanwhile (a reader of /proc/PID/cmdline,
    // say) tears it down when it lets go. Every process is gone or exiting
    // by now, so each teardown is under way: waited for, up to a bound, past
    // which the next run loads its own kernel side.
    if (!wait_for_teardowns(*tgids)) return false;
    // So the exiting go: from here their unmapping counts nothing. One whose
    // exit is still running (an orphan that ended the run with its exit
    // record, its teardown not done) may be inside a program that found its
    // entry: a grace period of RCU, under which the kernel side's programs
    // run, waits for it (membarrier's global command is one, ~10 ms here,
    // paid only then). Without that, its pages, freed after the reset below,
    // would count the next run's anonymous pages down.
    bool exit_running = false;
    for (const __u32 tgid : *tgids) {
        if (!procfs::exit_finished(static_cast<pid_t>(tgid))) exit_running = true;
        bpf_map_delete_elem(in.tracked_fd, &tgid);
    }
    if (exit_running && ::syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) return false;
    const mrss_globals& g = in.globals;
    // Nothing followed: the max-tree and the sum of published counts are
    // empty, unless a change was accounted for an address space after it
    // left (a defect: said, and the next run loads its own).
    const auto shared_max = __atomic_load_n(g.shared_max, __ATOMIC_SEQ_CST);
    const auto shared_sum = __atomic_load_n(g.shared_sum, __ATOMIC_SEQ_CST);
    if (shared_max != 0 || shared_sum != 0) {
        log::debug("ebpf: no address space followed, yet {} file and shmem pages at most, {} in all", shared_max,
                   shared_sum);
        return false;
    }
    // The run's figures, back to those of a fresh load.
    for (__u64* field : {g.contrib_pages, g.upper_peak_pages, g.shared_excess_peak,
                         g.shared_upper_peak_pages, g.peak_pages, g.peak_ns, g.peak_jiffies,
                         g.lost_records, g.untracked, g.full_sums, g.anon_sum_pages, g.reader_woken_ns})
        __atomic_store_n(field, 0ULL, __ATOMIC_SEQ_CST);
    for (__s64* field : {g.anon_mapped_pages, g.overcount_pages}) __atomic_store_n(field, 0LL, __ATOMIC_SEQ_CST);
    for (__u32* field : {g.adopt_tgid, g.reader_tid, g.reader_polls, g.root_tgid})
        __atomic_store_n(field, 0U, __ATOMIC_SEQ_CST);
    // The next root is forked from here, with the maps mapped (a root
    // forked before the load had them mapped after it): kept out of its copy.
    keep_maps_out_of_forks();
    return true;
}

KernelTotals BpfProgram::totals() const {
    const mrss_globals& g = impl_->globals;
    auto read = [](const auto* field) { return __atomic_load_n(field, __ATOMIC_RELAXED); };
    KernelTotals t;
    const int64_t contrib = static_cast<int64_t>(read(g.contrib_pages));
    int64_t over = read(g.exact_cow) ? read(g.overcount_pages) : 0;
    if (over < 0) over = 0;
    const auto shared = static_cast<int64_t>(read(g.shared_max));
    int64_t total = contrib - over + shared;
    if (read(g.exact_anon)) total = std::max<int64_t>(read(g.anon_mapped_pages), 0) + shared;
    t.total_pages = total > 0 ? static_cast<uint64_t>(total) : 0;
    t.peak_pages = read(g.peak_pages);
    t.peak_ns = read(g.peak_ns);
    t.upper_peak_pages = read(g.upper_peak_pages);
    t.shared_excess_peak_pages = read(g.shared_excess_peak);
    t.shared_upper_peak_pages = read(g.shared_upper_peak_pages);
    t.lost_records = read(g.lost_records);
    t.untracked = read(g.untracked);
    t.full_sums = read(g.full_sums);
    t.anon_pages = read(g.anon_mapped_pages);
    return t;
}

}  // namespace max_rss::ebpf
