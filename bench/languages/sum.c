/* Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000000

int main(void) {
    int64_t *values = malloc(N * sizeof *values);
    if (!values) return 1;
    for (int64_t i = 0; i < N; ++i) values[i] = i * i % 1000;
    /* Keeps the optimizer from fusing the loops and dropping the array. */
    __asm__ volatile("" : : "r"(values) : "memory");
    int64_t sum = 0;
    for (int64_t i = 0; i < N; ++i) sum += values[i];
    printf("%lld\n", (long long)sum);
    free(values);
    return 0;
}
