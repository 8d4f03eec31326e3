// The one clock of a run: CLOCK_MONOTONIC, in nanoseconds. And the calling
// thread's CPU time, for what max_rss's own work costs.
#pragma once

#include <cstdint>
#include <ctime>

namespace max_rss::os {

inline int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in nanoseconds:
// what its own work costs, which other load on the machine does not inflate.
inline int64_t thread_cpu_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace max_rss::os
