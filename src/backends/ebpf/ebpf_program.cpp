#include "ebpf_program.hpp"

#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/clock.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <linux/membarrier.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

// The generated skeleton is C; its code is not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "max_rss.skel.h"
#pragma GCC diagnostic pop
#include "light_loader.h"

namespace max_rss::ebpf {
namespace {

constexpr const char* kWhatToDo =
    "run max_rss as root (or with CAP_BPF and CAP_PERFMON), or use --backend ptrace";

// libbpf's own messages go to the log (-v), not to the user's terminal.
int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
    if (level == LIBBPF_DEBUG && !log::enabled(log::Level::trace)) return 0;
    static char line[1 << 16];
    std::vsnprintf(line, sizeof line, format, args);
    std::string text(line);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    log::debug("libbpf: {}", text);
    return 0;
}

[[noreturn]] void unavailable(const std::string& why) {
    throw LaunchError("--backend ebpf cannot run here: " + why, exit_code::internal_error);
}

std::string load_failure(int error) {
    // As root, EPERM/EACCES is the kernel (verifier, LSM) refusing, not a privilege.
    if ((error == EPERM || error == EACCES) && ::geteuid() != 0)
        return std::string("loading the BPF program was refused (") + std::strerror(error) + "): " + kWhatToDo;
    return std::string("the kernel refused the BPF program (") + std::strerror(error) +
           "; max_rss -v says more): use --backend ptrace";
}

// Two ways to count copy-on-write pages once, each optional: the kernel's
// own count of mapped anonymous pages, changed by the tree's tasks
// (tracepoints of Linux >= 6.14), or hooks on the rmap (fentry, which a
// kernel may refuse).
enum class CowHooks { Anon, Rmap, None };

bool is_anon_program(const bpf_program* prog, const max_rss_bpf* skel) {
    return prog == skel->progs.on_anon_mapped || prog == skel->progs.on_free;
}
bool is_rmap_program(const bpf_program* prog, const max_rss_bpf* skel) {
    return prog == skel->progs.on_remove_rmap_ptes || prog == skel->progs.on_remove_rmap_pmd ||
           prog == skel->progs.on_exit_mmap;
}
bool is_optional_program(const bpf_program* prog, const max_rss_bpf* skel) {
    return is_anon_program(prog, skel) || is_rmap_program(prog, skel);
}

// Whether the kernel may load fentry programs at all, asked without parsing
// its BTF (~60 ms): a two-instruction fentry program on BTF id 1 (no
// function) gets EINVAL from a kernel that lets fentry through and EPERM from
// one that refuses every fentry program (a BPF LSM policy, say) before
// looking at the target. Without this, such a kernel cost a second load.
bool kernel_may_allow_fentry() {
    const bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY, .attach_btf_id = 1);
    const int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "mrss_probe", "GPL", insns, 2, &opts);
    if (fd >= 0) {
        ::close(fd);
        return true;
    }
    const int error = errno;
    log::debug("ebpf: an fentry probe was refused ({})", std::strerror(error));
    return error != EPERM && error != EACCES;
}

// The BPF maps mapped here (the ring buffer, its data twice, and .bss) are
// resident from the start and a fork copies their page tables: a root forked
// from max_rss after the load would start with megabytes it never touched,
// which its ru_maxrss (wait4) then reports. The child needs none of them.
void keep_maps_out_of_forks() {
    const auto maps = procfs::read_file("/proc/self/maps");
    if (!maps) return;
    for (const procfs::MapsRange& range : procfs::parse_maps_ranges(*maps, "anon_inode:bpf-map"))
        if (::madvise(reinterpret_cast<void*>(range.start), range.end - range.start, MADV_DONTFORK) != 0)
            log::debug("ebpf: madvise(MADV_DONTFORK) on a BPF map: {}", std::strerror(errno));
}

// struct task_state of max_rss.bpf.c: a value of its tracked table.
struct TaskState {
    __u64 mm;
    __u32 exiting;
    __u32 threads_made;
};

}  // namespace

struct BpfProgram::Impl {
    // Loaded one of two ways: the light object (light), or libbpf's skeleton (skel, links).
    mrss_light* light = nullptr;
    max_rss_bpf* skel = nullptr;
    std::vector<bpf_link*> links;
    ring_buffer* ring = nullptr;
    int tracked_fd = -1;
    int records_fd = -1;
    int mms_fd = -1;
    int adopt_link_fd = -1;
    mrss_globals globals{};

