/* fork_loop [N]   (default 2000)
 * Overhead-benchmark load: N times fork(); the child _exit(0)s; waitpid.
 * No output; exit 0 (1 on error). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0)
            _exit(0);
        int st;
        if (waitpid(pid, &st, 0) != pid)
            return 1;
    }
    return 0;
}
