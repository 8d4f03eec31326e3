// The words for the engine's typed results: what the report, the summary and
// the log lines say about a warning, a degraded run or the peak's method.
#pragma once

#include <max_rss/model.hpp>

#include <string>

namespace max_rss {

// One line, e.g. "pid 12: no stop could be measured".
std::string describe(const Warning& warning);

// The --backend choices that measure a program without ptrace, for advice:
// "--backend sample" (a backend added later that avoids ptrace joins it).
std::string backends_without_ptrace();

// Why PTRACE_SEIZE failed with seize_errno, for a user.
std::string describe_ptrace_refusal(int seize_errno);

// What a degraded run's figures are, and why (the report's degraded_reason).
std::string describe(const Degradation& degradation);

// "snapshots", "overlapping-image-peaks", "degraded-sampling".
const char* peak_method_name(PeakMethod method);
const char* inexact_reason_name(InexactReason reason);
// Why the tree peak is a bound, in words ("" when it is exact).
std::string describe_inexact(InexactReason reason, BackendKind backend);

// "ptrace", "sample", "ebpf": as --backend takes them.
const char* backend_name(BackendKind kind);

}  // namespace max_rss
