// Exporters turn bench results into bytes (os/export_target.hpp puts bytes
// in a file, or on stdout). Markdown, CSV and JSON share one model: BenchResult.
#pragma once

#include <max_rss/bench/model.hpp>

#include <span>
#include <string>
#include <string_view>

namespace max_rss {

enum class ExportFormat { Json, Markdown, Csv };

// JSON, schema version 1, keys in this order, two-space indent, final newline:
//   {"schema_version": 1, "kind": "bench", "results": [{
//      "command": "...", "name": "..." or null,  (put_text(): valid UTF-8, plus
//                                                 "command_base64"/"name_base64" when not)
//      "runs": [{"peak_bytes": N, "ru_maxrss_bytes": N or null,
//                "exit_code": N, "wall_seconds": X, "degraded": bool}, ...],
//      "peak_bytes": {"mean": X, "stddev": X, "median": X, "min": X, "max": X},
//      "ru_maxrss_bytes": {the same over the runs that have one} or null,
//      "degraded_runs": N, "warnings": ["...", ...]}, ...]}
// Summary statistics are always JSON floating-point numbers, in bytes.
std::string export_json(std::span<const BenchResult> results);

// A GitHub-flavoured Markdown table, one row per result, sizes in MiB with one
// decimal:
//   | Command | Peak mean ± σ [MiB] | Median [MiB] | Min [MiB] | Max [MiB] | ru_maxrss median [MiB] | Relative |
// The command cell is display_name() as a code span (fenced with more
// backticks than it contains, '|' escaped as "\|", line breaks as spaces,
// bytes that are not UTF-8 as U+FFFD).
// "ru_maxrss median" is "n/a" when no run has it. Relative is the mean peak
// over the smallest mean peak: "1.00" for that row, "1.93 ± 0.05" for others
// (see ratio() in stats.hpp), "n/a" when the smallest mean peak is 0.
// When a result has degraded runs or warnings, a list follows the table:
//   "\nWarnings:\n\n- `NAME`: 2 of 5 runs degraded (...)\n- `NAME`: <warning>\n"
std::string export_markdown(std::span<const BenchResult> results);

// CSV (RFC 4180 quoting, "\n" line ends): a header, then one row per result:
//   command,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs,
//   degraded_runs,warnings
// command is the command (not the name), its bytes exactly as given (CSV is
// bytes, not necessarily UTF-8); ru_maxrss_median_bytes is empty when
// no run has it. Numbers are the shortest text that reads back exactly
// ("104857600", "1536.5"). warnings are the result's, one per line of the field.
std::string export_csv(std::span<const BenchResult> results);

// The exporter for format.
std::string export_results(ExportFormat format, std::span<const BenchResult> results);

}  // namespace max_rss
