// Reading max_rss's own reports back (a run report or a bench export), as
// `compare` does: bounded in what it reads and keeps, strict in what it
// accepts.
#pragma once

#include <max_rss/util/text.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// A report could not be read or is not a max_rss report. what() is one line
// that starts with the report's source (its path): "BASE.json: ...".
struct ReportError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One command's peak, as a report gives it.
struct MeasuredPeak {
    std::string command;  // a shell command line
    std::string name;     // the bench display name; empty when none
    uint64_t peak_bytes = 0;
    // Runs that were sampled, not traced (ptrace unavailable): their peaks
    // may be low. A run report is one run; a bench export says how many.
    size_t degraded_runs = 0;
    // Runs whose command failed (exit code not 0, or killed by a signal):
    // their peak is that of a program that did not do its work.
    size_t failed_runs = 0;
    size_t runs = 1;
    // Each run's tree peak (a bench export's "memory_usage_byte", schema 2),
    // for compare's significance test; empty when the report has none (a run
    // report, or a schema 1 export).
    std::vector<double> run_peaks_bytes;
    // The backend that measured it ("ptrace", "ebpf", "sample"): a run
    // report's "backend", a bench export's "provenance.backend"; empty when
    // the report does not say.
    std::string backend;
};

// A run report's command is named by shell_join() (util/text.hpp), so that
// `max_rss -- sleep 1` and `max_rss bench 'sleep 1'` name the same command.

// What compare reads of a report at most. A max_rss report is nested 6 deep;
// a run of 10,000 processes writes 8 MB; its longest string is an argv word
// (128 KiB at most, 171 KiB in base64), and no more than a few bytes pass
// between the starts of two strings or numbers; compare keeps a few values
// of it (the
// processes, the timeline and the fields of bench runs are skipped as they
// are read). Beyond these limits a report is refused, not read on, so that
// neither time nor memory depends on what the file holds (a pipe of endless
// input, /dev/zero, 50 MB of "[").
inline constexpr uint64_t kMaxReportBytes = 256ULL << 20;
inline constexpr int kMaxReportDepth = 64;
inline constexpr uint64_t kMaxReportTokenBytes = 1ULL << 20;  // without a string or number starting
inline constexpr uint64_t kMaxReportValues = 1'000'000;      // values kept

// Normalizes a parsed report; source names it in error messages.
//  - "kind": "run": one entry: shell_join("command") and "peak"."tree_bytes".
//  - "kind": "bench": one entry per "results"[i]: "command", "name" (string or
//    null/absent) and "peak_bytes"."median" (rounded to a whole byte).
//  "schema_version" must be a version this max_rss reads (1 for run
//  reports; 1 or 2 for bench exports, whose "memory_usage_byte" array, when
//  present, gives run_peaks_bytes).
//  degraded_runs: a run report's "degraded" (true: 1 of 1), a bench result's
//  "degraded_runs" (of the size of its "runs").
//  Texts are read with get_text()/get_texts(): the exact bytes of
//  "command_base64" and "name_base64" when there. A
//    "schema_version" above 1 is refused.
// Throws ReportError, e.g.
//   BASE.json: not a max_rss report (not a JSON object)
//   BASE.json: not a max_rss report (no "kind")
//   BASE.json: not a max_rss report ("kind" is not a string)
//   BASE.json: unknown report kind "foo" (expected "run" or "bench")
//   BASE.json: not a max_rss report (no "schema_version")
//   BASE.json: run report has an unknown schema_version "1" (this max_rss reads 1)
//   BASE.json: run report schema_version 2 is newer than this max_rss supports (1)
//   BASE.json: run report has no "command" array of strings
//   BASE.json: run report has no "peak.tree_bytes" byte count
//   BASE.json: bench report has no "results" array
//   BASE.json: results[1] has no "command" string
//   BASE.json: results[1] has a "name" that is not a string
//   BASE.json: results[1] has no "peak_bytes.median" byte count
std::vector<MeasuredPeak> read_measurements(const nlohmann::json& report, std::string_view source);

// Parses text as JSON, then read_measurements(). Throws ReportError:
//   BASE.json: not valid JSON: parse error at line 1, column 2: ...
//   BASE.json: not a max_rss report (nested more than 64 levels deep)
//   BASE.json: not a max_rss report (more than 1000000 values)
//   BASE.json: not a max_rss report (larger than 256 MiB)
std::vector<MeasuredPeak> parse_report(std::string_view text, std::string_view source);

// Reads the file at path ("-": stdin) as it parses it, so no more than
// kMaxReportBytes are ever read and what compare does not need is never
// kept; errors as parse_report() with path as the source, and
//   PATH: cannot read: <strerror>
//   PATH: not a max_rss report (more than 1 MiB without a string or number)
std::vector<MeasuredPeak> load_report(const std::string& path);

}  // namespace max_rss
