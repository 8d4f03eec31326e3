// Builds a vector of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
#include <cstdint>
#include <iostream>
#include <numeric>
#include <vector>

int main() {
    constexpr int64_t n = 1'000'000;
    std::vector<int64_t> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(i * i % 1000);
    // Keeps the optimizer from fusing the loops and dropping the vector.
    asm volatile("" : : "r"(values.data()) : "memory");
    std::cout << std::accumulate(values.begin(), values.end(), int64_t{0}) << '\n';
}
