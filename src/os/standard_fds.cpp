#include <max_rss/os/standard_fds.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <unistd.h>

namespace max_rss {
namespace {

std::atomic<unsigned> g_closed_at_start{0};  // bit fd set: fd was closed

void ignore_signal(int) {}

}  // namespace

void guard_standard_fds() {
    unsigned closed = 0;
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        // open() returns the lowest free number: this one, since the lower ones
        // are open by now.
        const int placeholder = ::open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (placeholder != fd) {
            // Another thread took it, or /dev/null is missing: nothing better to do.
            if (placeholder >= 0) ::close(placeholder);
            continue;
        }
        closed |= 1U << fd;
    }
    g_closed_at_start.store(closed);
}

bool standard_fd_was_closed(int fd) {
    return fd >= 0 && fd <= 2 && (g_closed_at_start.load() >> fd & 1U) != 0;
}

void catch_sigpipe() {
    struct sigaction previous {};
    if (::sigaction(SIGPIPE, nullptr, &previous) != 0 || previous.sa_handler == SIG_IGN) return;
    struct sigaction sa {};
    sa.sa_handler = ignore_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGPIPE, &sa, nullptr);
}

}  // namespace max_rss
