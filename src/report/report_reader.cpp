#include <max_rss/report/report_reader.hpp>

#include <max_rss/os/standard_fds.hpp>
#include <max_rss/report/json_text.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace max_rss {
namespace {


// The newest schema_version of each kind this max_rss reads.
constexpr uint64_t supported_run_schema_version = 1;
constexpr uint64_t supported_bench_schema_version = 2;

[[noreturn]] void fail(std::string_view source, std::string_view message) {
    throw ReportError(fmt::format("{}: {}", source, message));
}

// A JSON number as whole bytes: non-negative, finite, below 2^63 (8 EiB,
// more than any machine holds): compare's differences are signed 64-bit, and
// a larger figure wrapped, its regression read as an improvement.
std::optional<uint64_t> byte_count(const nlohmann::json& value) {
    constexpr uint64_t kMaxBytes = uint64_t{1} << 63;
    if (value.is_number_unsigned()) {
        const auto bytes = value.get<uint64_t>();
        if (bytes >= kMaxBytes) return std::nullopt;
        return bytes;
    }
    if (value.is_number_integer()) {
        const auto integer = value.get<int64_t>();
        if (integer < 0) return std::nullopt;
        return static_cast<uint64_t>(integer);
    }
    if (value.is_number_float()) {
        const double number = std::round(value.get<double>());
        // 2^63 itself is exactly representable; anything from it up is refused.
        if (!std::isfinite(number) || number < 0 || number >= static_cast<double>(kMaxBytes)) return std::nullopt;
        return static_cast<uint64_t>(number);
    }
    return std::nullopt;
}

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

MeasuredPeak read_run_report(const nlohmann::json& report, std::string_view source) {
    // The exact bytes (command_base64) when the command was not UTF-8.
    const auto command = get_texts(report, "command");
    if (!command || command->empty()) fail(source, "run report has no \"command\" array of strings");
    const nlohmann::json* peak = member(report, "peak");
    const nlohmann::json* tree_bytes = peak == nullptr ? nullptr : member(*peak, "tree_bytes");
    const auto bytes = tree_bytes == nullptr ? std::nullopt : byte_count(*tree_bytes);
    if (!bytes) fail(source, "run report has no \"peak.tree_bytes\" byte count");

    MeasuredPeak measured;
    measured.command = shell_join(*command);
    measured.peak_bytes = *bytes;
    if (const auto backend = get_text(report, "backend")) measured.backend = *backend;
    const nlohmann::json* degraded = member(report, "degraded");
    measured.degraded_runs = degraded != nullptr && degraded->is_boolean() && degraded->get<bool>() ? 1 : 0;
    if (const nlohmann::json* exit = member(report, "exit"); exit != nullptr && exit->is_object()) {
        const nlohmann::json* code = member(*exit, "code");
        const nlohmann::json* signal = member(*exit, "signal");
        const bool failed_code = code != nullptr && code->is_number_integer() && code->get<int64_t>() != 0;
        const bool killed = signal != nullptr && signal->is_number_integer();
        measured.failed_runs = failed_code || killed ? 1 : 0;
    }
    return measured;
}

std::vector<MeasuredPeak> read_bench_report(const nlohmann::json& report, std::string_view source) {
    const nlohmann::json* results = member(report, "results");
    if (results == nullptr || !results->is_array()) fail(source, "bench report has no \"results\" array");

    std::string backend;
    const nlohmann::json* provenance = member(report, "provenance");
    if (provenance != nullptr && provenance->is_object()) {
        if (const auto name = get_text(*provenance, "backend")) backend = *name;
    }
    std::vector<MeasuredPeak> measured;
    for (size_t i = 0; i < results->size(); ++i) {
        const nlohmann::json& result = (*results)[i];
        const auto command = get_text(result, "command");
        if (!command) fail(source, fmt::format("results[{}] has no \"command\" string", i));
        const nlohmann::json* name = member(result, "name");
        if (name != nullptr && !name->is_null() && !name->is_string()) {
            fail(source, fmt::format("results[{}] has a \"name\" that is not a string", i));
        }
        const nlohmann::json* peak = member(result, "peak_bytes");
        const nlohmann::json* median = peak == nullptr ? nullptr : member(*peak, "median");
        const auto bytes = median == nullptr ? std::nullopt : byte_count(*median);
        if (!bytes) fail(source, fmt::format("results[{}] has no \"peak_bytes.median\" byte count", i));

        MeasuredPeak entry;
        entry.command = *command;
        entry.backend = backend;
        if (name != nullptr && name->is_string()) entry.name = *get_text(result, "name");
        entry.peak_bytes = *bytes;
        // Exports from before degraded_runs had no degraded runs to count.
        const nlohmann::json* runs = member(result, "runs");
        entry.runs = runs != nullptr && runs->is_array() ? runs->size() : 0;
        if (const nlohmann::json* count = member(result, "degraded_runs")) {
            entry.degraded_runs = byte_count(*count).value_or(0);
        }
        if (const nlohmann::json* codes = member(result, "exit_codes"); codes != nullptr && codes->is_array()) {
            for (const nlohmann::json& code : *codes)
                entry.failed_runs += code.is_number_integer() && code.get<int64_t>() != 0 ? 1 : 0;
        }
        if (const nlohmann::json* peaks = member(result, "memory_usage_byte")) {
            if (!peaks->is_array()) fail(source, fmt::format("results[{}] has a \"memory_usage_byte\" that is not an array", i));
            for (const nlohmann::json& value : *peaks) {
                const auto peak_bytes = byte_count(value);
                if (!peak_bytes) {
                    fail(source, fmt::format("results[{}] has a \"memory_usage_byte\" entry that is not a byte count", i));
                }
                entry.run_peaks_bytes.push_back(static_cast<double>(*peak_bytes));
            }
        }
        measured.push_back(std::move(entry));
    }
    return measured;
}

}  // namespace

