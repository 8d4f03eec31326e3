// The eBPF backend: the root's launch. With the kernel side loaded first,
// the root is tracked before it may run; else it runs under the early tracer
// (early_tracer.hpp) while a thread loads, and is adopted once the load is done.
#include "ebpf_backend.hpp"
#include "loader_thread.hpp"

#include <max_rss/os/launch.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/util/log.hpp>

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace max_rss::ebpf {
namespace {

// Ends the root while the early tracer still has it, and reaps it. SIGKILL
// alone does not end one held at its exit stop (PTRACE_EVENT_EXIT): it is
// exiting already, the kernel drops the signal, and it would stay stopped
// for ever; resumed, it finishes its exit.
void end_traced_root(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);  // ESRCH when it is in no stop: nothing to resume
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, __WALL);
        if (r < 0 && errno == EINTR) continue;
        if (r != pid || WIFEXITED(status) || WIFSIGNALED(status)) return;
        ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);  // another stop on its way out
    }
}

}  // namespace

// The kernel side is in place first: the root is tracked before it may run.
void EbpfBackend::launch_loaded() {
    program_->on_record([this](const mrss_record& r, size_t bytes) { handle(r, bytes); });
    os::LaunchSpec spec;
    spec.argv = context_->argv;
    spec.child_mask = context_->signals.original_mask();
    // In the tree before it may run: every fork it makes is followed in kernel.
    spec.before_release = [this](pid_t pid) {
        program_->track(pid);
        if (context_->before_release) context_->before_release(pid);
    };
    os::Launched launched = os::launch(spec);
    root_pid_ = launched.pid;
    context_->recorder.root_started(root_pid_);
    const os::LaunchReport report = os::read_launch_report(launched.report_fd);
    if (report.exec_errno != 0) {
        ::waitpid(root_pid_, nullptr, 0);
        os::throw_launch_error(context_->argv.at(0), report.exec_errno);
    }
    forwarder_->set_root(root_pid_);
}

// The root runs while a thread loads the kernel side, then is adopted.
void EbpfBackend::launch_while_loading() {
    Recorder& recorder = context_->recorder;
    Loader loader;
    bool seized = false;
    os::LaunchSpec spec;
    spec.argv = context_->argv;
    spec.child_mask = context_->signals.original_mask();
    spec.before_release = [&](pid_t pid) {
        loader.start();  // after the fork: none of the loader's maps are in the program's copy
        seized = EarlyTracer::seize(pid);
        if (!seized) {
            // Not traceable (Yama, a seccomp policy): tracked before it may run, as without the overlap.
            log::debug("ebpf: PTRACE_SEIZE refused ({}): the program waits for the load", std::strerror(errno));
            loader.join();
            if (loader.failed()) {
                ::kill(pid, SIGKILL);  // it has not exec'd: nothing ran
                return;
            }
            loader.program().track(pid);
        }
        if (context_->before_release) context_->before_release(pid);
    };
    const int64_t launched_ns = os::monotonic_ns();
    os::Launched launched = os::launch(spec);
    root_pid_ = launched.pid;
    recorder.root_started(root_pid_);
    forwarder_->set_root(root_pid_);
    if (!seized) {
        const os::LaunchReport report = os::read_launch_report(launched.report_fd);
        if (report.exec_errno != 0 || loader.failed()) {
            ::waitpid(root_pid_, nullptr, 0);
            program_ = loader.take();  // throws the load's error first
            os::throw_launch_error(context_->argv.at(0), report.exec_errno);
        }
        program_ = loader.take();
        program_->on_record([this](const mrss_record& r, size_t bytes) { handle(r, bytes); });
        return;
    }
    EarlyTracer early(root_pid_, context_->signals, *forwarder_);
    EarlyTracer::Outcome outcome{};
    try {
        outcome = early.run([&loader] { return loader.done(); }, [this] { on_root_exec(); });
        // Read once it has exec'd or ended (a stop before its exec would hold the pipe open).
        const os::LaunchReport report = os::read_launch_report(launched.report_fd);
        if (report.exec_errno != 0) {
            if (outcome != EarlyTracer::Outcome::Ended) ::waitpid(root_pid_, nullptr, __WALL);
            outcome = EarlyTracer::Outcome::Ended;  // reaped: not to be killed or waited for again
            loader.join();
            os::throw_launch_error(context_->argv.at(0), report.exec_errno);
        }
        if (outcome == EarlyTracer::Outcome::Stopped && loader.failed()) {
            // The kernel refused what it was given after the program had started: it is
            // stopped at a held call or at its exit, and ends here (a refusal for want of root or BTF
            // comes before anything runs).
            end_traced_root(root_pid_);
            outcome = EarlyTracer::Outcome::Ended;  // reaped: not to be killed again
        }
        program_ = loader.take();
    } catch (...) {
        if (outcome != EarlyTracer::Outcome::Ended) end_traced_root(root_pid_);  // not yet reaped
        throw;
    }
    program_->on_record([this](const mrss_record& r, size_t bytes) { handle(r, bytes); });
    if (outcome == EarlyTracer::Outcome::Ended) {
        root_ended_unadopted(early.ended());
        return;
    }
    adopt_root(early, launched_ns);
}

void EbpfBackend::adopt_root(EarlyTracer& early, int64_t launched_ns) {
    try {
        program_->adopt(root_pid_);
    } catch (...) {
        end_traced_root(root_pid_);
        root_reaped_ = true;
        throw;
    }
    log::debug("ebpf: the program adopted at {}, {:.1f} ms after its launch", early.held_at(),
               static_cast<double>(os::monotonic_ns() - launched_ns) / 1e6);
    early.settle_signals([this](const os::ReceivedSignal& sig) { return program_->root_got(sig.signo, sig.sender); });
    early.detach();
}

// Its first exec, while it is still under ptrace: what the exec record would say.
void EbpfBackend::on_root_exec() {
    probe_.stage_status(procfs::read_status(root_pid_));
    probe_.stage_program(Program{procfs::read_cmdline(root_pid_), procfs::read_exe(root_pid_)});
    context_->recorder.exec_done(root_pid_, 0);
}

// Killed (SIGKILL: no exit stop) before the kernel side was in place: its
// image's figures are those of its exec; said.
void EbpfBackend::root_ended_unadopted(const os::WaitResult& w) {
    Recorder& recorder = context_->recorder;
    recorder.warn(Warning{Warning::Kind::Unmeasured, root_pid_, 0, 0, 0, {}});
    reap_root(w);
}

}  // namespace max_rss::ebpf
