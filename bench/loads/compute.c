/* compute [ITERS]
 * Overhead-benchmark load: a pure CPU loop with no syscalls (a serial chain of
 * 64-bit multiply/xorshift steps that the compiler cannot shorten). The default
 * ITERS is calibrated to about 1 s on a modern x86-64 CPU. No output; the result
 * is stored to a volatile and folded into the exit code (always 0 unless the
 * final value happens to be 0, which does not occur for the default). */
#include <stdint.h>
#include <stdlib.h>

#define DEFAULT_ITERS 470000000ULL

volatile uint64_t sink;

int main(int argc, char **argv) {
    uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : DEFAULT_ITERS;
    uint64_t x = 0x9E3779B97F4A7C15ULL ^ iters;
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x *= 0x2545F4914F6CDD1DULL;
    }
    sink = x;
    return sink == 0;
}