std::vector<MeasuredPeak> read_measurements(const nlohmann::json& report, std::string_view source) {
    if (!report.is_object()) fail(source, "not a max_rss report (not a JSON object)");
    const nlohmann::json* kind = member(report, "kind");
    if (kind == nullptr) fail(source, "not a max_rss report (no \"kind\")");
    if (!kind->is_string()) fail(source, "not a max_rss report (\"kind\" is not a string)");
    const auto& kind_name = kind->get_ref<const std::string&>();
    if (kind_name != "run" && kind_name != "bench") {
        fail(source, fmt::format("unknown report kind {} (expected \"run\" or \"bench\")", kind->dump()));
    }
    // A version this max_rss does not know may mean anything: refuse it.
    const nlohmann::json* version = member(report, "schema_version");
    if (version == nullptr) fail(source, "not a max_rss report (no \"schema_version\")");
    const uint64_t supported = kind_name == "run" ? supported_run_schema_version : supported_bench_schema_version;
    const std::string readable = supported == 1 ? "1" : fmt::format("1 to {}", supported);
    if (!version->is_number_integer() || version->get<int64_t>() < 1) {
        fail(source, fmt::format("{} report has an unknown schema_version {} (this max_rss reads {})", kind_name,
                                 version->dump(), readable));
    }
    if (const auto number = version->get<uint64_t>(); number > supported) {
        fail(source, fmt::format("{} report schema_version {} is newer than this max_rss supports ({})", kind_name,
                                 number, readable));
    }
    if (kind_name == "run") return {read_run_report(report, source)};
    return read_bench_report(report, source);
}

