#include <max_rss/export.hpp>

#include <ostream>
#include <streambuf>

#include <max_rss/json_text.hpp>
#include <max_rss/stats.hpp>
#include <max_rss/utf8.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace max_rss {
namespace {

constexpr double bytes_per_mib = 1024.0 * 1024.0;

nlohmann::ordered_json summary_json(const Summary& summary) {
    nlohmann::ordered_json json;
    json["mean"] = summary.mean;
    json["stddev"] = summary.stddev;
    json["median"] = summary.median;
    json["min"] = summary.min;
    json["max"] = summary.max;
    return json;
}

// text as a GFM table cell holding one code span. Markdown is for reading:
// bytes that are not UTF-8 become U+FFFD.
std::string markdown_code_cell(std::string_view raw) {
    const std::string text = to_valid_utf8(raw);
    std::string content;
    size_t longest_backtick_run = 0;
    size_t run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest_backtick_run = std::max(longest_backtick_run, run);
        // A table row is one line; a command's line breaks cannot survive it.
        content += (c == '\n' || c == '\r') ? ' ' : c;
    }
    if (content.empty()) return {};
    // CommonMark strips one space from each end of a code span when both ends
    // have one, and a backtick at either end would merge with the fence.
    if (content.front() == '`' || content.back() == '`' ||
        (content.front() == ' ' && content.back() == ' ')) {
        content = ' ' + content + ' ';
    }
    const std::string fence(longest_backtick_run + 1, '`');
    std::string cell = fence;
    for (char c : content) {
        // GFM splits cells on '|' even inside code spans unless it is escaped.
        if (c == '|') cell += '\\';
        cell += c;
    }
    return cell + fence;
}

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos &&
        (text.empty() || (text.front() != ' ' && text.back() != ' '))) {
        return std::string(text);
    }
    std::string field = "\"";
    for (char c : text) {
        if (c == '"') field += '"';
        field += c;
    }
    return field + '"';
}

std::string mib(double bytes) { return fmt::format("{:.1f}", bytes / bytes_per_mib); }

[[noreturn]] void fail(std::string_view action, const std::string& path, int error) {
    throw std::runtime_error(fmt::format("cannot {} export file '{}': {}", action, path, std::strerror(error)));
}

}  // namespace

std::string export_json(std::span<const BenchResult> results) {
    nlohmann::ordered_json root;
    root["schema_version"] = 1;
    root["kind"] = "bench";
    root["results"] = nlohmann::ordered_json::array();
    for (const BenchResult& result : results) {
        nlohmann::ordered_json entry;
        put_text(entry, "command", result.command);
        if (result.name.empty()) {
            entry["name"] = nullptr;
        } else {
            put_text(entry, "name", result.name);
        }
        entry["runs"] = nlohmann::ordered_json::array();
        for (const BenchRun& run : result.runs) {
            nlohmann::ordered_json run_json;
            run_json["peak_bytes"] = run.peak_bytes;
            run_json["ru_maxrss_bytes"] =
                run.ru_maxrss_bytes ? nlohmann::ordered_json(*run.ru_maxrss_bytes) : nlohmann::ordered_json();
            run_json["exit_code"] = run.exit_code;
            run_json["wall_seconds"] = run.wall_seconds;
            entry["runs"].push_back(std::move(run_json));
        }
        entry["peak_bytes"] = summary_json(summarize_peak_bytes(result));
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        entry["ru_maxrss_bytes"] = ru_maxrss ? summary_json(*ru_maxrss) : nlohmann::ordered_json();
        root["results"].push_back(std::move(entry));
    }
    return root.dump(2) + "\n";
}

std::string export_markdown(std::span<const BenchResult> results) {
    const auto [peaks, reference] = summarize_peaks(results);

    std::string out =
        "| Command | Peak mean ± σ [MiB] | Median [MiB] | Min [MiB] | Max [MiB] | ru_maxrss median [MiB] | Relative |\n"
        "|:---|---:|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < results.size(); ++i) {
        const Summary& peak = peaks[i];
        const auto ru_maxrss = summarize_ru_maxrss_bytes(results[i]);
        std::string relative = "1.00";
        if (i != reference) {
            const auto r = ratio(peak, peaks[reference]);
            relative = r ? fmt::format("{:.2f} ± {:.2f}", r->value, r->stddev) : "n/a";
        }
        out += fmt::format("| {} | {} ± {} | {} | {} | {} | {} | {} |\n", markdown_code_cell(display_name(results[i])),
                           mib(peak.mean), mib(peak.stddev), mib(peak.median), mib(peak.min), mib(peak.max),
                           ru_maxrss ? mib(ru_maxrss->median) : "n/a", relative);
    }
    return out;
}

