// SPDX-License-Identifier: GPL-2.0
/* max_rss's kernel side (CO-RE, libbpf). It follows one tree of processes
 * from kernel events, without stopping anyone:
 *   - which thread groups belong to the tree (tracked: filled at fork, the
 *     root put there by max_rss before it may run);
 *   - each of their address spaces' resident counters at every change
 *     (tp_btf/rss_stat, summed over the per-CPU parts: exact), and the
 *     largest anon + file + shmem each one ever held (its true peak);
 *   - the tree's total at every counter change and its largest value:
 *       total = the tree's distinct anon pages + the largest file + shmem set.
 *     On Linux >= 6.14 (exact_anon) the distinct anon pages are the kernel's
 *     own NR_ANON_MAPPED changes made by tracked tasks (a page counted at its
 *     first mapping and at its last unmapping: copy-on-write copies counted,
 *     shared pages once). Else each mm's private part is summed, with
 *     copy-on-write pages counted once when the rmap hooks are attached
 *     (exact_cow): a fork adds the child's anon pages to the overcount, and
 *     every unmapping of an anon page that another mapping still holds (a
 *     copy-on-write break, an munmap, a teardown) takes one away. Without
 *     them (a kernel that refuses fentry), a fork child's private part is
 *     what it added to its inherited anon pages (a lower bound: its
 *     copy-on-write copies are not seen), and upper_peak_pages keeps the
 *     peak with every mm's anon pages counted in full (an upper bound);
 *   - the sum of the file + shmem sets beside their largest, and the largest
 *     total + their excess over it: the tree's file part is the sets' union,
 *     which lies between, so above the peak that figure makes the peak a
 *     lower bound and is its upper one;
 *   - fork, exec and exit records for the backend, in a ring buffer; a
 *     record that finds it full is counted in lost_records, never dropped
 *     silently, and a process or address space that finds its table full
 *     in untracked (the tree peak is then a lower bound).
 * Attach points: BTF tracepoints (no tracefs, no kernel function names), and
 * fentry/fexit only where a kernel lacks the NR_ANON_MAPPED tracepoint (rmap
 * removals, mm teardown). */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

char LICENSE[] SEC("license") = "GPL";

/* Pointer members of kernel objects (task->mm, ...) are read with
 * BPF_CORE_READ, not loaded directly: each direct load of a pointer to a
 * struct from a trusted BTF pointer (a tracepoint's task, say) makes the
 * verifier look up "<type>__safe_trusted" names by a linear search of the
 * kernel's BTF, on every path it explores (~1 ms a load, at every run); a
 * read costs ~15-30 ns at run time. One is a plain load: the current task's
 * mm, on every anonymous page fault's path (on_anon_mapped, and on_rss_stat's
 * changed_from_outside()). The light object casts that task to an untrusted
 * pointer first (bpf_rdonly_cast, free at run time): its fields are then
 * plain loads that cannot fault (the JIT's PROBE_MEM), and the verifier
 * searches nothing for them. The cast costs the loader one linear search in
 * each program that makes it (the kfunc's, ~0.2 ms), so only those two do.
 * (on_rss_stat loaded the mm from bpf_get_current_task_btf() until
 * 2026-11-27: its verification took 2.3 ms, 1.4 ms since.) The libbpf
 * object, the fallback for kernels older than the light one needs, loads
 * the mm from bpf_get_current_task_btf() (bpf_rdonly_cast is Linux >= 6.2).
 * Scalars (pid, exit_code, an mm's mm_id) are plain loads either way: no
 * search is made for them. */
#ifdef MRSS_LIGHT
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#endif

/* The current task, for plain loads of its mm on page faults' paths (see above). */
static __always_inline struct task_struct *current_task(void)
{
#ifdef MRSS_LIGHT
    return bpf_rdonly_cast((void *)bpf_get_current_task(), bpf_core_type_id_kernel(struct task_struct));
#else
    return bpf_get_current_task_btf();
#endif
}

struct task_state {
    __u64 mm;  /* its address space (0: not its own yet: the root before exec) */
    /* Its last thread has passed sched_process_exit; with exact_anon it
     * stays tracked until its address space is torn down (tp_btf/exit_mmap
     * in its own context), so the unmapping of its pages is counted. */
    __u32 exiting;
    /* Threads it made (CLONE_THREAD), counted here rather than sent one
     * record each: a thread changes neither the tree nor its memory. */
    __u32 threads_made;
};

struct mm_state {
    __u64 anon, file, shmem, swap;  /* pages, at the last change */
    __u64 contrib;                  /* pages counted in contrib_pages */
    __u64 anon_counted;             /* pages counted in anon_sum_pages */
    __u64 shared;                   /* file + shmem as its slot of the max-tree holds them (written under the lock) */
    __u64 peak;                     /* largest anon + file + shmem */
    __u64 inherited;                /* a fork child's anon pages at fork (all shared) */
    __u64 unshared;                 /* of those, how many it stopped sharing */
    __s64 own_anon;                 /* with exact_anon: its own NR_ANON_MAPPED changes (pages it brought
                                       into being, copy-on-write copies included, minus those it was
                                       the last to unmap) */
    __u32 users;                    /* tracked thread groups using it */
    __u32 slot;                     /* its leaf in the max-tree of shared counts */
    __u32 filter;                   /* its slot of mm_filter (MRSS_NO_FILTER: none) */
    __u32 gen;                      /* its slot's generation when it took it (see shared_rise()) */
    /* With more CPUs than unrolled_cpus: the CPUs whose parts of its
     * counters may not be zero, one bit for each group of cpus_per_bit
     * (see sum_seen()). */
    __u64 cpus;
};

/* Sizes (MRSS_TABLE_ENTRIES in events.h): 16384 thread groups and address
 * spaces alive at once (max_rss's 10,000-process tests fit). Both tables
 * allocate an element when a process or an address space joins
 * (BPF_F_NO_PREALLOC, from the BPF memory allocator's per-CPU caches), not
 * all of them at every load: preallocating cost each run's load 7.5 ms here
 * on 2026-12-07 (1.24 ms on 2026-11-25), and forks got no slower without it
 * (docs/performance-history.md, 2026-12-07). An insert that finds no memory
 * counts as a full table's would. Past them nothing is silent: untracked,
 * lost_records. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MRSS_TABLE_ENTRIES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, __u32);
    __type(value, struct task_state);
} tracked SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, MRSS_TABLE_ENTRIES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, __u64);
    __type(value, struct mm_state);
} mms SEC(".maps");

/* A filter in front of mms: how many tracked address spaces have their
 * mm_id (a small number the kernel gives each live mm, Linux >= 6.15) at
 * each slot. Most rss_stat events are of address spaces not tracked: a
 * fork child's page tables copied before the fork's hook registers it, and
 * torn down after its exit's hook let it go (~27 of ~36 events a fork),
 * and every other process on the machine. A hash table's miss costs a hash
 * and a bucket's cache line (perf: its lookups were the most costly part
 * of the kernel side in a fork-heavy run); a slot at 0 (16 KiB, one line of
 * it) says no at once. A slot counts up before its entry is inserted and
 * down after it is deleted, so it never says no to an address space in the
 * table; a yes is checked in the table. (The mm's address cannot be the
 * key: the verifier allows no shift of a pointer.) Without mm_id, every
 * event is looked up. */
#define MRSS_MM_FILTER_SLOTS 4096
#define MRSS_NO_FILTER MRSS_MM_FILTER_SLOTS
__u32 mm_filter[MRSS_MM_FILTER_SLOTS] = {};

/* mm's slot; MRSS_NO_FILTER without mm_id. mm: a pointer the verifier lets be loaded from. */
#define MRSS_FILTER_SLOT(mm) \
    (bpf_core_field_exists((mm)->mm_id) ? (__u32)(mm)->mm_id & (MRSS_MM_FILTER_SLOTS - 1) : MRSS_NO_FILTER)

static __always_inline bool maybe_tracked(__u32 slot)
{
    return slot >= MRSS_NO_FILTER || *(volatile __u32 *)&mm_filter[slot & (MRSS_MM_FILTER_SLOTS - 1)] != 0;
}

static __always_inline void filter_count(__u32 slot, __s32 change)
{
    if (slot < MRSS_NO_FILTER) __sync_fetch_and_add(&mm_filter[slot & (MRSS_MM_FILTER_SLOTS - 1)], change);
}

/* The records' ring, read at every tick of max_rss's loop (20 ms by
 * default, 100 ms at most) and soon after an exit finds a quarter of it
 * taken (wake_reader()). Its pages are allocated and mapped at every run,
 * ~0.35 ms a MiB here: 4 MiB hold ~4,000 exec records or ~35,000 fork or
 * exit records, and past the quarter, room for a fork record of every
 * process the tracked table can hold (16,384 x 120 bytes) with no exit in
 * between. The libbpf object, for kernels that may lack the kfuncs the wake
 * needs, keeps 8 MiB between two ticks. */
#ifdef MRSS_LIGHT
#define MRSS_RING_BYTES (4 << 20)
#else
#define MRSS_RING_BYTES (8 << 20)
#endif
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, MRSS_RING_BYTES);
} records SEC(".maps");

