/* touch_big [MIB]   (default 4096)
 * Overhead-benchmark load: mmaps MIB MiB private anonymous memory, disables
 * THP on it, writes one byte per 4 KiB page, exits. No output; exit 0 (1 on error). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    size_t len = mib << 20;
    if (len == 0)
        return 0;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE) != 0)
        return 1;
    volatile char *v = p;
    for (size_t off = 0; off < len; off += 4096)
        v[off] = 1;
    return 0;
}
