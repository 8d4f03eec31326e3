/* fork_exec_loop [N [PROG]]   (defaults 1000, /bin/true)
 * Overhead-benchmark load: N times fork(); the child execv(PROG); waitpid.
 * No output; exit 0 (1 on error, e.g. a child that did not exit 0). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    char *prog = argc > 2 ? argv[2] : "/bin/true";
    char *cargv[] = {prog, NULL};
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            execv(prog, cargv);
            _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    }
    return 0;
}
