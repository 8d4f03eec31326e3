// `max_rss compare BASE NEW`: pairs the commands of two reports (read by
// report_reader.hpp) and judges each pair's change of peak. Pure.
#pragma once

#include <max_rss/report/report_reader.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// One line per entry of peaks with degraded runs, then one per entry with
// failed runs, for stderr (no line end):
//   "NEW.json: ./touch 50: 2 of 5 runs degraded (sampled, not traced): its peak may be low"
//   "NEW.json: ./touch 50: a degraded run (sampled, not traced): its peak may be low"
//   "NEW.json: ./x: 3 of 5 runs failed (exit code not 0): its peak is not that of a program that did its work"
// source names the report; entries are named by their label (name, else command).
std::vector<std::string> degraded_warnings(std::span<const MeasuredPeak> peaks, std::string_view source);

// A line for stderr (no line end) when the two reports name different
// backends, whose figures differ in method (docs/backends.md):
//   "BASE.json was measured with --backend ptrace, NEW.json with --backend ebpf: ..."
// nullopt when they agree, or when either report does not name one.
std::optional<std::string> backend_warning(std::span<const MeasuredPeak> base, std::string_view base_source,
                                           std::span<const MeasuredPeak> after, std::string_view after_source);

// What a change must be to count (compare's options).
struct CompareSettings {
    double threshold = 0.05;                 // relative change, a fraction (--threshold 5%)
    uint64_t min_change_bytes = 1ULL << 20;  // absolute change (--min-change 1MiB)
    double significance = 0.05;              // the test's level (--significance 0.05)
    bool allow_missing = false;              // --allow-missing
};

enum class Verdict {
    Unchanged,    // within the threshold or below the minimum change
    Regression,   // grew by more than both, significantly (or untestable)
    Improvement,  // shrank by more than both, significantly (or untestable)
    Noise,        // beyond both, but not significant given the runs' spread
};

// "unchanged", "regression", "improvement", "noise".
std::string_view verdict_name(Verdict verdict);

struct CompareRow {
    std::string label;         // the name when BASE has one, else BASE's command
    std::string base_command;  // the two commands differ when paired by name
    std::string new_command;
    uint64_t before_bytes = 0;
    uint64_t after_bytes = 0;
    int64_t delta_bytes = 0;  // after - before
    // (after - before) / before; 0 when both are 0, +infinity when only before is.
    double change = 0;
    size_t before_runs = 0;  // per-run peaks the test had from each side
    size_t after_runs = 0;
    // One-sided Mann-Whitney U p-value in the direction of the change;
    // nullopt when it could not be tested (fewer per-run peaks than can ever
    // reach the significance level): the thresholds alone decide.
    std::optional<double> p_value;
    Verdict verdict = Verdict::Unchanged;
};

struct CompareResult {
    std::vector<CompareRow> rows;           // in BASE's order
    std::vector<std::string> only_in_base;  // labels of unpaired entries, in order: missing from NEW
    std::vector<std::string> only_in_new;
    CompareSettings settings;  // what rows were judged by
    size_t regressions = 0;
    size_t improvements = 0;
    // The gate: a regression, or a benchmark missing from NEW without allow_missing.
    bool failed = false;
};

// Pairs base and after entries: first every equal command string (the first
// unpaired one, so repeated commands pair in order), then, among what is left,
// every equal non-empty name. Then judges each pair: a change counts when
// |change| > threshold, |delta| >= min_change_bytes, and, when both sides
// have per-run peaks enough for the test to reach the significance level,
// the one-sided Mann-Whitney U test gives p <= significance.
CompareResult compare_reports(std::span<const MeasuredPeak> base, std::span<const MeasuredPeak> after,
                              const CompareSettings& settings);

// An aligned table for humans, then a verdict and the unpaired commands:
//   Command          Before    After    Change       Δ        p
//   sleep 1         1.0 MiB  3.1 MiB   +210.0%  +2.1 MiB   0.004  regression
//   true              512 B    512 B     +0.0%     +0 B    1.000
//   python3 big.py  1.5 MiB  1.0 MiB    -33.3%  -0.5 MiB       -  improvement
//
//   1 regression, 1 improvement (change above 5% and at least 1.0 MiB, p <= 0.05).
//   Missing from NEW: ./old
//   Only in NEW: ./new
// Labels are padded by code points, sizes are format_bytes(), a change from 0
// is "+inf%", an untested p is "-". The verdict line reads "No regression
// (...)." when there is none; the table and its blank line are left out when
// no command pairs. With allow_missing, "Missing from NEW (allowed): ...".
std::string format_compare_table(const CompareResult& result);

// The same for a pull-request comment, GitHub-flavoured Markdown:
//   ### max_rss: peak memory
//   | Benchmark | Before | After | Δ | Change | p | |
//   |:---|---:|---:|---:|---:|---:|:---|
//   | `sleep 1` | 1.0 MiB | 3.1 MiB | +2,202,009 B | +210.0% | 0.004 | 🔴 regression |
//   | `big` | 1.5 MiB | 1.0 MiB | -524,288 B | -33.3% | - | 🟢 improvement |
//   **1 regression**, 1 improvement ... then the missing and new benchmarks.
std::string format_compare_markdown(const CompareResult& result);

// The same as JSON ({"schema_version": 1, "kind": "compare", "settings":
// {...}, "rows": [...], "missing": [...], "only_in_new": [...],
// "regressions": N, "improvements": N, "failed": bool}), two-space indent.
std::string format_compare_json(const CompareResult& result);

// The settings as a sentence fragment: "change above 5% and at least 1.0 MiB, p <= 0.05".
std::string describe_compare_settings(const CompareSettings& settings);

// Cells shared by the formats: "+9.9%" ("+inf%"), "+10.0 MiB" / "-512 B",
// "0.004" or "-" (untested), and the verdict sentence:
//   "1 regression, 0 improvements (change above 5% and at least 1.0 MiB, p <= 0.05)."
//   "No regression (change above ...)." [+ " 1 change within the runs' spread (not significant)."]
std::string format_change(double change);
std::string format_delta_bytes(int64_t delta);
std::string format_p_value(const std::optional<double>& p);
std::string format_compare_verdict(const CompareResult& result);

}  // namespace max_rss
