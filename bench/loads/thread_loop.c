/* thread_loop [N]   (default 5000)
 * Overhead-benchmark load: N times pthread_create + pthread_join of a thread
 * that does nothing. No output; exit 0 (1 on error). */
#include <pthread.h>
#include <stdlib.h>

static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 5000;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    return 0;
}
