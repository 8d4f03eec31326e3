#include <max_rss/os/process_signal.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace max_rss::os {
namespace {

class PidFd {
public:
    explicit PidFd(pid_t pid) : fd_(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))) {}
    ~PidFd() {
        if (fd_ >= 0) ::close(fd_);
    }
    PidFd(const PidFd&) = delete;
    PidFd& operator=(const PidFd&) = delete;
    [[nodiscard]] int get() const { return fd_; }

private:
    int fd_;
};

}  // namespace

bool signal_if(pid_t pid, int sig, const std::function<bool()>& still_ours) {
    const PidFd pinned(pid);
    if (pinned.get() < 0) {
        // ESRCH: gone. EINVAL: the pid is a thread's now, and the tree's
        // processes are known by their leaders'. Anything else (no pidfds
        // before Linux 5.3, a seccomp policy that forbids them, no free
        // descriptor): check, then kill, rather than leave the process running.
        if (errno == ESRCH || errno == EINVAL) return false;
        return still_ours() && ::kill(pid, sig) == 0;
    }
    return still_ours() && ::syscall(SYS_pidfd_send_signal, pinned.get(), sig, nullptr, 0) == 0;
}

}  // namespace max_rss::os