/* The largest file + shmem set of the tracked address spaces, exact at
 * every change: a max-tree (each inner node the largest of its four
 * children) over one leaf per address space, laid out in an array by
 * level: level k (0: the root, 7: the leaves) at tree[4^k .. 2 * 4^k).
 * A fall of one count rewrites its leaf and the nodes above it under the
 * lock (shared_slot()); a rise, most changes, raises them without it
 * (shared_rise()). Two CPUs updating at once never leave a node off the
 * truth, and the root, tree[1], is the maximum. Its leaves are handed out
 * from a stack of free slots. (It replaced a running maximum that a shrink
 * of the largest set made stale until the next walk of the whole mms table. Four
 * children a node rather than two: half the levels, so half the
 * instructions the verifier checks in each of the five programs that
 * change it, at every run, and fewer at every change.) */
#define MRSS_TREE_LEAVES MRSS_TABLE_ENTRIES  /* a power of four */
#define MRSS_TREE_LEVELS 7                   /* log4(MRSS_TREE_LEAVES) */
_Static_assert(MRSS_TREE_LEAVES == 1 << (2 * MRSS_TREE_LEVELS), "the max-tree's depth");
/* A leaf holds its count in its low 40 bits (pages: 4 PiB) and above them
 * the generation of its slot, which goes up each time the slot is handed
 * out: a write made without the lock lands only in the slot of the address
 * space that read it (shared_rise()). */
#define MRSS_LEAF_GEN_SHIFT 40
#define MRSS_LEAF_PAGES ((1ULL << MRSS_LEAF_GEN_SHIFT) - 1)
#define MRSS_LEAF_GENS ((1U << (64 - MRSS_LEAF_GEN_SHIFT)) - 1)
/* slot's leaf in tree[] (masked: the verifier's bound), and the word a
 * leaf holds for a count of pages under a generation. */
#define MRSS_LEAF_INDEX(slot) ((MRSS_TREE_LEAVES + (slot)) & (2 * MRSS_TREE_LEAVES - 1))
#define MRSS_LEAF_WORD(gen, pages) (((__u64)(gen) << MRSS_LEAF_GEN_SHIFT) | ((pages) & MRSS_LEAF_PAGES))
struct shared_state {
    struct bpf_spin_lock lock;
    __u32 free_top;                    /* slots in free_slots */
    __u32 fresh;                       /* slots fresh .. MRSS_TREE_LEAVES - 1 were never used */
    __u32 walks;                       /* odd while a walk under the lock runs; +2 at each (see shared_rise()) */
    __u64 tree[2 * MRSS_TREE_LEAVES];  /* tree[1]: the maximum; tree[MRSS_TREE_LEAVES + slot]: a count, with
                                          its slot's generation above MRSS_LEAF_GEN_SHIFT; tree[0] and
                                          tree[2 * 4^k .. 4^(k + 1)) unused */
    __u32 free_slots[MRSS_TREE_LEAVES];
};
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct shared_state);
} shared_lock SEC(".maps");

const volatile __u32 nr_cpus = 1;
__u32 exact_cow = 0;         /* set by max_rss once the rmap and teardown hooks are attached */
/* Set by max_rss once on_anon_mapped and on_free are attached: the
 * tree's anonymous pages are then counted as the kernel counts NR_ANON_MAPPED
 * (a page counted when its first mapping appears and when its last one goes:
 * copy-on-write copies counted, shared pages once), summed over the changes
 * made by the tree's own tasks. */
__u32 exact_anon = 0;
/* The mode as the code reads it. The light object always counts
 * NR_ANON_MAPPED and has no rmap hooks (BpfProgram::load sets the two
 * variables so, and its totals() reads them): as constants there, the
 * verifier leaves out the other modes' paths, ~1,400 instructions fewer to
 * check at every run. */
#ifdef MRSS_LIGHT
#define MRSS_EXACT_ANON 1
#define MRSS_EXACT_COW 0
#else
#define MRSS_EXACT_ANON exact_anon
#define MRSS_EXACT_COW exact_cow
#endif
__s64 anon_mapped_pages = 0; /* NR_ANON_MAPPED changes made by tracked tasks */
__u64 contrib_pages = 0;     /* sum over tracked mms of their private part */
__s64 overcount_pages = 0;   /* anon pages counted in more than one tracked mm */
/* The max over tracked mms of file + shmem pages: the max-tree's root,
 * published here under shared_lock at each change. */
__u64 shared_max = 0;
/* The tree's file part is the union of its mms' file + shmem sets, which
 * the counters cannot name (they say how many pages, not which): it lies
 * between the largest set (what the total counts) and their sum. So each
 * moment's true total is at most total + excess, the excess being the sum
 * minus the largest set: 0 while at most one mm holds such pages.
 * shared_sum is the sum of the counts as published (e->shared, see
 * publish_shared()); shared_excess_peak the excess's largest value;
 * shared_upper_peak_pages the largest total + excess, kept at every rise of
 * the total (evaluate()) and every change of a published count
 * (note_excess()), the two ways it can rise. Where it exceeds peak_pages,
 * the peak is a lower bound and it the upper one; else no moment with an
 * excess could have beaten the peak, and the peak is exact. */
__u64 shared_sum = 0;
__u64 shared_excess_peak = 0;
__u64 shared_upper_peak_pages = 0;
__u64 anon_sum_pages = 0;    /* sum of every tracked mm's anon pages (shared ones in each) */
__u64 upper_peak_pages = 0;  /* largest anon_sum_pages + shared maximum: an upper bound */
__u64 peak_pages = 0;        /* the tree's largest total */
/* When (CLOCK_MONOTONIC), to one scheduler tick (4 ms at HZ=250, 1-10 ms
 * by the kernel's HZ): a program that grows makes a new peak at every page
 * fault, and reading the clock at each cost ~50 ns of the ~2 us fault
 * here. The clock is read at the first new peak of each tick (jiffies is a
 * plain load); a later one in that tick keeps that time. */
__u64 peak_ns = 0;
__u64 peak_jiffies = 0;

/* Called before the peak is raised, and peak_ns is stored before
 * peak_jiffies (the exchange orders them): a CPU that finds this tick
 * stamped, and then raises the peak, raises it after the stamp is there, so
 * a peak is never read with the time of one in an earlier tick. */
static __always_inline void stamp_peak(void)
{
    __u64 now = bpf_jiffies64();
    if (now == *(volatile __u64 *)&peak_jiffies) return;
    *(volatile __u64 *)&peak_ns = bpf_ktime_get_ns();
    __sync_lock_test_and_set(&peak_jiffies, now);
}
__u64 lost_records = 0;
__u64 untracked = 0;         /* processes and address spaces a full table could not take */
__u64 full_sums = 0;         /* changes sum_seen() found unmoved and summed over every CPU */

/* A per-CPU array of one element: where its value lives on each CPU, minus
 * its per-CPU base address, is that CPU's per-CPU offset (this kernel may
 * not export __per_cpu_offset nor this_cpu_off to BPF). */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} cpu_probe SEC(".maps");

#ifdef MRSS_LIGHT
/* The light object is for kernels >= 6.14, which have all three; its loader
 * (in the kernel) cannot tell whether a weak kfunc exists. */
#define MRSS_KFUNC __ksym
#define MRSS_HAVE_GUARD_KFUNCS 1
#else
#define MRSS_KFUNC __ksym __weak
#define MRSS_HAVE_GUARD_KFUNCS (bpf_send_signal_task && bpf_task_from_pid && bpf_task_release)
#endif
extern struct task_struct *bpf_task_from_pid(s32 pid) MRSS_KFUNC;
extern void bpf_task_release(struct task_struct *p) MRSS_KFUNC;
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, u64 value) MRSS_KFUNC;

/* max_rss itself: if it dies before the tree is gone, the tree is killed
 * (as ptrace's PTRACE_O_EXITKILL does): nothing it started runs on unseen. */
const volatile __u32 guard_tgid = 0;

/* The exact value of one of mm's counters: the global part plus every CPU's.
 * Each member is read at its own relocated offset (CO-RE), never at an
 * offset computed from member: the verifier refuses variable offsets into a
 * trusted kernel pointer. */
/* A pointer as a plain number: read back from the stack, since the
 * verifier allows no arithmetic on map pointers with unknown numbers. */
static __always_inline __u64 as_number(void *pointer)
{
    __u64 number = 0;
    bpf_probe_read_kernel(&number, sizeof number, &pointer);
    return number;
}

/* An mm's four counters as read_rss_stat() finds them: each one's global
 * part and the address of its per-CPU parts. */
struct rss_stat_copy {
    __s64 count[NR_MM_COUNTERS];
    __u64 at[NR_MM_COUNTERS];
};
_Static_assert(NR_MM_COUNTERS == 4 && MM_FILEPAGES == 0 && MM_ANONPAGES == 1 && MM_SWAPENTS == 2 &&
                   MM_SHMEMPAGES == 3,
               "four counters an mm, in this order");

/* mm->rss_stat in one read (BPF_CORE_READ would be 8), taken apart at the
 * kernel's own offsets (CO-RE), if it fits in 192 bytes of the stack (160
 * here; a kernel with lock debugging has larger locks in it). */
#define MRSS_RSS_STAT_BYTES 192
#define MRSS_RSS_STAT_FITS(mm)                                                                           \
    (bpf_core_field_size((mm)->rss_stat) <= MRSS_RSS_STAT_BYTES &&                                       \
     bpf_core_type_size(struct percpu_counter) * NR_MM_COUNTERS <= bpf_core_field_size((mm)->rss_stat) && \
     bpf_core_field_offset(struct percpu_counter, count) + 8 <= bpf_core_type_size(struct percpu_counter) && \
     bpf_core_field_offset(struct percpu_counter, counters) + 8 <= bpf_core_type_size(struct percpu_counter))
