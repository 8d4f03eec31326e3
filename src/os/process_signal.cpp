#include <max_rss/os/process_signal.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace max_rss::os {

bool signal_if(pid_t pid, int sig, const std::function<bool()>& still_ours) {
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) {
        if (errno != ENOSYS) return false;  // gone (ESRCH), or not a process's leader
        return still_ours() && ::kill(pid, sig) == 0;
    }
    const bool sent = still_ours() && ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
    ::close(fd);
    return sent;
}

}  // namespace max_rss::os