namespace {

// Reads fd through a buffer, refusing to go past max_bytes (what lets compare
// read a pipe or /dev/zero without reading all of it) or past
// kMaxReportTokenBytes without the start of a string or number: the JSON
// lexer keeps every byte since the last such start (white space, brackets,
// literals, the string or number itself) for its error messages.
class BoundedFdBuf : public std::streambuf {
public:
    BoundedFdBuf(int fd, uint64_t max_bytes) : fd_(fd), max_bytes_(max_bytes) {}
    [[nodiscard]] bool too_large() const { return too_large_; }
    [[nodiscard]] bool token_too_long() const { return token_too_long_; }
    [[nodiscard]] int error() const { return error_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        if (too_large_ || token_too_long_ || error_ != 0) return traits_type::eof();
        // One byte past the limit tells "exactly max_bytes" from "more".
        const auto wanted = static_cast<size_t>(std::min<uint64_t>(sizeof buffer_, max_bytes_ + 1 - total_));
        ssize_t got = 0;
        do {
            got = ::read(fd_, buffer_, wanted);
        } while (got < 0 && errno == EINTR);
        if (got < 0) {
            error_ = errno;
            return traits_type::eof();
        }
        if (got == 0) return traits_type::eof();
        total_ += static_cast<uint64_t>(got);
        if (total_ > max_bytes_) {
            too_large_ = true;
            return traits_type::eof();
        }
        if (!scan_tokens(std::string_view(buffer_, static_cast<size_t>(got)))) {
            token_too_long_ = true;
            return traits_type::eof();
        }
        setg(buffer_, buffer_, buffer_ + got);
        return traits_type::to_int_type(*gptr());
    }

private:
    // Follows the lexer: false once more than kMaxReportTokenBytes came since
    // a string or a number last started.
    bool scan_tokens(std::string_view bytes) {
        for (const char c : bytes) {
            if (in_string_) {
                if (escaped_) {
                    escaped_ = false;
                } else if (c == '\\') {
                    escaped_ = true;
                } else if (c == '"') {
                    in_string_ = false;
                }
            } else if (c == '"') {
                in_string_ = true;
                in_number_ = false;
                since_token_start_ = 0;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                if (!in_number_) since_token_start_ = 0;
                in_number_ = true;
            } else if (c != '.' && c != 'e' && c != 'E' && c != '+') {
                in_number_ = false;
            }
            if (++since_token_start_ > kMaxReportTokenBytes) return false;
        }
        return true;
    }

