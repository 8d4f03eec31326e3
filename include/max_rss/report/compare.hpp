// `max_rss compare BASE NEW`: reads two reports (a single-run report or a
// bench export), pairs their commands and flags peaks that grew beyond a
// threshold. Everything but load_report() is pure.
#pragma once

#include <max_rss/util/text.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <span>
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
    size_t runs = 1;
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
//  "schema_version" must be a version this max_rss reads (1).
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

// One line per entry of peaks with degraded runs, for stderr (no line end):
//   "NEW.json: ./touch 50: 2 of 5 runs degraded (sampled, not traced): its peak may be low"
//   "NEW.json: ./touch 50: a degraded run (sampled, not traced): its peak may be low"
// source names the report; entries are named by their label (name, else command).
std::vector<std::string> degraded_warnings(std::span<const MeasuredPeak> peaks, std::string_view source);

struct CompareRow {
    std::string label;         // the name when BASE has one, else BASE's command
    std::string base_command;  // the two commands differ when paired by name
    std::string new_command;
    uint64_t before_bytes = 0;
    uint64_t after_bytes = 0;
    // (after - before) / before; 0 when both are 0, +infinity when only before is.
    double change = 0;
    bool regression = false;  // change > threshold
};

struct CompareResult {
    std::vector<CompareRow> rows;           // in BASE's order
    std::vector<std::string> only_in_base;  // labels of unpaired entries, in order
    std::vector<std::string> only_in_new;
    double threshold = 0;  // the fraction rows were judged by
    bool any_regression = false;
};

// Pairs base and after entries: first every equal command string (the first
// unpaired one, so repeated commands pair in order), then, among what is left,
// every equal non-empty name. threshold is a fraction (0.05 for 5%).
CompareResult compare_reports(std::span<const MeasuredPeak> base, std::span<const MeasuredPeak> after,
                              double threshold);

// An aligned table for humans, then a verdict and the unpaired commands:
//   Command          Before    After  Change
//   sleep 1         1.0 MiB  1.1 MiB  +10.0%  regression
//   true              512 B    512 B   +0.0%
//   python3 big.py  1.5 MiB  1.0 MiB  -33.3%
//
//   1 regression above +5%.
//   Only in BASE: ./old
//   Only in NEW: ./new
// Labels are padded by code points, sizes are format_bytes(), a change from 0
// is "+inf%". The verdict reads "No regression above +5%." when there is none;
// the table and its blank line are left out when no command pairs.
std::string format_compare_table(const CompareResult& result);

}  // namespace max_rss