static __always_inline bool read_rss_stat(struct mm_struct *mm, struct rss_stat_copy *copy)
{
    __u8 raw[MRSS_RSS_STAT_BYTES];
    const __u32 stride = bpf_core_type_size(struct percpu_counter);
    const __u32 count_at = bpf_core_field_offset(struct percpu_counter, count);
    const __u32 counters_at = bpf_core_field_offset(struct percpu_counter, counters);
    if (!MRSS_RSS_STAT_FITS(mm)) {
#ifdef MRSS_LIGHT
        return false;
#else
#define MRSS_READ_ONE(K)                                                  \
    do {                                                                  \
        copy->count[K] = BPF_CORE_READ(mm, rss_stat[K].count);            \
        copy->at[K] = (__u64)BPF_CORE_READ(mm, rss_stat[K].counters);     \
    } while (0)
        MRSS_READ_ONE(0);
        MRSS_READ_ONE(1);
        MRSS_READ_ONE(2);
        MRSS_READ_ONE(3);
#undef MRSS_READ_ONE
        return true;
#endif
    }
    if (bpf_core_read(raw, bpf_core_field_size(mm->rss_stat), &mm->rss_stat) != 0) return false;
#define MRSS_TAKE_APART(K)                                                                  \
    do {                                                                                    \
        copy->count[K] = *(__s64 *)(raw + (K) * stride + count_at);                         \
        copy->at[K] = *(__u64 *)(raw + (K) * stride + counters_at);                         \
    } while (0)
    MRSS_TAKE_APART(0);
    MRSS_TAKE_APART(1);
    MRSS_TAKE_APART(2);
    MRSS_TAKE_APART(3);
#undef MRSS_TAKE_APART
    return true;
}

/* Whether the four counters' per-CPU parts lie side by side. */
static __always_inline bool side_by_side(const struct rss_stat_copy *copy)
{
    return copy->at[1] == copy->at[0] + 4 && copy->at[2] == copy->at[0] + 8 && copy->at[3] == copy->at[0] + 12;
}

/* Each CPU's per-CPU offset, found once: where cpu_probe's value lives on
 * that CPU minus its per-CPU address (its bpf_array's pptrs[0]). Found by
 * the iter/task program (adopt), which max_rss runs once right after the
 * load, before it tracks anyone: only that program calls this, so the
 * verifier checks it once a run rather than in four programs. It also
 * looks, on max_rss's own mm, at how the kernel lays out the per-CPU parts
 * of an mm's counters (see read_counters()): counters_apart, which max_rss
 * reads right after this first run. It reads the four addresses one by one
 * rather than with read_rss_stat(): that one's copy on this function's stack,
 * on top of adopt()'s own, would pass the verifier's 512 bytes. */
__u64 cpu_offset[MRSS_MAX_CPUS] = {};
__u32 cpu_offsets_ready = 0;
__u32 counters_apart = 0;

/* The loops over every possible CPU (the three below). Up to unrolled_cpus
 * CPUs, a bounded loop, which the verifier walks pass by pass in every
 * program that has one, at every run: ~230 instructions more to check for
 * each CPU (with bounded loops alone, the light object had 6,410 checked at
 * 2 CPUs, 20,274 at 64 and 63,090 at 256, ~5 times the time). Past it,
 * bpf_loop(), whose callback it checks once (~6,450 at any count), for a
 * few ns more a CPU when it runs.
 * Both numbers are constants at load time (set by max_rss: 8, or
 * MAX_RSS_EBPF_UNROLLED_CPUS), so the verifier keeps one of the two paths. */
const volatile __u32 unrolled_cpus = 8;
#define MRSS_LOOP_CPUS (nr_cpus < MRSS_MAX_CPUS ? nr_cpus : MRSS_MAX_CPUS)
#define MRSS_CPU_LOOP (nr_cpus > unrolled_cpus)
/* Runs ONE(cpu, context) for each possible CPU in order, until it returns
 * non-zero: the one body serves both loops (its direct calls are inlined
 * into the bounded one; bpf_loop() calls it by its address). */
#define MRSS_EACH_CPU(ONE, context)                                  \
    do {                                                             \
        if (MRSS_CPU_LOOP) {                                         \
            bpf_loop(MRSS_LOOP_CPUS, ONE, context, 0);               \
        } else {                                                     \
            for (__u32 cpu = 0; cpu < MRSS_MAX_CPUS; cpu++)          \
                if (cpu >= nr_cpus || ONE(cpu, context)) break;      \
        }                                                            \
    } while (0)

struct offset_search {
    __u64 base;
};

static __always_inline int find_one_offset(__u32 cpu, void *context)
{
    struct offset_search *search = context;
    __u32 zero = 0;
    void *here = bpf_map_lookup_percpu_elem(&cpu_probe, &zero, cpu);
    if (!here) return 1;
    cpu_offset[cpu & (MRSS_MAX_CPUS - 1)] = as_number(here) - search->base;
    return 0;
}

__attribute__((noinline)) int find_cpu_offsets(void)
{
    __u64 base = 0;
    bpf_probe_read_kernel(&base, sizeof base,
                          (void *)(as_number(&cpu_probe) + bpf_core_field_offset(struct bpf_array, pptrs)));
    struct offset_search search = {base};
    MRSS_EACH_CPU(find_one_offset, &search);
    struct task_struct *self = (struct task_struct *)bpf_get_current_task();
    struct mm_struct *own = BPF_CORE_READ(self, mm);
    if (own) {
        __u64 at0 = (__u64)BPF_CORE_READ(own, rss_stat[0].counters);
        counters_apart = !MRSS_RSS_STAT_FITS(own) || (__u64)BPF_CORE_READ(own, rss_stat[1].counters) != at0 + 4 ||
                         (__u64)BPF_CORE_READ(own, rss_stat[2].counters) != at0 + 8 ||
                         (__u64)BPF_CORE_READ(own, rss_stat[3].counters) != at0 + 12;
    }
    cpu_offsets_ready = 1;
    return 0;
}

/* Reads member's global part into count and its per-CPU pointer into
 * counters with READ(K), K a constant (each member at its own relocated
 * offset); returns 0 for an unknown member. */
#define MRSS_READ_MEMBER(member, READ)                                   \
    switch (member) {                                                     \
    case MM_FILEPAGES: READ(MM_FILEPAGES); break;                         \
    case MM_ANONPAGES: READ(MM_ANONPAGES); break;                         \
    case MM_SWAPENTS: READ(MM_SWAPENTS); break;                           \
    case MM_SHMEMPAGES: READ(MM_SHMEMPAGES); break;                       \
    default: return 0;                                                    \
    }

static __always_inline __u64 at_least_zero(__s64 count)
{
    return count > 0 ? (__u64)count : 0;
}

/* An address space's seen CPUs (mm_state.cpus): bit cpu / cpus_per_bit.
 * cpus_per_bit is the smallest that puts every possible CPU in 64 bits
 * (1 up to 64 CPUs), unless max_rss sets a larger one (the tests, with
 * MAX_RSS_EBPF_CPUS_PER_BIT, to have a bit stand for more than one CPU on a
 * machine of few). */
const volatile __u32 cpus_per_bit = 0;
#define MRSS_CPUS_PER_BIT (cpus_per_bit ? cpus_per_bit : (MRSS_LOOP_CPUS + 63) / 64)
static __always_inline __u64 cpu_bit(__u32 cpu)
{
    return 1ULL << ((cpu / MRSS_CPUS_PER_BIT) & 63);
}

/* A sum of per-CPU parts: the four counters' parts side by side at at
 * (count[0..3]), or one counter's (count[0]); cpus: with the four, the
 * bits of the CPUs whose parts were not zero. */
struct parts_sum {
    __u64 at;
    __s64 count[NR_MM_COUNTERS];
    __u64 cpus;
};

static __always_inline int add_one_part(__u32 cpu, void *context)
{
    struct parts_sum *sum = context;
    __s32 part = 0;
    bpf_probe_read_kernel(&part, sizeof part, (void *)(sum->at + cpu_offset[cpu & (MRSS_MAX_CPUS - 1)]));
    sum->count[0] += part;
    return 0;
}

static __always_inline int add_four_parts(__u32 cpu, void *context)
{
    struct parts_sum *sum = context;
    __s32 parts[NR_MM_COUNTERS] = {};
    bpf_probe_read_kernel(parts, sizeof parts, (void *)(sum->at + cpu_offset[cpu & (MRSS_MAX_CPUS - 1)]));
    sum->count[0] += parts[0];
    sum->count[1] += parts[1];
    sum->count[2] += parts[2];
    sum->count[3] += parts[3];
    if (MRSS_CPU_LOOP && (parts[0] | parts[1] | parts[2] | parts[3])) sum->cpus |= cpu_bit(cpu);
    return 0;
}

/* The global part plus every CPU's part at counters. */
static __always_inline __u64 sum_counter(__s64 count, __u64 counters)
{
    struct parts_sum sum = {counters, {count}, 0};
    MRSS_EACH_CPU(add_one_part, &sum);
    return at_least_zero(sum.count[0]);
}

/* Bit i's index, for one bit alone (de Bruijn: the top six bits of the
 * product are distinct for each of the 64). */