    int fd_;
    uint64_t max_bytes_;
    uint64_t total_ = 0;
    uint64_t since_token_start_ = 0;
    bool in_string_ = false;
    bool in_number_ = false;
    bool escaped_ = false;
    bool too_large_ = false;
    bool token_too_long_ = false;
    int error_ = 0;
    char buffer_[65536];
};

// Why the parse was cut short, thrown from the parser's callback.
struct TooDeep {};
struct TooManyValues {};

// What cut the input short (a parse error follows), when something did.
using CutShort = std::function<std::optional<std::string>()>;

// Decides, event by event, what the parser keeps: at most kMaxReportDepth
// deep and kMaxReportValues values, and nothing compare never reads (a run
// report's processes and timeline, most of its size; the fields of a bench
// export's runs, at depth 5). A skipped value must be refused at its start:
// the parser then creates nothing inside it and asks nothing more about it,
// so that a skipped part costs neither memory nor a count.
class KeepFilter {
public:
    bool operator()(int depth, nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        const bool starts = event == Event::object_start || event == Event::array_start;
        // Even skipped nesting costs the parser a pointer a level.
        if (starts && depth >= kMaxReportDepth) throw TooDeep{};
        if (skipping_at_ >= 0) {
            if (depth > skipping_at_) return false;  // inside what is skipped
            skipping_at_ = -1;                       // past it (its end is not reported)
        }
        if (event == Event::key) {
            skip_value_ = depth >= 5 || (depth == 1 && (parsed == "processes" || parsed == "timeline"));
            return !skip_value_;
        }
        if (std::exchange(skip_value_, false)) {
            if (starts) skipping_at_ = depth;
            return false;
        }
        if ((starts || event == Event::value) && ++values_ > kMaxReportValues) throw TooManyValues{};
        return true;
    }

private:
    int skipping_at_ = -1;  // the depth of the object or array being skipped
    bool skip_value_ = false;
    uint64_t values_ = 0;
};

// Parses input (text or a stream) as JSON through a KeepFilter. cut_short()
// names a limit of the input that ended it early.
template <typename Input>
nlohmann::json parse_bounded(Input&& input, std::string_view source, const CutShort& cut_short) {
    KeepFilter filter;
    const nlohmann::json::parser_callback_t keep = [&filter](int depth, nlohmann::json::parse_event_t event,
                                                             nlohmann::json& parsed) {
        return filter(depth, event, parsed);
    };
    try {
        nlohmann::json report = nlohmann::json::parse(std::forward<Input>(input), keep);
        if (auto why = cut_short()) fail(source, fmt::format("not a max_rss report ({})", *why));
        return report;
    } catch (const TooDeep&) {
        fail(source, fmt::format("not a max_rss report (nested more than {} levels deep)", kMaxReportDepth));
    } catch (const TooManyValues&) {
        fail(source, fmt::format("not a max_rss report (more than {} values)", kMaxReportValues));
    } catch (const nlohmann::json::parse_error& error) {
        if (auto why = cut_short()) fail(source, fmt::format("not a max_rss report ({})", *why));
        // what() is "[json.exception.parse_error.101] parse error at ...": keep the part for humans.
        std::string_view message = error.what();
        if (const size_t bracket = message.find("] "); message.starts_with("[json.exception.") &&
                                                        bracket != std::string_view::npos) {
            message.remove_prefix(bracket + 2);
        }
        fail(source, fmt::format("not valid JSON: {}", message));
    } catch (const nlohmann::json::out_of_range&) {
        // A number beyond a double (1e400): the library's message repeats
        // the whole number, which may be megabytes long.
        fail(source, "not a max_rss report (a number too large for a double)");
    }
}

std::string larger_than_limit() { return fmt::format("larger than {} MiB", kMaxReportBytes >> 20); }

}  // namespace

std::vector<MeasuredPeak> parse_report(std::string_view text, std::string_view source) {
    const bool too_large = text.size() > kMaxReportBytes;
    if (too_large) text = text.substr(0, kMaxReportBytes);
    const CutShort cut_short = [too_large]() -> std::optional<std::string> {
        if (too_large) return larger_than_limit();
        return std::nullopt;
    };
    return read_measurements(parse_bounded(text, source, cut_short), source);
}

std::vector<MeasuredPeak> load_report(const std::string& path) {
    // A stdin that was closed when max_rss started holds only a placeholder.
    if (path == "-" && standard_fd_was_closed(STDIN_FILENO)) fail(path, "cannot read: Bad file descriptor");
    const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, fmt::format("cannot read: {}", std::strerror(errno)));
    BoundedFdBuf buffer(fd, kMaxReportBytes);
    std::istream in(&buffer);
    nlohmann::json report;
    try {
        const CutShort cut_short = [&buffer]() -> std::optional<std::string> {
            if (buffer.too_large()) return larger_than_limit();
            if (buffer.token_too_long()) {
                return fmt::format("more than {} MiB without a string or number", kMaxReportTokenBytes >> 20);
            }
            return std::nullopt;
        };
        report = parse_bounded(in, path, cut_short);
    } catch (const ReportError&) {
        if (fd != STDIN_FILENO) ::close(fd);
        // A directory opens fine and fails on read (EISDIR): say that, not "not valid JSON".
        if (buffer.error() != 0) fail(path, fmt::format("cannot read: {}", std::strerror(buffer.error())));
        throw;
    }
    if (fd != STDIN_FILENO) ::close(fd);
    return read_measurements(report, path);
}

}  // namespace max_rss
