// Loading and attaching the eBPF backend's kernel side: the light object
// first, libbpf's skeleton where the kernel lacks what it needs. What a run
// then does with it is in ebpf_program.cpp.
#include "ebpf_program_impl.hpp"

#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/clock.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

// The generated skeleton is C; its code is not ours to warn about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "max_rss.skel.h"
#pragma GCC diagnostic pop

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

}  // namespace

void keep_maps_out_of_forks() {
    const auto maps = procfs::read_file("/proc/self/maps");
    if (!maps) return;
    for (const procfs::MapsRange& range : procfs::parse_maps_ranges(*maps, "anon_inode:bpf-map"))
        if (::madvise(reinterpret_cast<void*>(range.start), range.end - range.start, MADV_DONTFORK) != 0)
            log::debug("ebpf: madvise(MADV_DONTFORK) on a BPF map: {}", std::strerror(errno));
}

namespace {

__u32 nr_cpus() {
    const int cpus = libbpf_num_possible_cpus();
    return cpus > 0 ? static_cast<__u32>(cpus) : 1;
}

// Up to how many possible CPUs the kernel side's per-CPU loops are
// unrolled for the verifier (past it, bpf_loop: see max_rss.bpf.c). 8:
// the verifier checks ~230 instructions more at every run for each CPU
// unrolled (~0.2 ms here), and bpf_loop costs a few ns a CPU at every
// counter read. MAX_RSS_EBPF_UNROLLED_CPUS=N sets it (0: always
// bpf_loop, which the tests run on a machine of few CPUs).
__u32 unrolled_cpus() {
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
__u32 cpus_per_bit() {
    const char* text = std::getenv("MAX_RSS_EBPF_CPUS_PER_BIT");
    if (!text || !*text) return 0;
    char* end = nullptr;
    const unsigned long n = std::strtoul(text, &end, 10);
    const unsigned long cpus = std::min<unsigned long>(nr_cpus(), MRSS_MAX_CPUS);
    // At most MRSS_MAX_CPUS / 64: the kernel side reads that many CPUs a bit.
    if (*end != '\0' || n < (cpus + 63) / 64 || n > MRSS_MAX_CPUS / 64) return 0;
    return static_cast<__u32>(n);
}

}  // namespace

BpfProgram::Impl::~Impl() {
    if (ring) ring_buffer__free(ring);
    for (bpf_link* link : links) bpf_link__destroy(link);
    if (skel) max_rss_bpf__destroy(skel);
    mrss_light_destroy(light);
}

int BpfProgram::Impl::open_and_load(CowHooks hooks) {
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

int BpfProgram::Impl::load_light() {
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
                           &bss->shared_sum,       &bss->shared_excess_peak,
                           &bss->shared_upper_peak_pages,
                           &bss->upper_peak_pages, &bss->peak_pages,       &bss->peak_ns,
                           &bss->lost_records,     &bss->untracked,        &bss->adopt_tgid,
                           &bss->reader_tid,       &bss->reader_polls,     &bss->reader_woken_ns,
                           &bss->counters_apart,   &bss->full_sums,        &bss->anon_sum_pages,
                           &bss->peak_jiffies,     &bss->root_tgid,        bss->root_signal_count,
                           bss->root_signal_sender};
    // The per-CPU offsets every counter read needs, found before anyone is tracked.
    run_adopt("finding the per-CPU offsets");
    return hooks;
}

void BpfProgram::require_host() {
    if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        unavailable("this kernel has no BTF (/sys/kernel/btf/vmlinux: " + std::string(std::strerror(errno)) +
                    "; it needs CONFIG_DEBUG_INFO_BTF): use --backend ptrace");
    // In a container's own pid namespace max_rss knows processes by other
    // pids than the kernel side does. (Unknown, without /proc: let it try.)
    if (in_initial_pid_namespace() == false)
        unavailable("max_rss runs in a pid namespace of its own (a container's), and the kernel side knows "
                    "processes by their pids in the host's: use --backend ptrace");
}

std::unique_ptr<BpfProgram> BpfProgram::load(Root root) {
    libbpf_set_print(libbpf_print);
    require_host();
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

}  // namespace max_rss::ebpf