static const __u8 bit_index[64] = {
    0,  1,  2,  53, 3,  7,  54, 27, 4,  38, 41, 8,  34, 55, 48, 28, 62, 5,  39, 46, 44, 42,
    22, 9,  24, 35, 59, 56, 49, 18, 29, 11, 63, 52, 6,  26, 37, 40, 33, 47, 61, 45, 43, 21,
    23, 58, 17, 10, 51, 25, 36, 32, 60, 20, 57, 16, 50, 31, 19, 15, 30, 14, 13, 12,
};
#define MRSS_DE_BRUIJN 0x022fdd63cc95386dULL

/* The parts of the CPUs of the lowest bit left in sum->cpus (taken out). */
static int add_seen_parts(__u32 i, void *context)
{
    struct parts_sum *sum = context;
    __u64 left = sum->cpus;
    if (!left) return 1;
    __u64 lowest = left & -left;
    sum->cpus = left ^ lowest;
    __u32 first = bit_index[(lowest * MRSS_DE_BRUIJN) >> 58] * MRSS_CPUS_PER_BIT;
    for (__u32 k = 0; k < MRSS_MAX_CPUS / 64; k++) {
        __u32 cpu = first + k;
        if (k >= MRSS_CPUS_PER_BIT || cpu >= nr_cpus) break;
        __s32 part = 0;
        bpf_probe_read_kernel(&part, sizeof part, (void *)(sum->at + cpu_offset[cpu & (MRSS_MAX_CPUS - 1)]));
        sum->count[0] += part;
    }
    return 0;
}

static __always_inline int add_one_part_marking(__u32 cpu, void *context)
{
    struct parts_sum *sum = context;
    __s32 part = 0;
    bpf_probe_read_kernel(&part, sizeof part, (void *)(sum->at + cpu_offset[cpu & (MRSS_MAX_CPUS - 1)]));
    sum->count[0] += part;
    if (part) sum->cpus |= cpu_bit(cpu);
    return 0;
}

/* One counter of e at a change, on a machine of many CPUs: its global part
 * plus the parts of the CPUs e has been seen on, not of every possible CPU
 * (a bpf_loop() turn each, ~33 ns here: at 64 possible CPUs the full sum
 * added ~2.4 us to a ~1.5 us page fault). A CPU's part of a counter is
 * changed only on that CPU, and the kernel changes an mm's counters mostly
 * under its page-table lock, with its rss_stat event just after, on the
 * same CPU: that CPU's bit is set here before any part is read. The bits of
 * the others were set by their own events, or at registration for the
 * parts found then (read_counters(); all of them where the kernel keeps the
 * four counters' parts apart). A few changes are made outside that lock
 * (khugepaged's collapse of a range into a huge page, in its own thread or
 * in MADV_COLLAPSE): preempted between the change and its event, the task
 * can move, and its event then runs on a CPU whose part did not change.
 * That is seen as a sum that did not move (before: e's count at its last
 * change): every CPU is read then, and those whose parts are not zero are
 * marked. The bits are never cleared: a program that runs on every CPU in
 * turn comes back to the full sum. */
static __always_inline __u64 sum_seen(__s64 count, __u64 counters, struct mm_state *e, __u64 before)
{
    __u64 bit = cpu_bit(bpf_get_smp_processor_id());
    if (!(*(volatile __u64 *)&e->cpus & bit)) __sync_fetch_and_or(&e->cpus, bit);
    /* One sum on the stack for both ways (a second one did not check fewer
     * instructions: the verifier walks the rest of on_rss_stat after each
     * way, ~1,300 instructions more at 64 CPUs, either way). */
    struct parts_sum sum = {counters, {count}, *(volatile __u64 *)&e->cpus};
    bpf_loop(64, add_seen_parts, &sum, 0);
    if (at_least_zero(sum.count[0]) == before) {
        __sync_fetch_and_add(&full_sums, 1);
        sum.count[0] = count;
        sum.cpus = 0;
        MRSS_EACH_CPU(add_one_part_marking, &sum);
        if (sum.cpus & ~*(volatile __u64 *)&e->cpus) __sync_fetch_and_or(&e->cpus, sum.cpus);
    }
    return at_least_zero(sum.count[0]);
}

/* All four of mm's counters (mm from BPF_CORE_READ), into e: the global
 * parts, then every CPU's. The kernel allocates the four per-CPU parts side
 * by side on each CPU (percpu_counter_init_many(), Linux >= 6.6): one read
 * a CPU takes them all. With the one read of the global parts and the
 * per-CPU addresses (read_rss_stat()), 3 reads here rather than 16. False
 * where the parts are apart: the libbpf object then sums each counter
 * alone; the light object is not used on such a kernel (adopt() checks
 * max_rss's own mm at load: counters_apart), and does not carry that path
 * (~130 instructions more to check in each of three programs at every
 * run). */
static __always_inline bool read_counters(struct mm_struct *mm, struct mm_state *e)
{
    struct rss_stat_copy copy;
    if (!read_rss_stat(mm, &copy)) return false;
    if (!side_by_side(&copy)) {
#ifdef MRSS_LIGHT
        return false;
#else
        e->file = sum_counter(copy.count[MM_FILEPAGES], copy.at[MM_FILEPAGES]);
        e->anon = sum_counter(copy.count[MM_ANONPAGES], copy.at[MM_ANONPAGES]);
        e->swap = sum_counter(copy.count[MM_SWAPENTS], copy.at[MM_SWAPENTS]);
        e->shmem = sum_counter(copy.count[MM_SHMEMPAGES], copy.at[MM_SHMEMPAGES]);
        e->cpus = ~0ULL;  /* every CPU read at each change: these old kernels' path stays simple */
        return true;
#endif
    }
    struct parts_sum sum = {copy.at[0], {copy.count[0], copy.count[1], copy.count[2], copy.count[3]}, 0};
    MRSS_EACH_CPU(add_four_parts, &sum);
    e->cpus = sum.cpus;
    e->file = at_least_zero(sum.count[MM_FILEPAGES]);
    e->anon = at_least_zero(sum.count[MM_ANONPAGES]);
    e->swap = at_least_zero(sum.count[MM_SWAPENTS]);
    e->shmem = at_least_zero(sum.count[MM_SHMEMPAGES]);
    return true;
}

/* One of the counters of a trusted mm (a tracepoint's argument): its two
 * fields are plain loads, not helper calls, on the path of every page
 * fault. Neither is a pointer to a struct, so the verifier's
 * "__safe_trusted" search (see above) is not made for them. Also e's count
 * of it at its last change (a constant member: no branch to check). */
#define MRSS_COUNT_IN(e, K)                                                                       \
    ((K) == MM_ANONPAGES ? (e)->anon : (K) == MM_FILEPAGES ? (e)->file : (K) == MM_SHMEMPAGES ? (e)->shmem : (e)->swap)
#define MRSS_LOAD_COUNTER(K)                                              \
    do {                                                                  \
        count = mm->rss_stat[K].count;                                    \
        counters = (__u64)mm->rss_stat[K].counters;                       \
        before = MRSS_COUNT_IN(e, K);                                     \
    } while (0)

static __always_inline __u64 read_trusted_counter(struct mm_struct *mm, int member, struct mm_state *e)
{
    __s64 count = 0;
    __u64 counters = 0, before = 0;
    MRSS_READ_MEMBER(member, MRSS_LOAD_COUNTER);
    if (MRSS_CPU_LOOP) return sum_seen(count, counters, e, before);
    return sum_counter(count, counters);
}

/* *where = max(*where, value), atomically. Global: the verifier checks its
 * eight tries once per program, not at each of up to five call sites. */
__attribute__((noinline)) int raise_to(__u64 *where, __u64 value)
{
    if (!where) return 0;
    for (int i = 0; i < 8; i++) {
        __u64 seen = *(volatile __u64 *)where;
        if (value <= seen) return 0;
        if (__sync_val_compare_and_swap(where, seen, value) == seen) return 0;
    }
    return 0;
}

static __always_inline __u64 own_private_anon(const struct mm_state *e)
{
    __u64 still_shared = e->inherited > e->unshared ? e->inherited - e->unshared : 0;
    return e->anon > still_shared ? e->anon - still_shared : 0;
}

/* The larger of two counts (below 2^63), without a branch: the empty asm
 * keeps the compiler from making one again, so that the verifier checks one
 * path through the max-tree's levels, not two per comparison. */
static __always_inline __u64 larger(__u64 a, __u64 b)
{
    __s64 diff = (__s64)(a - b);
    __s64 below = diff >> 63;  /* all ones when a < b */
    asm volatile("" : "+r"(below));
    return a - (diff & below);
}

/* e's file + shmem count as its leaf now holds it, kept in shared_sum. An
 * exchange: two CPUs publishing one mm's count (a walk under the lock, a
 * rise without it) each account the change from the other's value. */
static __always_inline void publish_shared(struct mm_state *e, __u64 value)
{
    __u64 before = __sync_lock_test_and_set(&e->shared, value);
    if (value != before) __sync_fetch_and_add(&shared_sum, value - before);
}

/* e->shared once its slot is given back: no count is ever this large, so a
 * late rise (below) cannot publish over it. */
#define MRSS_SHARED_GONE (~0ULL)

/* e leaves the sum for good, its slot given back (under the lock). */
static __always_inline void retire_shared(struct mm_state *e)
{
    __u64 before = __sync_lock_test_and_set(&e->shared, MRSS_SHARED_GONE);
    if (before != MRSS_SHARED_GONE) __sync_fetch_and_add(&shared_sum, -before);
}