    ~Impl() {
        if (ring) ring_buffer__free(ring);
        for (bpf_link* link : links) bpf_link__destroy(link);
        if (skel) max_rss_bpf__destroy(skel);
        mrss_light_destroy(light);
    }
    // Opens and loads with one set of copy-on-write hooks (or none).
    int open_and_load(CowHooks hooks) {
        skel = max_rss_bpf__open();
        if (!skel) return errno ? errno : EINVAL;
        skel->rodata->nr_cpus = nr_cpus();
        skel->rodata->unrolled_cpus = unrolled_cpus();
        skel->rodata->cpus_per_bit = cpus_per_bit();
        skel->rodata->guard_tgid = static_cast<__u32>(::getpid());
        bpf_program* prog = nullptr;
        bpf_object__for_each_program(prog, skel->obj) {
            const bool wanted = is_anon_program(prog, skel)   ? hooks == CowHooks::Anon
                                : is_rmap_program(prog, skel) ? hooks == CowHooks::Rmap
                                                              : true;
            if (!wanted) bpf_program__set_autoload(prog, false);
        }
        const int r = max_rss_bpf__load(skel);
        if (r != 0) {
            max_rss_bpf__destroy(skel);
            skel = nullptr;
            return -r;
        }
        return 0;
    }
    static __u32 nr_cpus() {
        const int cpus = libbpf_num_possible_cpus();
        return cpus > 0 ? static_cast<__u32>(cpus) : 1;
    }
    // Up to how many possible CPUs the kernel side's per-CPU loops are
    // unrolled for the verifier (past it, bpf_loop: see max_rss.bpf.c). 8:
    // the verifier checks ~230 instructions more at every run for each CPU
    // unrolled (~0.2 ms here), and bpf_loop costs a few ns a CPU at every
    // counter read. MAX_RSS_EBPF_UNROLLED_CPUS=N sets it (0: always
    // bpf_loop, which the tests run on a machine of few CPUs).
    static __u32 unrolled_cpus() {
        constexpr __u32 kDefault = 8;
        const char* text = std::getenv("MAX_RSS_EBPF_UNROLLED_CPUS");
        if (!text || !*text) return kDefault;
        char* end = nullptr;
        const unsigned long n = std::strtoul(text, &end, 10);
        if (*end != '\0' || n > MRSS_MAX_CPUS) return kDefault;
        return static_cast<__u32>(n);
    }
    // Past unrolled_cpus, a counter's change sums the parts of the CPUs its
    // address space was seen on, kept as one bit for each group of CPUs (0:
    // the kernel side's own choice, the smallest group that fits every
    // possible CPU in 64 bits). MAX_RSS_EBPF_CPUS_PER_BIT=N sets a larger
    // group, which the tests use to have one bit stand for several CPUs.
    static __u32 cpus_per_bit() {
        const char* text = std::getenv("MAX_RSS_EBPF_CPUS_PER_BIT");
        if (!text || !*text) return 0;
        char* end = nullptr;
        const unsigned long n = std::strtoul(text, &end, 10);
        const unsigned long cpus = std::min<unsigned long>(nr_cpus(), MRSS_MAX_CPUS);
        // At most MRSS_MAX_CPUS / 64: the kernel side reads that many CPUs a bit.
        if (*end != '\0' || n < (cpus + 63) / 64 || n > MRSS_MAX_CPUS / 64) return 0;
        return static_cast<__u32>(n);
    }
    // The light object: every program, the anonymous count included. 0 or an errno.
    // The per-CPU offsets found too (run_adopt), and with them the layout of
    // an mm's counters, which the light object counts on: ENOTSUP (nothing
    // left loaded) where the kernel keeps their per-CPU parts apart.
    int load_light() {
        const int r = mrss_light_load(nr_cpus(), unrolled_cpus(), cpus_per_bit(), static_cast<__u32>(::getpid()), &light);
        if (r != 0) return -r;
        tracked_fd = mrss_light_tracked_fd(light);
        records_fd = mrss_light_records_fd(light);
        mms_fd = mrss_light_mms_fd(light);
        adopt_link_fd = mrss_light_adopt_link_fd(light);
        mrss_light_globals(light, &globals);
        run_adopt("finding the per-CPU offsets");
        if (*globals.counters_apart == 0) return 0;
        log::debug("ebpf: this kernel keeps the per-CPU parts of an mm's counters apart");
        mrss_light_destroy(light);
        light = nullptr;
        return ENOTSUP;
    }
    // libbpf's skeleton: the first set of copy-on-write hooks the kernel
    // takes, attached. Returns the hooks attached, or throws.
    CowHooks load_libbpf();
    void run_adopt(const char* what) const;
    // The ring buffer, mapped (its 4 or 8 MiB of data twice: ~0.7 ms here)
    // the first time it is asked for; null, with errno, if it cannot be.
    ring_buffer* open_ring(BpfProgram* program) {
        if (!ring) ring = ring_buffer__new(records_fd, &BpfProgram::dispatch, program, nullptr);
        return ring;
    }
};

