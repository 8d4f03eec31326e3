/* What one release-point stop costs, by mechanism, measured side by side.
 *
 * usage: stop_cost [STOPS] [ROUNDS]      (defaults: 20000, 5)
 *
 * A child calls getppid() STOPS times; a seccomp filter picks that call out
 * as the tracer's would pick munmap/madvise/brk. Three ways, in alternation,
 * ROUNDS times each; at every stop the supervisor reads /proc/PID/statm, as
 * max_rss does at a release point:
 *   none      no filter: the child's own time
 *   ptrace    SECCOMP_RET_TRACE: a ptrace seccomp stop, wait4 + PTRACE_CONT
 *             (what the ptrace backend does today)
 *   notif     SECCOMP_RET_USER_NOTIF: the task waits in the kernel; the
 *             supervisor receives, reads, answers "continue"
 *   notif+sync  the same with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux >= 6.6):
 *             the kernel switches straight to the waiting side
 * Prints the median microseconds per stop (time minus the "none" run's, over
 * STOPS) and each mechanism's ratio to ptrace's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

enum mode { NONE, PTRACE, NOTIF, NOTIF_SYNC, MODES };
static const char *const names[MODES] = {"none", "ptrace", "notif", "notif+sync"};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what) {
    fprintf(stderr, "stop_cost: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int install_filter(unsigned int action, unsigned int flags) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS");
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void read_statm(pid_t pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/statm", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    if (read(fd, buf, sizeof buf) < 0) buf[0] = 0;
    close(fd);
}

static void child_loop(long stops) {
    for (long i = 0; i < stops; ++i) syscall(SYS_getppid);
    _exit(0);
}

/* One run of a mode: seconds from fork to reaping the child. */
static double run(enum mode m, long stops) {
    int sv[2];
    if (m == NOTIF || m == NOTIF_SYNC) {
        if (pipe(sv) != 0) die("pipe");
    }
    const double start = now_s();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        if (m == PTRACE) {
            raise(SIGSTOP);  /* wait until seized */
            if (install_filter(SECCOMP_RET_TRACE, 0) != 0) _exit(2);
        } else if (m == NOTIF || m == NOTIF_SYNC) {
            int fd = install_filter(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
            if (fd < 0) _exit(3);
            /* The supervisor takes the listener with pidfd_getfd; say which fd. */
            if (write(sv[1], &fd, sizeof fd) != sizeof fd) _exit(4);
            close(sv[1]);
        }
        child_loop(stops);
    }
    int status = 0;
    long seen = 0;
    if (m == NONE) {
        waitpid(pid, &status, 0);
    } else if (m == PTRACE) {
        waitpid(pid, &status, WUNTRACED);
        if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL) != 0) die("PTRACE_SEIZE");
        kill(pid, SIGCONT);
        for (;;) {
            if (waitpid(pid, &status, __WALL) < 0) die("waitpid");
            if (WIFEXITED(status) || WIFSIGNALED(status)) break;
            int sig = 0;
            if (WIFSTOPPED(status)) {
                if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8))) {
                    read_statm(pid);
                    seen++;
                } else if (WSTOPSIG(status) != SIGCONT && WSTOPSIG(status) != SIGSTOP) {
                    sig = WSTOPSIG(status);
                }
            }
            ptrace(PTRACE_CONT, pid, 0, sig);
        }
    } else {
        close(sv[1]);
        int child_fd = -1;
        if (read(sv[0], &child_fd, sizeof child_fd) != sizeof child_fd) die("listener fd");
        close(sv[0]);
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, child_fd, 0);
        if (fd < 0) die("pidfd_getfd");
        if (m == NOTIF_SYNC && ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 0) != 0)
            die("SECCOMP_IOCTL_NOTIF_SET_FLAGS");
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        for (;;) {
            memset(&req, 0, sizeof req);
            if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
                if (errno == EINTR) continue;
                break; /* ENOENT or the filter gone: the child exited */
            }
            read_statm(pid);
            seen++;
            memset(&resp, 0, sizeof resp);
            resp.id = req.id;
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno != ENOENT) die("NOTIF_SEND");
            if (seen == stops) break;
        }
        waitpid(pid, &status, 0);
        close(fd);
        close(pidfd);
    }
    const double took = now_s() - start;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "stop_cost: %s: the child failed (status %#x)\n", names[m], status);
        exit(1);
    }
    if (m != NONE && seen != stops) {
        fprintf(stderr, "stop_cost: %s: %ld stops seen of %ld\n", names[m], seen, stops);
        exit(1);
    }
    return took;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const long stops = argc > 1 ? atol(argv[1]) : 20000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (stops <= 0 || rounds <= 0 || rounds > 100) {
        fprintf(stderr, "usage: stop_cost [STOPS] [ROUNDS]\n");
        return 2;
    }
    double t[MODES][100];
    for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < MODES; ++m) t[m][r] = run((enum mode)m, stops);
    double med[MODES];
    for (int m = 0; m < MODES; ++m) {
        qsort(t[m], (size_t)rounds, sizeof(double), cmp);
        med[m] = t[m][rounds / 2];
    }
    const double ptrace_us = (med[PTRACE] - med[NONE]) / (double)stops * 1e6;
    printf("%ld stops, median of %d alternating rounds\n", stops, rounds);
    printf("%-11s %10s %12s %10s\n", "mechanism", "total ms", "us per stop", "vs ptrace");
    for (int m = 0; m < MODES; ++m) {
        const double us = (med[m] - med[NONE]) / (double)stops * 1e6;
        if (m == NONE)
            printf("%-11s %10.1f %12s %10s\n", names[m], med[m] * 1e3, "-", "-");
        else
            printf("%-11s %10.1f %12.2f %9.2fx\n", names[m], med[m] * 1e3, us, us / ptrace_us);
    }
    return 0;
}
