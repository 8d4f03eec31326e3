#include <max_rss/report/words.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace max_rss {

std::string describe(const Warning& w) {
    switch (w.kind) {
        case Warning::Kind::HwmReset:
            return fmt::format(
                "pid {}: VmHWM {} KiB is below a sampled RSS of {} KiB: the program reset it (clear_refs); its "
                "peak is the sampled figure, which may itself be low",
                w.pid, w.bytes >> 10, w.other_bytes >> 10);
        case Warning::Kind::Unmeasured: return fmt::format("pid {}: no stop could be measured", w.pid);
        case Warning::Kind::NoExecFilter:
            return fmt::format(
                "could not stop at execve entry (seccomp: {}): images replaced by exec are not measured",
                std::strerror(w.error));
        case Warning::Kind::CgroupUnavailable: return "--cgroup: " + w.detail + "; no cgroup peak";
        case Warning::Kind::SurvivorsKilled:
            return fmt::format(
                "interrupted after the command ended: {} process{} it started still ran and {} killed", w.bytes,
                w.bytes == 1 ? "" : "es", w.bytes == 1 ? "was" : "were");
        case Warning::Kind::StrictSeccomp:
            return fmt::format(
                "pid {} asked for seccomp strict mode: refused ({}) under the ptrace backend, whose seccomp filter "
                "cannot be combined with it; {} measures it untouched",
                w.pid, std::strerror(w.error), backends_without_ptrace());
        case Warning::Kind::PtraceRefused:
            return fmt::format(
                "pid {} called ptrace({}): refused ({}), since max_rss already traces the tree (debuggers, strace "
                "and LeakSanitizer cannot run under --backend ptrace); {} measures it untouched",
                w.pid, w.detail, std::strerror(w.error), backends_without_ptrace());
        case Warning::Kind::EventsLost:
            return fmt::format(
                "{} kernel event record{} lost (the eBPF ring buffer was full): processes or images may be missing; "
                "the tree peak, kept in the kernel, is not affected",
                w.bytes, w.bytes == 1 ? " was" : "s were");
        case Warning::Kind::Untracked:
            return fmt::format(
                "{} process{} or address space{} could not be followed (the eBPF backend's tables hold {} at once, "
                "and take kernel memory for each as it comes: they were full, or none was free): "
                "what they held is missing and the tree peak is a lower bound; --backend ptrace has no such limit",
                w.bytes, w.bytes == 1 ? "" : "es", w.bytes == 1 ? "" : "s", w.other_bytes);
        case Warning::Kind::NoReleaseFilter:
            return fmt::format("could not install the release-point filter in pid {} ({}): the tree peak is a lower bound",
                               w.pid,
                               w.detail.empty() ? fmt::format("seccomp: {}", std::strerror(w.error)) : w.detail);
        case Warning::Kind::CowBounds:
            return fmt::format(
                "copy-on-write pages of forked children could not be followed on this kernel (older than Linux "
                "6.14, without the mod_memcg_lruvec_state tracepoint, and refusing fentry): the tree peak {} KiB "
                "is a lower bound (their copies are not counted); counting every shared page once per process "
                "gives {} KiB, an upper bound",
                w.bytes >> 10, w.other_bytes >> 10);
    }
    return "unknown warning";
}

std::string backends_without_ptrace() { return "--backend ebpf (root, kernel BTF) or --backend sample"; }

std::string describe_ptrace_refusal(int seize_errno) {
    if (seize_errno == EPERM)
        return "max_rss is itself being traced (strace, gdb), or Yama ptrace_scope or a container's seccomp "
               "profile forbids ptrace";
    if (seize_errno == ENOSYS) return "this kernel or sandbox has no ptrace";
    return std::strerror(seize_errno);
}

std::string describe(const Degradation& d) {
    return fmt::format(
        "PTRACE_SEIZE: {} ({}); figures come from sampling /proc and wait4: a process's last moments and "
        "processes shorter than the sampling interval can be missed",
        std::strerror(d.seize_errno), describe_ptrace_refusal(d.seize_errno));
}

const char* peak_method_name(PeakMethod method) {
    switch (method) {
        case PeakMethod::Exact: return "exact";
        case PeakMethod::LowerBound: return "lower-bound";
        case PeakMethod::DegradedSampling: return "degraded-sampling";
    }
    return "unknown";
}

const char* inexact_reason_name(InexactReason reason) {
    switch (reason) {
        case InexactReason::None: return "none";
        case InexactReason::NoReleasePoints: return "no-release-points";
        case InexactReason::SnapshotsSkipped: return "snapshots-skipped";
        case InexactReason::FamiliesUnresolved: return "families-unresolved";
        case InexactReason::FilePagesUnresolved: return "file-pages-unresolved";
        case InexactReason::ProcessesUntracked: return "processes-untracked";
        case InexactReason::ExitsUnseen: return "exits-unseen";
        case InexactReason::FallsUnseen: return "falls-unseen";
    }
    return "unknown";
}

std::string describe_inexact(InexactReason reason, BackendKind backend) {
    switch (reason) {
        case InexactReason::None: return "";
        case InexactReason::NoReleasePoints:
            return "the program could not be stopped where its memory falls (no seccomp filter), so a short peak "
                   "between snapshots can be missed";
        case InexactReason::SnapshotsSkipped:
            return "some moments where memory fell were not measured: measuring each would have cost too much of "
                   "the run (a very wide tree, or forked processes that share many pages and free memory very often)";
        case InexactReason::FamiliesUnresolved:
            return "copy-on-write pages shared by forked processes could not be counted exactly at every "
                   "moment (too costly here, or not visible to the backend)";
        case InexactReason::FilePagesUnresolved:
            if (backend == BackendKind::Ebpf)
                return "file-backed and shared-memory pages held by several processes are counted as the largest "
                       "one process held: the ebpf backend sees how many each holds, not which (--backend ptrace "
                       "counts each page once)";
            return "file-backed and shared-memory pages held by several processes could not be counted once each "
                   "at every moment (their page sets could not be read, or reading them cost too much)";
        case InexactReason::ProcessesUntracked:
            return "some processes could not be followed at all (the eBPF backend's tables were full), so what they "
                   "held is missing and nothing bounds it";
        case InexactReason::ExitsUnseen:
            return "some processes ended without stopping at their exit (killed by another thread's exit while "
                   "max_rss was measuring), so the moment before their memory went was not measured";
        case InexactReason::FallsUnseen:
            return "a process's memory fell where max_rss does not stop it (a file mmap over its pages, an "
                   "O_TRUNC of a file it maps, reclaim): its high-water mark passed every measurement of it, so "
                   "the tree may have held more at that moment";
    }
    return "";
}

const char* backend_name(BackendKind kind) {
    switch (kind) {
        case BackendKind::Ptrace: return "ptrace";
        case BackendKind::Sample: return "sample";
        case BackendKind::Ebpf: return "ebpf";
    }
    return "unknown";
}

}  // namespace max_rss
