// The one clock of a run: CLOCK_MONOTONIC, in nanoseconds.
#pragma once

#include <cstdint>
#include <ctime>

namespace max_rss::os {

inline int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace max_rss::os
