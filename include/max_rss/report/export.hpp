// Exporters turn a bench report into bytes (os/export_target.hpp puts bytes
// in a file, or on stdout). Every format is made from the same BenchReport
// and carries its provenance where the format has room for it.
#pragma once

#include <max_rss/bench/model.hpp>

#include <string>
#include <string_view>

namespace max_rss {

enum class ExportFormat { Json, Markdown, Csv, Asciidoc, GithubBenchmark, Bencher };

// The schema_version of bench's JSON export (docs/bench-schema.json).
inline constexpr int kBenchSchemaVersion = 2;

// JSON, a superset of hyperfine's (>= 1.20) export, keys in this order,
// two-space indent, final newline:
//   {"schema_version": 2, "kind": "bench",
//    "provenance": {"max_rss_version", "date", "kernel", "machine", "cpu_count",
//                   "runs" (null when left to --min-runs/--max-runs), "min_runs",
//                   "max_runs", "warmup", "backend"},
//    "results": [{
//      hyperfine's, over the runs, in seconds:
//      "command": "...", "mean": X, "stddev": X or null (one run), "median": X,
//      "user": X, "system": X (mean CPU seconds), "min": X, "max": X,
//      "times": [wall seconds per run], "memory_usage_byte": [tree peak per run],
//      "exit_codes": [N per run], "parameters": {"NAME": "value", ...},
//      max_rss's own:
//      "name": "..." or null, (texts by put_text(): valid UTF-8, plus
//                              "command_base64"/"name_base64" when not)
//      "reference": bool, "budget_bytes": N or null,
//      "runs": [{"peak_bytes": N, "ru_maxrss_bytes": N or null, "exit_code": N,
//                "wall_seconds": X, "user_seconds": X, "system_seconds": X,
//                "degraded": bool}, ...],
//      "peak_bytes": {"mean": X, "stddev": X, "median": X, "min": X, "max": X},
//      "ru_maxrss_bytes": {the same over the runs that have one} or null,
//      "degraded_runs": N, "warnings": ["...", ...]}, ...]}
// Results are in the order the commands were given.
std::string export_json(const BenchReport& report);

// A GitHub-flavoured Markdown table, one row per result (in --sort's table
// order), sizes in MiB with one decimal:
//   | Command | Peak mean ± σ [MiB] | Median [MiB] | Min [MiB] | Max [MiB] | ru_maxrss median [MiB] | Wall mean ± σ [s] | Relative |
// The command cell is display_name() as a code span (fenced with more
// backticks than it contains, '|' escaped as "\|", line breaks as spaces,
// bytes that are not UTF-8 as U+FFFD).
// "ru_maxrss median" is "n/a" when no run has it. Relative is the mean peak
// over the reference's (summarize_peaks()): "1.00" for it, "1.93 ± 0.05" for
// others (see ratio() in stats.hpp), "n/a" when the reference's mean peak is 0.
// A line of provenance follows the table ("\n_Measured with max_rss ...._\n"),
// then, when a result has degraded runs or warnings, a list:
//   "\nWarnings:\n\n- `NAME`: 2 of 5 runs degraded (...)\n- `NAME`: <warning>\n"
std::string export_markdown(const BenchReport& report);

// The same table in AsciiDoc (hyperfine's --export-asciidoc layout), each
// command as literal monospace (`+...+`, '|' escaped), then the provenance.
std::string export_asciidoc(const BenchReport& report);

// CSV (RFC 4180 quoting, "\n" line ends): a header, then one row per result:
//   command,name,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs,
//   degraded_runs,wall_mean_seconds,wall_stddev_seconds,wall_median_seconds,user_mean_seconds,
//   system_mean_seconds,parameter_<NAME>...,max_rss_version,date,kernel,machine,cpu_count,warmup,backend,warnings
// command is the command, name the --command-name (empty when none), their
// bytes exactly as given (CSV is bytes, not necessarily UTF-8);
// ru_maxrss_median_bytes is empty when no run has it. One parameter_<NAME>
// column per parameter any result has, in order of first appearance. Numbers
// are the shortest text that reads back exactly ("104857600", "1536.5").
// warnings are the result's, one per line of the field.
std::string export_csv(const BenchReport& report);

// github-action-benchmark's `customSmallerIsBetter` input: a JSON array with,
// per result, {"name": "NAME peak memory", "unit": "bytes", "value": median
// peak, "range": "± σ", "extra": "N runs, min … max; <provenance>"} and
// {"name": "NAME wall time", "unit": "s", ...} (the median wall time).
std::string export_github_benchmark(const BenchReport& report);

// Bencher Metric Format: {"NAME": {"peak-memory": {"value": median bytes,
// "lower_value": min, "upper_value": max}, "latency": {the wall time in
// nanoseconds, Bencher's unit for latency}}}. BMF has no place for anything
// but measures: the provenance is not in it (Bencher keeps its own testbed,
// branch and commit). Two results of one name keep the first.
std::string export_bencher(const BenchReport& report);

// The exporter for format.
std::string export_results(ExportFormat format, const BenchReport& report);

}  // namespace max_rss