/* The same for a rise made without the lock (shared_rise()), which may land
 * after a walk published a newer count: it only ever raises e->shared, so a
 * late one cannot take a newer, larger count out of the sum (a late one
 * over a fall leaves the sum high until e's next change: the bound only
 * looser). Nor can one that lands after e's slot was given back put e into
 * the sum again, where its count would stay after e is gone (and keep the
 * kernel side from being handed to the next run): e->shared is then
 * MRSS_SHARED_GONE, above any count. */
static __always_inline void publish_rise(struct mm_state *e, __u64 value)
{
    for (int i = 0; i < 8; i++) {
        __u64 before = *(volatile __u64 *)&e->shared;
        if (value <= before) return;
        if (__sync_val_compare_and_swap(&e->shared, before, value) == before) {
            __sync_fetch_and_add(&shared_sum, value - before);
            return;
        }
    }
}


__attribute__((noinline)) int note_excess(void);

enum mrss_slot_op {
    MRSS_SLOT_SET,   /* e's slot's count becomes e->file + e->shmem */
    MRSS_SLOT_NEW,   /* a free slot becomes e's, with that count */
    MRSS_SLOT_FREE,  /* e's slot's count goes to 0, the slot back to the free stack */
};

/* The one place the max-tree changes, under its lock. e's counts and slot
 * are read there: of two threads of one mm publishing at once, the later
 * count stays, and an entry whose slot was freed (MRSS_TREE_LEAVES) changes
 * nothing. Returns e's slot; MRSS_TREE_LEAVES when it has none (no
 * slot was free). Global: the verifier checks it once per program, not at
 * each call site. */
__attribute__((noinline)) __u32 shared_slot(struct mm_state *e, __u32 op)
{
    __u32 zero = 0;
    struct shared_state *st = bpf_map_lookup_elem(&shared_lock, &zero);
    if (!st || !e) return MRSS_TREE_LEAVES;
    bpf_spin_lock(&st->lock);
    /* Odd from here to the unlock: a rise made meanwhile without the lock
     * (shared_rise()) sees it and comes here. An atomic add: on x86 also a
     * full barrier, so no leaf is read below before it is visible. */
    __sync_fetch_and_add(&st->walks, 1);
    if (op == MRSS_SLOT_NEW) {
        if (st->free_top > 0) {
            st->free_top--;
            e->slot = st->free_slots[st->free_top & (MRSS_TREE_LEAVES - 1)];
        } else if (st->fresh < MRSS_TREE_LEAVES) {
            e->slot = st->fresh++;
        } else {
            e->slot = MRSS_TREE_LEAVES;
        }
    }
    __u32 slot = e->slot;
    if (slot >= MRSS_TREE_LEAVES) {
        __sync_fetch_and_add(&st->walks, 1);
        bpf_spin_unlock(&st->lock);
        return MRSS_TREE_LEAVES;
    }
    __u32 leaf = MRSS_LEAF_INDEX(slot);
    if (op == MRSS_SLOT_NEW) e->gen = ((__u32)(st->tree[leaf] >> MRSS_LEAF_GEN_SHIFT) + 1) & MRSS_LEAF_GENS;
    /* The latest counts, read under the lock: of two threads of one mm
     * publishing at once, the later one's stays. */
    __u64 value = e->file + e->shmem;
    if (op == MRSS_SLOT_FREE) {
        value = 0;
        retire_shared(e);
        e->slot = MRSS_TREE_LEAVES;
        if (st->free_top < MRSS_TREE_LEAVES) {
            st->free_slots[st->free_top & (MRSS_TREE_LEAVES - 1)] = slot;
            st->free_top++;
        }
    } else {
        publish_shared(e, value);
    }
    /* The leaf, then each node above it: every node is the largest of its
     * children before, so it is after. A node that keeps its value leaves
     * every node above it as it was: the walk stops there (most changes are
     * of a set smaller than another under the same node, and stop a level
     * or two up). base: the first node of the level below; index: the
     * changed node in it. */
    __u32 base = MRSS_TREE_LEAVES, index = slot;
    st->tree[leaf] = MRSS_LEAF_WORD(e->gen, value);
    for (int level = 0; level < MRSS_TREE_LEVELS; level++) {
        const __u64 *four = &st->tree[(base + (index & ~3u)) & (2 * MRSS_TREE_LEAVES - 4)];
        __u64 largest = larger(larger(four[0] & MRSS_LEAF_PAGES, four[1] & MRSS_LEAF_PAGES),
                               larger(four[2] & MRSS_LEAF_PAGES, four[3] & MRSS_LEAF_PAGES));
        base >>= 2;
        index >>= 2;
        __u64 *node = &st->tree[(base + index) & (2 * MRSS_TREE_LEAVES - 1)];
        if (*node == largest) break;
        *node = largest;
    }
    shared_max = st->tree[1];
    __sync_fetch_and_add(&st->walks, 1);
    bpf_spin_unlock(&st->lock);
    note_excess();
    return slot;
}

/* A rise of e's file + shmem count, made without the lock: most changes of
 * those counts are page faults, each a rise (a fork child mapping its
 * parent's libraries again, a program reading a file it mapped). Its leaf
 * is raised with a compare-and-swap that also checks the slot's generation
 * (still e's), then each node above it with raise_to() up to the first one
 * already as large: rises alone keep every node the largest of its
 * children, in any order. Only a walk under the lock (shared_slot(): a fall,
 * a slot handed out or given back) recomputes nodes from their children,
 * and could store over a node this raised from a leaf it read before the
 * raise. Such walks make walks odd while they run and add 2 in all: a rise
 * that finds walks odd, or changed when it is done, returns 0, and its
 * caller then does it again under the lock, which recomputes its path from
 * the leaves. A walk that starts after this one has read walks the last time
 * sees every store made here (atomic, so visible before that read). So does
 * a change of e's counts made meanwhile by another thread: that is seen as
 * e's count no longer what was stored, and it too returns 0. Returns 1 when
 * the count rose and the tree has it; 2 when the shared maximum rose too. */
__attribute__((noinline)) int shared_rise(struct mm_state *e)
{
    __u32 zero = 0;
    struct shared_state *st = bpf_map_lookup_elem(&shared_lock, &zero);
    if (!st || !e) return 0;
    __u32 walks = *(volatile __u32 *)&st->walks;
    if (walks & 1) return 0;
    __u32 slot = *(volatile __u32 *)&e->slot;
    if (slot >= MRSS_TREE_LEAVES) return 0;
    __u64 value = e->file + e->shmem;
    __u64 *leaf = &st->tree[MRSS_LEAF_INDEX(slot)];
    __u64 word = *(volatile __u64 *)leaf;
    __u64 tagged = MRSS_LEAF_WORD(e->gen, value);
    if ((word >> MRSS_LEAF_GEN_SHIFT) != e->gen || value <= (word & MRSS_LEAF_PAGES) || value > MRSS_LEAF_PAGES)
        return 0;
    if (__sync_val_compare_and_swap(leaf, word, tagged) != word) return 0;
    __u32 base = MRSS_TREE_LEAVES, index = slot;
    for (int level = 0; level < MRSS_TREE_LEVELS; level++) {
        base >>= 2;
        index >>= 2;
        __u64 *node = &st->tree[(base + index) & (2 * MRSS_TREE_LEAVES - 1)];
        if (*(volatile __u64 *)node >= value) break;
        raise_to(node, value);
    }
    int result = 1;
    if (value > *(volatile __u64 *)&shared_max) {
        raise_to(&shared_max, value);
        result = 2;
    }
    if (*(volatile __u32 *)&st->walks != walks || e->file + e->shmem != value) return 0;
    publish_rise(e, value);
    note_excess();
    return result;
}

/* Keeps contrib_pages and the shared maximum in step with e's counters. */
static __always_inline void account(__u64 key, struct mm_state *e)
{
    if (!MRSS_EXACT_ANON) {  /* with it, neither sum is used */
        __u64 contrib = MRSS_EXACT_COW ? e->anon : (e->anon > e->inherited ? e->anon - e->inherited : 0);
        __u64 before = __sync_lock_test_and_set(&e->contrib, contrib);
        if (contrib != before) __sync_fetch_and_add(&contrib_pages, contrib - before);
        __u64 anon_before = __sync_lock_test_and_set(&e->anon_counted, e->anon);
        if (e->anon != anon_before) __sync_fetch_and_add(&anon_sum_pages, e->anon - anon_before);
    }

    /* shared_slot() reads the counts again under the lock; this only asks
     * whether the tree is behind. */
    if (*(volatile __u64 *)&e->shared != e->file + e->shmem) shared_slot(e, MRSS_SLOT_SET);
    raise_to(&e->peak, e->anon + e->file + e->shmem);
}

/* The tree's total with this shared maximum. */
static __always_inline __s64 tree_total(__u64 shared)
{
    if (MRSS_EXACT_ANON) {
        __s64 anon = anon_mapped_pages;
        return (anon > 0 ? anon : 0) + (__s64)shared;
    }
    __s64 over = MRSS_EXACT_COW ? overcount_pages : 0;
    if (over < 0) over = 0;
    return (__s64)contrib_pages - over + (__s64)shared;
}

/* With the tree's total and the largest set at one moment: the sum's
 * excess over that set then, and the total with it, raised into their
 * peaks. The raises are calls: each is made only when it would raise
 * (evaluate() runs at every rise of the total). */
