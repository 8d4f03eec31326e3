// A raw waitpid() status, classified: pure code, unit-tested on constructed values.
#pragma once

#include <max_rss/model.hpp>

#include <string>

namespace max_rss {

enum class StopKind {
    Exited,          // WIFEXITED: code()
    Killed,          // WIFSIGNALED: signal()
    SignalDelivery,  // a signal is about to be delivered: re-inject signal()
    GroupStop,       // PTRACE_EVENT_STOP with a stopping signal: answer with LISTEN
    EventStop,       // PTRACE_EVENT_STOP with SIGTRAP: new task, INTERRUPT, end of LISTEN
    Fork,            // PTRACE_EVENT_FORK
    Vfork,           // PTRACE_EVENT_VFORK
    Clone,           // PTRACE_EVENT_CLONE
    VforkDone,       // PTRACE_EVENT_VFORK_DONE
    Exec,            // PTRACE_EVENT_EXEC (after the new image is in place)
    Exit,            // PTRACE_EVENT_EXIT (before exit_mm: the mm is still readable)
    Seccomp,         // PTRACE_EVENT_SECCOMP (execve entry, from our filter)
    SyscallStop,     // SIGTRAP|0x80 (only while a task installs the release filter)
    Unknown,
};

class WaitStatus {
public:
    explicit WaitStatus(int raw) : raw_(raw) {}

    [[nodiscard]] StopKind kind() const;
    [[nodiscard]] int raw() const { return raw_; }
    // Exited: the exit code. Undefined otherwise.
    [[nodiscard]] int code() const;
    // Killed: the fatal signal. SignalDelivery/GroupStop/EventStop: the stop signal.
    [[nodiscard]] int signal() const;
    [[nodiscard]] bool core_dumped() const;
    // True for the kinds after which the task no longer exists.
    [[nodiscard]] bool is_terminal() const;
    // Exited or Killed: how it ended. Empty otherwise.
    [[nodiscard]] ExitStatus exit_status() const;

    [[nodiscard]] std::string describe() const;  // for debug logs

private:
    int raw_;
};

// True for SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU.
bool is_stopping_signal(int sig);

}  // namespace max_rss
