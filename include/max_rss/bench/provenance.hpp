// Where and how a benchmark ran (model.hpp's Provenance), read off this machine.
#pragma once

#include <max_rss/bench/model.hpp>

#include <ctime>
#include <string>

namespace max_rss {

// This max_rss's version, the time now, uname's kernel and machine, the
// online CPUs; runs, warmup and backend are the caller's to fill in.
Provenance machine_provenance();

// seconds since the epoch as ISO 8601 UTC, "2026-11-01T12:00:00Z".
std::string iso8601_utc(std::time_t seconds);

// One line for humans and for text fields of exports:
//   "max_rss 0.1.0, 2026-11-01T12:00:00Z, Linux 6.18.0 x86_64, 2 CPUs, 5 runs, 1 warmup, ptrace"
// ("10 to 100 runs" when the count was left to --min-runs/--max-runs).
std::string describe_provenance(const Provenance& provenance);

}  // namespace max_rss