// Each load parses the kernel's BTF (~60 ms): the first that works wins.
CowHooks BpfProgram::Impl::load_libbpf() {
    std::vector<CowHooks> tries{CowHooks::Anon};
    if (kernel_may_allow_fentry()) tries.push_back(CowHooks::Rmap);
    tries.push_back(CowHooks::None);
    int error = 0;
    CowHooks hooks = CowHooks::None;
    for (CowHooks attempt : tries) {
        hooks = attempt;
        error = open_and_load(attempt);
        if (error == 0) break;
        log::debug("ebpf: loading with copy-on-write hooks {} failed ({})", static_cast<int>(attempt),
                   std::strerror(error));
    }
    if (error != 0) unavailable(load_failure(error));
    ::malloc_trim(0);  // libbpf's parse of the kernel's BTF: not in the program's fork
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, skel->obj) {
        if (!bpf_program__autoload(prog)) continue;
        bpf_link* link = bpf_program__attach(prog);
        if (!link) {
            const int attach_error = errno;
            if (is_optional_program(prog, skel)) {
                log::debug("ebpf: {} did not attach ({})", bpf_program__name(prog), std::strerror(attach_error));
                hooks = CowHooks::None;
                continue;
            }
            unavailable(std::string("attaching ") + bpf_program__name(prog) + " failed (" +
                        std::strerror(attach_error) + "): " +
                        (attach_error == EPERM ? kWhatToDo : "use --backend ptrace"));
        }
        links.push_back(link);
        if (prog == skel->progs.adopt) adopt_link_fd = bpf_link__fd(link);
    }
    tracked_fd = bpf_map__fd(skel->maps.tracked);
    records_fd = bpf_map__fd(skel->maps.records);
    mms_fd = bpf_map__fd(skel->maps.mms);
    auto* bss = skel->bss;
    globals = mrss_globals{&bss->exact_cow,        &bss->exact_anon,       &bss->anon_mapped_pages,
                           &bss->contrib_pages,    &bss->overcount_pages,  &bss->shared_max,
                           &bss->upper_peak_pages, &bss->peak_pages,       &bss->peak_ns,
                           &bss->lost_records,     &bss->untracked,        &bss->adopt_tgid,
                           &bss->reader_tid,       &bss->reader_polls,     &bss->reader_woken_ns,
                           &bss->counters_apart,   &bss->full_sums,        &bss->anon_sum_pages,
                           &bss->peak_jiffies};
    // The per-CPU offsets every counter read needs, found before anyone is tracked.
    run_adopt("finding the per-CPU offsets");
    return hooks;
}

BpfProgram::BpfProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BpfProgram::~BpfProgram() = default;

void BpfProgram::require_btf() {
    if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        unavailable("this kernel has no BTF (/sys/kernel/btf/vmlinux: " + std::string(std::strerror(errno)) +
                    "; it needs CONFIG_DEBUG_INFO_BTF): use --backend ptrace");
}

