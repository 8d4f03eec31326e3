// Exporters turn bench results into bytes; ExportTarget puts those bytes in a
// file (or on stdout). Markdown, CSV and JSON share one model: BenchResult.
#pragma once

#include <max_rss/bench_model.hpp>

#include <functional>
#include <iosfwd>
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
//                "exit_code": N, "wall_seconds": X}, ...],
//      "peak_bytes": {"mean": X, "stddev": X, "median": X, "min": X, "max": X},
//      "ru_maxrss_bytes": {the same over the runs that have one} or null}, ...]}
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
std::string export_markdown(std::span<const BenchResult> results);

// CSV (RFC 4180 quoting, "\n" line ends): a header, then one row per result:
//   command,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs
// command is the command (not the name), its bytes exactly as given (CSV is
// bytes, not necessarily UTF-8); ru_maxrss_median_bytes is empty when
// no run has it. Numbers are the shortest text that reads back exactly
// ("104857600", "1536.5").
std::string export_csv(std::span<const BenchResult> results);

// The exporter for format.
std::string export_results(ExportFormat format, std::span<const BenchResult> results);

// Where an export goes: a file path, or "-" for stdout. Construct it at
// start-up, so a bad path fails before any work. Files are replaced atomically
// on every write (a temporary file in the same directory, then rename(2)), so
// readers never see half a file and a later failure loses nothing already
// written. A new file gets mode 0666 minus the umask; a symlink at path is
// replaced, not followed.
class ExportTarget {
public:
    // Checks that the file can be written by creating the temporary file for
    // the first write now. Throws std::runtime_error with one line:
    //   cannot create export file 'PATH': <strerror>
    explicit ExportTarget(std::string path);
    ExportTarget(ExportTarget&& other) noexcept;
    ExportTarget& operator=(ExportTarget&& other) noexcept;
    ExportTarget(const ExportTarget&) = delete;
    ExportTarget& operator=(const ExportTarget&) = delete;
    // Removes an unused temporary file.
    ~ExportTarget();

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] bool is_stdout() const { return path_ == "-"; }

    // Replaces the whole file with bytes; on stdout, prints bytes. Throws
    // std::runtime_error: cannot write export file 'PATH': <strerror>
    // (or: cannot write export to stdout: <strerror>)
    void write(std::string_view bytes);

    // Like write(), but produce writes the bytes to a stream that goes to the
    // file in pieces, so a large report is never whole in memory.
    void write_stream(const std::function<void(std::ostream&)>& produce);

    // The results so far, after each command: rewrites a file like write(),
    // does nothing for stdout (which gets only the final write()).
    void write_intermediate(std::string_view bytes);

private:
    void open_temp_file();   // sets temp_fd_ and temp_path_, or throws
    void discard_temp_file();

    std::string path_;
    std::string temp_path_;
    int temp_fd_ = -1;
    unsigned temp_serial_ = 0;
};

}  // namespace max_rss