static __always_inline void raise_excess(__s64 total, __u64 largest)
{
    __u64 sum = *(volatile __u64 *)&shared_sum;
    if (sum <= largest) return;
    __u64 excess = sum - largest;
    if (excess > *(volatile __u64 *)&shared_excess_peak) raise_to(&shared_excess_peak, excess);
    __u64 upper = (__u64)(total > 0 ? total : 0) + excess;
    if (upper > *(volatile __u64 *)&shared_upper_peak_pages) raise_to(&shared_upper_peak_pages, upper);
}

/* After a change of a leaf. Global: checked once, not in each caller. */
__attribute__((noinline)) int note_excess(void)
{
    __u64 largest = *(volatile __u64 *)&shared_max;
    raise_excess(tree_total(largest), largest);
    return 0;
}

/* The tree's total now: a new peak is kept with its time. Global, like
 * shared_slot(): checked once per program, not at each call site nor in
 * each caller's states. */
__attribute__((noinline)) int evaluate(void)
{
    __u64 shared = *(volatile __u64 *)&shared_max;
    if (!MRSS_EXACT_COW && !MRSS_EXACT_ANON) raise_to(&upper_peak_pages, anon_sum_pages + shared);
    __s64 total = tree_total(shared);
    /* The excess with this maximum, read now (not as the last note_excess()
     * left it: two of those at once can store out of order). */
    raise_excess(total, shared);
    if (total <= (__s64)peak_pages) return 0;
    stamp_peak();
    raise_to(&peak_pages, (__u64)total);
    return 0;
}

/* Every rise of the total is evaluated where it happens, but one: with the
 * rmap hooks, a copy-on-write page unshared (overcount_pages - 1) is not,
 * since a teardown's counters drop just after. An exec's entry and an exit,
 * before their pages go, look again. */
static __always_inline void catch_up(void)
{
    if (MRSS_EXACT_COW) evaluate();
}

static __always_inline void remove_mm(__u64 key, struct mm_state *e)
{
    if (!MRSS_EXACT_ANON) {  /* with it, neither sum is kept */
        __sync_fetch_and_add(&contrib_pages, -e->contrib);
        __sync_fetch_and_add(&anon_sum_pages, -e->anon_counted);
    }
    shared_slot(e, MRSS_SLOT_FREE);
    __u32 filter = e->filter;
    bpf_map_delete_elem(&mms, &key);
    filter_count(filter, -1);
}

/* Starts following mm; returns its entry (0: the table was full).
 * fork_of_tracked: a fork child of a tracked mm, whose anon pages are all
 * its parent's too (copy-on-write). */
static __always_inline struct mm_state *register_mm(struct mm_struct *mm, bool fork_child, bool fork_of_tracked)
{
    __u64 key = (__u64)mm;
    struct mm_state fresh = {};
    if (!read_counters(mm, &fresh)) {
        __sync_fetch_and_add(&untracked, 1);
        return 0;
    }
    fresh.users = 1;
    fresh.filter =
        bpf_core_field_exists(mm->mm_id) ? BPF_CORE_READ(mm, mm_id) & (MRSS_MM_FILTER_SLOTS - 1) : MRSS_NO_FILTER;
    fresh.peak = fresh.anon + fresh.file + fresh.shmem;
    if (fork_child) fresh.inherited = fresh.anon;
    /* Its leaf of the max-tree, with its count, before the entry can be
     * seen: one pass under the lock. */
    if (shared_slot(&fresh, MRSS_SLOT_NEW) >= MRSS_TREE_LEAVES) {
        __sync_fetch_and_add(&untracked, 1);
        return 0;
    }
    filter_count(fresh.filter, 1);
    long error = bpf_map_update_elem(&mms, &key, &fresh, BPF_NOEXIST);
    if (error == -17 /* EEXIST: an address reused after a teardown we missed */) {
        struct mm_state *old = bpf_map_lookup_elem(&mms, &key);
        if (old) remove_mm(key, old);
        error = bpf_map_update_elem(&mms, &key, &fresh, BPF_NOEXIST);
    }
    if (error != 0) {
        filter_count(fresh.filter, -1);
        shared_slot(&fresh, MRSS_SLOT_FREE);
        __sync_fetch_and_add(&untracked, 1);
        return 0;
    }
    struct mm_state *e = bpf_map_lookup_elem(&mms, &key);
    if (!e) return 0;
    if (fork_of_tracked && MRSS_EXACT_COW) __sync_fetch_and_add(&overcount_pages, (__s64)fresh.anon);
    /* With the seen CPUs (sum_seen()): a change made between the read
     * above and the insert had its event turned away, and its CPU may be
     * marked nowhere. Read again, now that events find the entry (into
     * fresh: adopt()'s stack has no room for another copy). */
    if (MRSS_CPU_LOOP && read_counters(mm, &fresh)) {
        __sync_fetch_and_or(&e->cpus, fresh.cpus);
        e->anon = fresh.anon;
        e->file = fresh.file;
        e->shmem = fresh.shmem;
        e->swap = fresh.swap;
    }
    account(key, e);
    evaluate();
    return e;
}

static __always_inline void fill_figures(struct mrss_mm_figures *f, struct mm_struct *mm, const struct mm_state *e)
{
    f->valid = 1;
    f->peak_pages = e->peak;
    f->hiwater_pages = BPF_CORE_READ(mm, hiwater_rss);
    f->anon_pages = e->anon;
    f->file_pages = e->file;
    f->shmem_pages = e->shmem;
    f->swap_pages = e->swap;
    f->private_anon_pages = MRSS_EXACT_ANON ? (e->own_anon > 0 ? (__u64)e->own_anon : 0) : own_private_anon(e);
}

/* Who reads the records, set by max_rss: the thread of its loop, which
 * waits in wait4 (a signal wakes it) until the root is gone, and on the ring
 * itself (ring_buffer__poll) after. */
__u32 reader_tid = 0;
__u32 reader_polls = 0;
__u64 reader_woken_ns = 0;  /* the last wake not yet followed by a read (max_rss clears it) */

/* A record is handed over without the ring's own wake-up (an IPI to this
 * CPU for every record that finds the reader caught up) while the reader
 * waits in wait4 and reads at its ticks; see wake_reader(). */
static __always_inline void submit(void *record)
{
    bpf_ringbuf_submit(record, reader_polls ? 0 : BPF_RB_NO_WAKEUP);
}

/* When a quarter of the ring is taken, the reader is signalled (SIGALRM,
 * its tick signal); again every 2 ms until it reads: a signal that lands
 * just before its wait4 is seen only at its next tick. Only at exits (the
 * ring full or not): the kernel's loader looks up the kfuncs this needs by
 * a linear search of the kernel's BTF in every program that calls them
 * (~0.2 ms each, at every run), and on_exit has them already. What comes
 * between two exits is bounded: a fork record per process the tracked table
 * can hold, and execs, which take ~0.3 ms each here (~1.1 KB of records). */
static __always_inline void wake_reader(void)
{
    if (!MRSS_HAVE_GUARD_KFUNCS || !reader_tid || reader_polls) return;
    if (bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) < MRSS_RING_BYTES / 4) return;
    __u64 now = bpf_ktime_get_ns();
    __u64 last = *(volatile __u64 *)&reader_woken_ns;
    if (last && now - last < 2000000) return;
    if (__sync_val_compare_and_swap(&reader_woken_ns, last, now) != last) return;
    struct task_struct *reader = bpf_task_from_pid((s32)reader_tid);
    if (!reader) return;
    bpf_send_signal_task(reader, 14 /* SIGALRM */, PIDTYPE_PID, 0);
    bpf_task_release(reader);
}

static __always_inline struct mrss_record *reserve_record(void)
{
    struct mrss_record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
    if (!r) {
        __sync_fetch_and_add(&lost_records, 1);
        return 0;
    }
    __builtin_memset(r, 0, sizeof(*r));
    r->ts_ns = bpf_ktime_get_ns();
    return r;
}

/* Whether the task that changes mm's counters now is outside the tree:
 * neither running in a tracked address space nor a tracked task. khugepaged
 * collapsing a huge page in the tree's memory, and a debugger or
 * process_vm_writev() writing into it, fault pages in from outside; their
 * NR_ANON_MAPPED changes are not the tree's to on_anon_mapped, which decides
 * by the task that makes them. With exact_anon it runs at each rise of a
 * tracked mm's anon count (every anonymous page fault of the tree): the mm
 * is a plain load (current_task()). */
