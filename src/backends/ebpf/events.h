/* What the eBPF program (max_rss.bpf.c) hands to the backend through its ring
 * buffer, and the figures it keeps in its globals. Shared by the BPF C code
 * and the C++ backend: plain C, fixed-width types, every size in pages. */
#ifndef MAX_RSS_EBPF_EVENTS_H
#define MAX_RSS_EBPF_EVENTS_H

#define MRSS_FILENAME_BYTES 256
#define MRSS_ARGS_BYTES 512
#define MRSS_MAX_CPUS 1024
/* Thread groups, and address spaces, the kernel side follows at once. */
#define MRSS_TABLE_ENTRIES 16384
/* Slots of the root's signal counts, by signal number: a power of two above
 * the 64 signals, so that the BPF side's mask is its bound. */
#define MRSS_SIGNALS 128

enum mrss_record_kind {
    MRSS_REC_FORK = 1,        /* a tracked task made a process (threads are only counted) */
    MRSS_REC_EXEC_ENTRY = 2,  /* a tracked process is about to exec: its old image, whole */
    MRSS_REC_EXEC = 3,        /* it exec'd (struct mrss_exec_record) */
    MRSS_REC_EXIT = 4,        /* a tracked process's last task exited, before exit_mm */
};

enum mrss_clone_kind {
    MRSS_CLONE_FORK = 1,       /* a process with a copy-on-write copy of its creator's mm */
    MRSS_CLONE_SHARED_MM = 2,  /* vfork, posix_spawn, CLONE_VM: its creator's mm */
};

/* An address space's counters (exact per-CPU sums) and peaks, in pages. */
struct mrss_mm_figures {
    __u64 peak_pages;        /* largest anon + file + shmem seen at any counter change */
    __u64 hiwater_pages;     /* the kernel's own mm->hiwater_rss (read approximately) */
    __u64 anon_pages;
    __u64 file_pages;
    __u64 shmem_pages;
    __u64 swap_pages;
    __u64 private_anon_pages; /* anon pages not shared with another mm of the tree */
    __u32 valid;              /* 0: the task had no mm of its own that was tracked */
    __u32 pad;
};

struct mrss_record {
    __u32 kind;        /* enum mrss_record_kind */
    __u32 tid;         /* fork: the new task; exec: the thread-group id; exit: the group's last task */
    __u32 tgid;
    __u32 other;       /* fork: the creating process; exec: the former tid; exit: 1 (the group is dead) */
    __u32 clone_kind;  /* fork: enum mrss_clone_kind */
    __s32 exit_code;   /* exit: task->exit_code, in wait-status form */
    __u32 tasks;       /* exit: the tasks the group ever had (its threads, counted in the kernel) */
    __u32 pad;
    __u64 ts_ns;       /* CLOCK_MONOTONIC */
    __u64 ru_maxrss_pages; /* exit of a group: what wait4 will report */
    struct mrss_mm_figures mm;
};

struct mrss_exec_record {
    struct mrss_record base;
    __u32 args_bytes;  /* bytes of args used (NUL-separated argv) */
    __u32 pad;
    char filename[MRSS_FILENAME_BYTES];
    char args[MRSS_ARGS_BYTES];
};

#endif
