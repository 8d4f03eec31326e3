#include <max_rss/util/text.hpp>
#include <max_rss/os/wait_status.hpp>

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>

namespace max_rss {

bool is_stopping_signal(int sig) {
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

StopKind WaitStatus::kind() const {
    if (WIFEXITED(raw_)) return StopKind::Exited;
    if (WIFSIGNALED(raw_)) return StopKind::Killed;
    if (!WIFSTOPPED(raw_)) return StopKind::Unknown;
    const int sig = WSTOPSIG(raw_);
    const int event = (raw_ >> 16) & 0xff;
    if (event == 0) {
        if (sig == (SIGTRAP | 0x80)) return StopKind::SyscallStop;
        return StopKind::SignalDelivery;
    }
    switch (event) {
        case PTRACE_EVENT_FORK: return StopKind::Fork;
        case PTRACE_EVENT_VFORK: return StopKind::Vfork;
        case PTRACE_EVENT_CLONE: return StopKind::Clone;
        case PTRACE_EVENT_VFORK_DONE: return StopKind::VforkDone;
        case PTRACE_EVENT_EXEC: return StopKind::Exec;
        case PTRACE_EVENT_EXIT: return StopKind::Exit;
        case PTRACE_EVENT_SECCOMP: return StopKind::Seccomp;
        case PTRACE_EVENT_STOP:
            return is_stopping_signal(sig) ? StopKind::GroupStop : StopKind::EventStop;
        default: return StopKind::Unknown;
    }
}

int WaitStatus::code() const { return WEXITSTATUS(raw_); }

int WaitStatus::signal() const {
    if (WIFSIGNALED(raw_)) return WTERMSIG(raw_);
    if (WIFSTOPPED(raw_)) return WSTOPSIG(raw_);
    return 0;
}

bool WaitStatus::core_dumped() const { return WIFSIGNALED(raw_) && WCOREDUMP(raw_); }

ExitStatus WaitStatus::exit_status() const {
    ExitStatus exit;
    if (WIFEXITED(raw_)) {
        exit.code = WEXITSTATUS(raw_);
    } else if (WIFSIGNALED(raw_)) {
        exit.signal = WTERMSIG(raw_);
        exit.core_dumped = WCOREDUMP(raw_);
    }
    return exit;
}

bool WaitStatus::is_terminal() const {
    auto k = kind();
    return k == StopKind::Exited || k == StopKind::Killed;
}

std::string WaitStatus::describe() const {
    switch (kind()) {
        case StopKind::Exited: return "exited " + std::to_string(code());
        case StopKind::Killed: return "killed by " + signal_name(signal());
        case StopKind::SignalDelivery: return "signal " + signal_name(signal());
        case StopKind::GroupStop: return "group-stop " + signal_name(signal());
        case StopKind::EventStop: return "event-stop " + signal_name(signal());
        case StopKind::Fork: return "fork";
        case StopKind::Vfork: return "vfork";
        case StopKind::Clone: return "clone";
        case StopKind::VforkDone: return "vfork-done";
        case StopKind::Exec: return "exec";
        case StopKind::Exit: return "exit";
        case StopKind::Seccomp: return "seccomp";
        case StopKind::SyscallStop: return "syscall";
        case StopKind::Unknown: break;
    }
    return "unknown status " + std::to_string(raw_);
}

}  // namespace max_rss