static __always_inline bool changed_from_outside(struct mm_struct *mm)
{
    struct task_struct *task = current_task();
    struct mm_struct *own = task->mm;
    if (own == mm) return false;
    if (own && maybe_tracked(MRSS_FILTER_SLOT(own))) {
        __u64 key = (__u64)own;
        if (bpf_map_lookup_elem(&mms, &key)) return false;
    }
    __u32 tgid = bpf_get_current_pid_tgid() >> 32;
    return !bpf_map_lookup_elem(&tracked, &tgid);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss_stat, struct mm_struct *mm, int member)
{
    __u64 key = (__u64)mm;
    if (!maybe_tracked(MRSS_FILTER_SLOT(mm))) return 0;
    struct mm_state *e = bpf_map_lookup_elem(&mms, &key);
    if (!e) return 0;
    __u64 value = read_trusted_counter(mm, member, e);
    /* Plain stores: of two CPUs storing, the later store wins either way. */
    if (member == MM_ANONPAGES) {
        __u64 before = *(volatile __u64 *)&e->anon;
        *(volatile __u64 *)&e->anon = value;
        /* With exact_anon the tree's anon pages are NR_ANON_MAPPED's, and
         * on_anon_mapped evaluates the total at their change: here only
         * this mm's own peak moves. This is most page faults' path. */
        if (MRSS_EXACT_ANON) {
            raise_to(&e->peak, value + e->file + e->shmem);
            /* Pages brought in from outside the tree count by this mm's
             * rise (a collapse maps one huge page for the small ones it
             * frees: the rise is the pages it adds). Falls made from
             * outside (reclaim) are not counted: the count stays high,
             * never low. */
            if (value > before && changed_from_outside(mm)) {
                __sync_fetch_and_add(&anon_mapped_pages, (__s64)(value - before));
                __sync_fetch_and_add(&e->own_anon, (__s64)(value - before));
                evaluate();
            }
            return 0;
        }
    } else if (member == MM_FILEPAGES || member == MM_SHMEMPAGES) {
        if (member == MM_FILEPAGES)
            *(volatile __u64 *)&e->file = value;
        else
            *(volatile __u64 *)&e->shmem = value;
        /* A rise, most often: the tree's anon total is unchanged, and the
         * total itself only if the shared maximum rose. Anything else (a
         * fall; a race with a walk under the lock) goes under the lock. */
        int rise = shared_rise(e);
        if (rise) {
            raise_to(&e->peak, e->anon + e->file + e->shmem);
            if (rise == 2) evaluate();
            return 0;
        }
        shared_slot(e, MRSS_SLOT_SET);
    } else {
        *(volatile __u64 *)&e->swap = value;
        return 0;
    }
    account(key, e);
    evaluate();
    return 0;
}

/* Hooks that take no lock and call no kfunc (an exec's entry, a reaping)
 * are raw tracepoints, whose task arguments are read with BPF_CORE_READ: a
 * BTF tracepoint costs each run two more linear searches of the kernel's
 * BTF (its attach target, and its argument list's names), ~0.2 ms a
 * program, for plain loads that save a few ns an event. The others must be
 * BTF tracepoints (BPF_PROG_TYPE_TRACING): the kernel refuses bpf_spin_lock
 * and these kfuncs in a raw tracepoint. */

/* A task's pid and tgid, in one read where they lie side by side (as in
 * this kernel's task_struct); else two. The check is on the relocated
 * offsets, so the verifier keeps one of the two branches. */
static __always_inline void read_ids(struct task_struct *task, __u32 ids[2])
{
    if (bpf_core_field_offset(struct task_struct, tgid) == bpf_core_field_offset(struct task_struct, pid) + 4) {
        bpf_probe_read_kernel(ids, 2 * sizeof(__u32), (char *)task + bpf_core_field_offset(struct task_struct, pid));
    } else {
        ids[0] = BPF_CORE_READ(task, pid);
        ids[1] = BPF_CORE_READ(task, tgid);
    }
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
    __u32 parent_tgid = parent->tgid;
    struct task_state *ps = bpf_map_lookup_elem(&tracked, &parent_tgid);
    if (!ps) return 0;
    __u32 tgid = child->tgid;
    if (tgid == parent_tgid) {
        __sync_fetch_and_add(&ps->threads_made, 1);
        return 0;
    }
    __u32 kind = MRSS_CLONE_FORK;
    struct mm_state *e = 0;
    struct mm_struct *mm = BPF_CORE_READ(child, mm);
    struct task_state state = {};
    if (mm == BPF_CORE_READ(parent, mm)) {
        kind = MRSS_CLONE_SHARED_MM;
        state.mm = ps->mm;
    } else if (mm) {
        state.mm = (__u64)mm;
    }
    if (bpf_map_update_elem(&tracked, &tgid, &state, BPF_ANY) != 0) {
        __sync_fetch_and_add(&untracked, 1);  /* it and its descendants go unseen */
        return 0;
    }
    if (kind == MRSS_CLONE_SHARED_MM) {
        struct mm_state *shared = state.mm ? bpf_map_lookup_elem(&mms, &state.mm) : 0;
        if (shared) __sync_fetch_and_add(&shared->users, 1);
    } else if (mm) {
        bool parent_tracked = MRSS_EXACT_COW && ps->mm && bpf_map_lookup_elem(&mms, &ps->mm);
        e = register_mm(mm, true, parent_tracked);
    }
    struct mrss_record *r = reserve_record();
    if (!r) return 0;
    r->kind = MRSS_REC_FORK;
    r->tid = child->pid;
    r->tgid = tgid;
    r->other = parent_tgid;  /* its creator's process: threads are not reported */
    r->clone_kind = kind;
    if (e) fill_figures(&r->mm, mm, e);
    submit(r);
    return 0;
}

/* Right before the point of no return of an exec: the old image is whole. */
SEC("raw_tp/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *task, struct linux_binprm *bprm)
{
    __u32 ids[2] = {};
    read_ids(task, ids);
    __u32 tgid = ids[1];
    struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
    if (!st || !st->mm) return 0;
    struct mm_state *e = bpf_map_lookup_elem(&mms, &st->mm);
    catch_up();
    struct mrss_record *r = reserve_record();
    if (!r) return 0;
    r->kind = MRSS_REC_EXEC_ENTRY;
    r->tid = ids[0];
    r->tgid = tgid;
    if (e) fill_figures(&r->mm, BPF_CORE_READ(task, mm), e);
    submit(r);
    return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
    __u32 tgid = task->tgid;
    struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
    if (!st) return 0;
    __u64 old = st->mm;
    struct mm_state *e = old ? bpf_map_lookup_elem(&mms, &old) : 0;
    if (e && __sync_fetch_and_add(&e->users, -1) == 1 && !MRSS_EXACT_COW) remove_mm(old, e);
    struct mm_struct *mm = BPF_CORE_READ(task, mm);
    st->mm = (__u64)mm;
    e = register_mm(mm, false, false);

    struct mrss_exec_record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
    if (!r) {
        __sync_fetch_and_add(&lost_records, 1);
        return 0;
    }
    __builtin_memset(&r->base, 0, sizeof(r->base));
    r->base.kind = MRSS_REC_EXEC;
    r->base.ts_ns = bpf_ktime_get_ns();
    r->base.tid = task->pid;
    r->base.tgid = tgid;
    r->base.other = (__u32)old_pid;
    if (e) fill_figures(&r->base.mm, mm, e);
    const char *filename = BPF_CORE_READ(bprm, filename);
    if (bpf_probe_read_kernel_str(r->filename, sizeof r->filename, filename) < 0) r->filename[0] = 0;
    __u64 start = BPF_CORE_READ(mm, arg_start), end = BPF_CORE_READ(mm, arg_end);
    __u64 len = end > start ? end - start : 0;
    if (len > MRSS_ARGS_BYTES) len = MRSS_ARGS_BYTES;
    r->args_bytes = 0;
    if (len > 0 && bpf_probe_read_user(r->args, len & (MRSS_ARGS_BYTES * 2 - 1), (void *)start) == 0)
        r->args_bytes = (__u32)len;
    submit(r);
    return 0;
}

static long kill_one(struct bpf_map *map, __u32 *tgid, struct task_state *st, void *ctx)
{
    if (st->exiting) return 0;  /* gone but for its address space: its pid may be someone else's */
    struct task_struct *task = bpf_task_from_pid((s32)*tgid);
    if (!task) return 0;
    bpf_send_signal_task(task, 9 /* SIGKILL */, PIDTYPE_TGID, 0);
    bpf_task_release(task);
    return 0;
}

/* Before exit_mm: the address space is whole. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task, bool group_dead)
{
    __u32 tgid = task->tgid;
    if (tgid == guard_tgid && group_dead && MRSS_HAVE_GUARD_KFUNCS) {
        bpf_for_each_map_elem(&tracked, kill_one, 0, 0);
        return 0;
    }
    /* A thread that leaves a group still running changes neither the tree
     * nor the group's memory: only the group's last task is reported. */
    if (!group_dead) return 0;
    struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
    if (!st) return 0;
    catch_up();
    __u64 key = st->mm;
    struct mm_state *e = key ? bpf_map_lookup_elem(&mms, &key) : 0;
    struct mrss_record *r = reserve_record();
    if (r) {
        r->kind = MRSS_REC_EXIT;
        r->tid = task->pid;
        r->tgid = tgid;
        r->other = 1;
        r->tasks = 1 + st->threads_made;
        r->exit_code = task->exit_code;
        struct mm_struct *mm = BPF_CORE_READ(task, mm);
        struct signal_struct *signal = BPF_CORE_READ(task, signal);
        __u64 maxrss = BPF_CORE_READ(signal, maxrss);
        __u64 cmaxrss = BPF_CORE_READ(signal, cmaxrss);
        if (cmaxrss > maxrss) maxrss = cmaxrss;
        if (e && mm && (__u64)mm == key) {
            fill_figures(&r->mm, mm, e);
            __u64 rss = e->anon + e->file + e->shmem;
            if (r->mm.hiwater_pages > maxrss) maxrss = r->mm.hiwater_pages;
            if (rss > maxrss) maxrss = rss;
        }
        r->ru_maxrss_pages = maxrss;
        submit(r);
    }
    wake_reader();
    if (e && __sync_fetch_and_add(&e->users, -1) == 1 && !MRSS_EXACT_COW) remove_mm(key, e);
    /* Its pages are unmapped after this (exit_mm, by whichever of its
     * threads is the last to leave): still counted as the tree's until it
     * is reaped (on_free), which comes after the last of its threads has
     * left exit_mm. (A hook on the teardown itself, tp_btf/exit_mmap, let
     * it go a little earlier, at the cost of one more tracepoint enabled
     * and disabled at every run and one more program run at every exit.) */
    if (MRSS_EXACT_ANON) {
        st->exiting = 1;
        return 0;
    }
    bpf_map_delete_elem(&tracked, &tgid);
    return 0;
}