std::string export_csv(std::span<const BenchResult> results) {
    std::string out = "command,mean_bytes,stddev_bytes,median_bytes,min_bytes,max_bytes,ru_maxrss_median_bytes,runs\n";
    for (const BenchResult& result : results) {
        const Summary peak = summarize_peak_bytes(result);
        const auto ru_maxrss = summarize_ru_maxrss_bytes(result);
        out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(result.command), peak.mean, peak.stddev,
                           peak.median, peak.min, peak.max, ru_maxrss ? fmt::format("{}", ru_maxrss->median) : "",
                           result.runs.size());
    }
    return out;
}

std::string export_results(ExportFormat format, std::span<const BenchResult> results) {
    switch (format) {
        case ExportFormat::Json: return export_json(results);
        case ExportFormat::Markdown: return export_markdown(results);
        case ExportFormat::Csv: return export_csv(results);
    }
    throw std::logic_error("export_results: unknown ExportFormat");
}

ExportTarget::ExportTarget(std::string path) : path_(std::move(path)) {
    if (is_stdout()) return;
    if (path_.empty()) fail("create", path_, ENOENT);
    // rename(2) would fail on a directory only at the first write; say so now.
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail("create", path_, EISDIR);
    open_temp_file();
}

ExportTarget::ExportTarget(ExportTarget&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      temp_fd_(std::exchange(other.temp_fd_, -1)),
      temp_serial_(other.temp_serial_) {}

ExportTarget& ExportTarget::operator=(ExportTarget&& other) noexcept {
    if (this != &other) {
        discard_temp_file();
        path_ = std::move(other.path_);
        temp_path_ = std::move(other.temp_path_);
        temp_fd_ = std::exchange(other.temp_fd_, -1);
        temp_serial_ = other.temp_serial_;
    }
    return *this;
}

ExportTarget::~ExportTarget() { discard_temp_file(); }

void ExportTarget::open_temp_file() {
    // Beside the target, so rename(2) stays on one file system. O_EXCL with a
    // pid and serial in the name instead of mkstemp, so the mode is 0666 minus
    // the umask like any new file.
    const size_t slash = path_.rfind('/');
    const std::string directory = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
    for (;;) {
        std::string candidate = fmt::format("{}.{}.max_rss-{}-{}.tmp", directory, base, ::getpid(), temp_serial_++);
        const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            temp_fd_ = fd;
            temp_path_ = std::move(candidate);
            return;
        }
        if (errno != EEXIST) fail("create", path_, errno);
    }
}

void ExportTarget::discard_temp_file() {
    if (temp_fd_ < 0) return;
    ::close(temp_fd_);
    ::unlink(temp_path_.c_str());
    temp_fd_ = -1;
}

namespace {
// A minimal output buffer over a file descriptor, so large exports are written
// in 16 KiB pieces instead of being built whole in memory first (a bigger
// buffer is only more of max_rss's own memory, on its stack).
class FdBuf : public std::streambuf {
public:
    explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
    int error() const { return error_; }

protected:
    int_type overflow(int_type ch) override {
        if (!flush_buffer()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return flush_buffer() ? 0 : -1; }

private:
    bool flush_buffer() {
        const char* p = pbase();
        while (p < pptr()) {
            const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
            if (n < 0) {
                if (errno == EINTR) continue;
                error_ = errno;
                return false;
            }
            p += n;
        }
        setp(buf_, buf_ + sizeof buf_);
        return true;
    }
    int fd_;
    int error_ = 0;
    char buf_[16384];
};
}  // namespace

void ExportTarget::write(std::string_view bytes) {
    write_stream([bytes](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

void ExportTarget::write_stream(const std::function<void(std::ostream&)>& produce) {
    if (is_stdout()) {
        std::fflush(stdout);
        FdBuf buf(STDOUT_FILENO);
        std::ostream out(&buf);
        produce(out);
        out.flush();
        if (buf.error() != 0)
            throw std::runtime_error(fmt::format("cannot write export to stdout: {}", std::strerror(buf.error())));
        return;
    }
    if (temp_fd_ < 0) open_temp_file();
    int error = 0;
    {
        FdBuf buf(temp_fd_);
        std::ostream out(&buf);
        produce(out);
        out.flush();
        error = buf.error();
    }
    if (error != 0) {
        discard_temp_file();
        fail("write", path_, error);
    }
    const int fd = std::exchange(temp_fd_, -1);
    // close() reports delayed write errors (NFS, quotas): check it before the rename.
    if (::close(fd) != 0 || ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        error = errno;
        ::unlink(temp_path_.c_str());
        fail("write", path_, error);
    }
}

void ExportTarget::write_intermediate(std::string_view bytes) {
    if (!is_stdout()) write(bytes);
}

}  // namespace max_rss
