// What BpfProgram keeps of the kernel side it loaded, shared by the two
// halves of its code: ebpf_load.cpp, which loads and attaches it (the light
// object, or libbpf's skeleton), and ebpf_program.cpp, which reads it while
// a run goes on. Private to the eBPF backend; the skeletons stay in
// ebpf_load.cpp.
#pragma once

#include "ebpf_program.hpp"
#include "light_loader.h"

#include <optional>
#include <vector>

struct bpf_link;     // libbpf's
struct max_rss_bpf;  // the libbpf skeleton (max_rss.skel.h)

namespace max_rss::ebpf {

// Two ways to count copy-on-write pages once, each optional: the kernel's
// own count of mapped anonymous pages, changed by the tree's tasks
// (tracepoints of Linux >= 6.14), or hooks on the rmap (fentry, which a
// kernel may refuse).
enum class CowHooks { Anon, Rmap, None };

// The kernel side knows tasks by their pids in the initial pid namespace.
// Whether max_rss's own is that one (PROC_PID_INIT_INO, a fixed inode
// number); nullopt when /proc/self/ns/pid cannot be read.
std::optional<bool> in_initial_pid_namespace();

// struct task_state of max_rss.bpf.c: a value of its tracked table.
struct TaskState {
    __u64 mm;
    __u32 exiting;
    __u32 threads_made;
};

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

    ~Impl();
    // Opens and loads with one set of copy-on-write hooks (or none); 0 or an errno.
    int open_and_load(CowHooks hooks);
    // The light object: every program, the anonymous count included. 0 or an errno.
    // The per-CPU offsets found too (run_adopt), and with them the layout of
    // an mm's counters, which the light object counts on: ENOTSUP (nothing
    // left loaded) where the kernel keeps their per-CPU parts apart.
    int load_light();
    // libbpf's skeleton: the first set of copy-on-write hooks the kernel
    // takes, attached. Returns the hooks attached, or throws.
    CowHooks load_libbpf();
    // Runs the iter/task program (adopt in max_rss.bpf.c) over every task;
    // throws TracerError saying what it was for if it cannot.
    void run_adopt(const char* what) const;
    // The ring buffer, mapped (its 4 or 8 MiB of data twice: ~0.7 ms here)
    // the first time it is asked for; null, with errno, if it cannot be.
    ring_buffer* open_ring(BpfProgram* program);
};

// The BPF maps mapped here (the ring buffer, its data twice, and .bss) are
// resident from the start and a fork copies their page tables: a root forked
// from max_rss after the load would start with megabytes it never touched,
// which its ru_maxrss (wait4) then reports. The child needs none of them.
void keep_maps_out_of_forks();

}  // namespace max_rss::ebpf