/* The root, adopted once the kernel side is loaded (see early_tracer.hpp):
 * max_rss loads this while the program already runs under ptrace, held at
 * every fork, clone, exec after the first, ptrace call, signal and exit
 * until now, so it is alone in its tree and stopped while this runs. Its
 * address space joins the tree with its exact counters, and the peak so far
 * (the tree's too: it was alone) is its own high-water mark. Run by
 * reading an iter/task link: once right after the load with adopt_tgid 0
 * (it finds the per-CPU offsets, which every counter read needs), and once
 * with adopt_tgid set, to adopt; it clears adopt_tgid. */
__u32 adopt_tgid = 0;

SEC("iter/task")
int adopt(struct bpf_iter__task *ctx)
{
    if (!cpu_offsets_ready) find_cpu_offsets();
    struct task_struct *task = ctx->task;
    if (!task || !adopt_tgid) return 0;
    __u32 tgid = BPF_CORE_READ(task, tgid);
    if (tgid != adopt_tgid || (__u32)BPF_CORE_READ(task, pid) != tgid) return 0;
    struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
    struct mm_struct *mm = BPF_CORE_READ(task, mm);
    if (!st || st->mm || !mm) return 0;
    st->mm = (__u64)mm;
    struct mm_state *e = register_mm(mm, false, false);
    if (!e) return 0;
    /* Alone since its exec: every anon page it maps is its own, once. */
    if (MRSS_EXACT_ANON) {
        __sync_fetch_and_add(&anon_mapped_pages, (__s64)e->anon);
        e->own_anon = (__s64)e->anon;
    }
    raise_to(&e->peak, BPF_CORE_READ(mm, hiwater_rss));
    evaluate();
    if (e->peak > peak_pages) {
        stamp_peak();
        raise_to(&peak_pages, e->peak);
    }
    raise_to(&upper_peak_pages, e->peak);
    adopt_tgid = 0;
    return 0;
}

/* Signals generated for the root's thread group, by number (1-64): how
 * many, and the process that sent the last one. max_rss forwards a
 * signal it was sent to the root only when the root did not get
 * a copy of its own: a group kill (kill -INT -PGID, GNU timeout) reaches
 * the root before max_rss (the group's newest members come first), and a
 * running root takes its copy at once, so by the time max_rss looks its
 * /proc status shows nothing pending. Set by max_rss (root_tgid) once the
 * kernel side is loaded; 0: nothing counted. */
__u32 root_tgid = 0;
__u32 root_signal_count[MRSS_SIGNALS] = {};
__u32 root_signal_sender[MRSS_SIGNALS] = {};

SEC("raw_tp/signal_generate")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
    if (!root_tgid) return 0;
    if ((__u32)BPF_CORE_READ(task, tgid) != root_tgid) return 0;
    __u32 i = (__u32)sig & (MRSS_SIGNALS - 1);
    root_signal_sender[i] = bpf_get_current_pid_tgid() >> 32;
    __sync_fetch_and_add(&root_signal_count[i], 1);
    return 0;
}

/* A task reaped: a thread group that exited and was kept for the
 * unmapping of its pages leaves the tree. */
SEC("raw_tp/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
    __u32 ids[2] = {};
    read_ids(p, ids);
    if (ids[0] != ids[1]) return 0;
    __u32 tgid = ids[1];
    struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
    if (st && st->exiting) bpf_map_delete_elem(&tracked, &tgid);
    return 0;
}

/* Every change of a memory cgroup's per-node statistics; only the tree's
 * own NR_ANON_MAPPED changes are counted. A raw tracepoint in the light
 * object (it takes no lock, and its arguments are numbers). In libbpf's,
 * a BTF one: its load fails on a kernel without the tracepoint, which is
 * how that object finds out and tries the rmap hooks instead. */
#ifdef MRSS_LIGHT
SEC("raw_tp/mod_memcg_lruvec_state")
#else
SEC("tp_btf/mod_memcg_lruvec_state")
#endif
int BPF_PROG(on_anon_mapped, struct mem_cgroup *memcg, int item, int val)
{
    if (item != bpf_core_enum_value(enum node_stat_item, NR_ANON_MAPPED)) return 0;
    /* Whose pages: the faulting or unmapping task's own mm. A task that
     * runs in a tracked mm is the tree's (each mm's users are tracked at
     * fork), or a kernel thread working in the tree's address space
     * (kthread_use_mm): its pages are the tree's too. So that lookup alone
     * decides on a page fault's path. */
    struct task_struct *task = current_task();
    struct mm_struct *mm = task->mm;
    __u64 key = (__u64)mm;
    struct mm_state *e = mm && maybe_tracked(MRSS_FILTER_SLOT(mm)) ? bpf_map_lookup_elem(&mms, &key) : 0;
    if (e) {
        __sync_fetch_and_add(&e->own_anon, (__s64)val);
    } else {
        /* A tracked task in no tracked mm: a teardown in exit_mm (it runs
         * with no mm), or an exec's unmapping of the old image (the new
         * one is not tracked yet). */
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;
        struct task_state *st = bpf_map_lookup_elem(&tracked, &tgid);
        if (!st) return 0;
        /* The root before its first exec runs in a copy of max_rss: the
         * pages it unmaps then (at the exec) were never counted as the
         * tree's. */
        if (val < 0 && !st->mm) return 0;
    }
    __sync_fetch_and_add(&anon_mapped_pages, (__s64)val);
    if (val > 0) evaluate();
    return 0;
}

#ifndef MRSS_LIGHT
/* The rmap hooks (fentry/fexit), for kernels without the NR_ANON_MAPPED
 * tracepoint. Left out of the light object (MRSS_LIGHT), which is loaded by
 * a loader program in the kernel, for kernels that have it; this object,
 * with them, is the libbpf skeleton's, the fallback. */

/* After an address space is torn down: it holds nothing any more. */
SEC("fexit/exit_mmap")
int BPF_PROG(on_exit_mmap, struct mm_struct *mm)
{
    __u64 key = (__u64)mm;
    struct mm_state *e = bpf_map_lookup_elem(&mms, &key);
    if (e) remove_mm(key, e);
    return 0;
}

/* How many of the nr pages from page on are mapped more than once. */
static __always_inline __u64 shared_pages(struct folio *folio, struct page *page, int nr)
{
    __u64 flags = BPF_CORE_READ(folio, flags.f);
    if (!(flags & (1UL << PG_head))) {
        int mapcount = BPF_CORE_READ(folio, _mapcount.counter) + 1;
        return mapcount >= 2 ? 1 : 0;
    }
    int entire = BPF_CORE_READ(folio, _entire_mapcount.counter) + 1;
    __u64 size = bpf_core_type_size(struct page);
    __u64 count = 0;
    for (int i = 0; i < 512; i++) {
        if (i >= nr) break;
        struct page *p = (struct page *)((__u64)page + (__u64)i * size);
        int mapcount = BPF_CORE_READ(p, _mapcount.counter) + 1 + entire;
        if (mapcount >= 2) count++;
    }
    return count;
}

static __always_inline struct mm_state *cow_target(struct folio *folio, struct vm_area_struct *vma, __u64 *key)
{
    if (!MRSS_EXACT_COW || overcount_pages <= 0) return 0;
    __u64 mapping = (__u64)BPF_CORE_READ(folio, mapping);
    if ((mapping & 3) != 1) return 0;  /* anonymous, not KSM */
    *key = (__u64)BPF_CORE_READ(vma, vm_mm);
    return bpf_map_lookup_elem(&mms, key);
}

static __always_inline void unshare(struct mm_state *e, __u64 pages)
{
    if (!pages) return;
    __sync_fetch_and_add(&overcount_pages, -(__s64)pages);
    __sync_fetch_and_add(&e->unshared, pages);
}

/* An anon page that another mapping still holds is unmapped here (a
 * copy-on-write break, munmap, teardown): one copy fewer in the tree. The
 * total is not evaluated here: in a teardown the counters drop just after. */
SEC("fentry/folio_remove_rmap_ptes")
int BPF_PROG(on_remove_rmap_ptes, struct folio *folio, struct page *page, int nr_pages, struct vm_area_struct *vma)
{
    __u64 key = 0;
    struct mm_state *e = cow_target(folio, vma, &key);
    if (e) unshare(e, shared_pages(folio, page, nr_pages));
    return 0;
}

SEC("fentry/folio_remove_rmap_pmd")
int BPF_PROG(on_remove_rmap_pmd, struct folio *folio, struct page *page, struct vm_area_struct *vma)
{
    __u64 key = 0;
    struct mm_state *e = cow_target(folio, vma, &key);
    if (!e) return 0;
    int mappings = BPF_CORE_READ(folio, _large_mapcount.counter) + 1;
    if (mappings >= 2) unshare(e, BPF_CORE_READ(folio, _nr_pages));
    return 0;
}
#endif /* MRSS_LIGHT */