std::unique_ptr<BpfProgram> BpfProgram::load(Root root) {
    libbpf_set_print(libbpf_print);
    require_btf();
    auto impl = std::make_unique<Impl>();
    const int64_t started_ns = os::monotonic_ns();
    // The light object first (~30 ms); libbpf's skeleton (~110 ms) where the
    // kernel lacks what it needs, or when MAX_RSS_EBPF_LOADER=libbpf asks.
    const char* loader = std::getenv("MAX_RSS_EBPF_LOADER");
    const bool libbpf_only = loader && std::string_view(loader) == "libbpf";
    CowHooks hooks = CowHooks::Anon;
    const char* how = "light skeleton";
    if (const int error = libbpf_only ? EOPNOTSUPP : impl->load_light(); error != 0) {
        // Without the privilege, libbpf's loader would be refused the same way, ~100 ms later.
        if ((error == EPERM || error == EACCES) && ::geteuid() != 0) unavailable(load_failure(error));
        if (!libbpf_only)
            log::debug("ebpf: the light object did not load ({}); loading with libbpf", std::strerror(error));
        hooks = impl->load_libbpf();
        how = "libbpf skeleton";
    }
    auto program = std::unique_ptr<BpfProgram>(new BpfProgram(std::move(impl)));
    Impl& in = *program->impl_;
    program->exact_cow_ = hooks != CowHooks::None;
    // The light object always has CowHooks::Anon, and its BPF code takes
    // these values as constants (MRSS_EXACT_ANON, MRSS_EXACT_COW); totals() reads them.
    *in.globals.exact_cow = hooks == CowHooks::Rmap ? 1 : 0;
    *in.globals.exact_anon = hooks == CowHooks::Anon ? 1 : 0;
    // A root forked before the load has none of the maps in its copy, and
    // max_rss forks nothing else: the ring is mapped at the first read, once
    // the root runs (ring()), and no mapping needs keeping out of forks.
    if (root == Root::ForkedAfter) {
        if (!in.open_ring(program.get())) unavailable(std::string("ring buffer: ") + std::strerror(errno));
        keep_maps_out_of_forks();
    }
    log::debug("ebpf: loaded in {:.1f} ms ({})", static_cast<double>(os::monotonic_ns() - started_ns) / 1e6, how);
    return program;
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
}

// Runs the iter/task program (adopt in max_rss.bpf.c) over every task.
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

void BpfProgram::read_from(pid_t tid) {
    // The kernel side finds the reader by its pid in the initial namespace
    // (PROC_PID_INIT_INO): elsewhere this tid could be another process's there.
    if (tid != 0) {
        struct stat ns {};
        if (::stat("/proc/self/ns/pid", &ns) != 0 || ns.st_ino != 0xEFFFFFFCU) tid = 0;
    }
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

bool BpfProgram::ready_for_next_run() {
    Impl& in = *impl_;
    handler_ = nullptr;
    // A record of the last run not read yet would be handed to the next: dropped.
    if (in.ring) ring_buffer__consume(in.ring);
    // No address space may still be followed: its max-tree leaf, its filter
    // slot and its pages in the anonymous count would start the next run.
    const auto mms = map_keys<__u64>(in.mms_fd);
    if (!mms || !mms->empty()) return false;
    // A thread group stays until it is reaped (sched_process_free runs
    // after an RCU grace period), marked exiting: its exit record is read,
    // but the unmapping of its pages after its exit hook (exit_mm) still
    // counts down the tree's anonymous pages. Any other entry is a process
    // of the last run still followed.
    const auto tgids = map_keys<__u32>(in.tracked_fd);
    if (!tgids) return false;
    for (const __u32 tgid : *tgids) {
        TaskState state{};
        if (bpf_map_lookup_elem(in.tracked_fd, &tgid, &state) == 0 && state.exiting == 0) return false;
    }
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
    if (__atomic_load_n(g.shared_max, __ATOMIC_SEQ_CST) != 0) return false;
    // The run's figures, back to those of a fresh load.
    for (__u64* field : {g.contrib_pages, g.upper_peak_pages, g.peak_pages, g.peak_ns, g.peak_jiffies,
                         g.lost_records, g.untracked, g.full_sums, g.anon_sum_pages, g.reader_woken_ns})
        __atomic_store_n(field, 0ULL, __ATOMIC_SEQ_CST);
    for (__s64* field : {g.anon_mapped_pages, g.overcount_pages}) __atomic_store_n(field, 0LL, __ATOMIC_SEQ_CST);
    for (__u32* field : {g.adopt_tgid, g.reader_tid, g.reader_polls}) __atomic_store_n(field, 0U, __ATOMIC_SEQ_CST);
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
    t.lost_records = read(g.lost_records);
    t.untracked = read(g.untracked);
    t.full_sums = read(g.full_sums);
    t.anon_pages = read(g.anon_mapped_pages);
    return t;
}

}  // namespace max_rss::ebpf
