/* fault_cost [MIB]   (default 512)
 * Per-fault benchmark load: prints on stdout the mean wall time of one
 * first-touch page fault, in ns, measured inside the program over MIB MiB
 * of private anonymous memory (THP off). The pages are touched and dropped
 * (MADV_DONTNEED) once before the timed pass, so that the timed faults get
 * guest pages the host already backs: on a VM, a guest page's first touch
 * since the host reclaimed it costs a host fault too, and that varies by
 * +-40% from run to run, far more than a tracer's cost per fault. Startup,
 * loading and reporting are outside the timed pass. Exit 1 on error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 512;
    size_t len = mib << 20, pages = len / 4096;
    if (pages == 0)
        return 1;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE) != 0)
        return 1;
    volatile char *v = p;
    for (size_t off = 0; off < len; off += 4096)
        v[off] = 1;
    if (madvise(p, len, MADV_DONTNEED) != 0)
        return 1;
    const double start = now_ns();
    for (size_t off = 0; off < len; off += 4096)
        v[off] = 1;
    const double end = now_ns();
    printf("%.1f\n", (end - start) / (double)pages);
    return 0;
}
