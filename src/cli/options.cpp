#include <max_rss/cli/options.hpp>

#include <max_rss/bench/baseline.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/launch.hpp>
#include <max_rss/util/duration.hpp>
#include <max_rss/util/size.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <vector>

namespace max_rss::cli {
namespace {

constexpr std::string_view kSizeForms = "try 512MiB, 1.5GiB, 300MB, 512Mi";
constexpr std::string_view kDurationForms = "try 20ms, 0.1s, 500us; 0 = only at exits";

bool ends_in_digit(std::string_view text) {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return !text.empty() && text.back() >= '0' && text.back() <= '9';
}

// Why text is not a size, or empty when it is one.
std::string size_problem(const std::string& text) {
    if (!parse_size(text)) return fmt::format("'{}' is not a size ({})", text, kSizeForms);
    if (ends_in_digit(text)) return fmt::format("'{}' has no unit ({})", text, kSizeForms);
    return {};
}

std::string duration_problem(const std::string& text, int64_t minimum_ns) {
    const auto ns = parse_duration_ns(text);
    if (!ns) {
        if (ends_in_digit(text) && parse_duration_ns(text + "ms"))
            return fmt::format("'{}' has no unit ({})", text, kDurationForms);
        return fmt::format("'{}' is not a duration ({})", text, kDurationForms);
    }
    if (*ns != 0 && *ns < minimum_ns)
        return fmt::format("'{}' is below the minimum (try {} or more, or 0 = only at exits)", text,
                           format_duration_ns(minimum_ns));
    return {};
}

}  // namespace

int report_usage_error(std::string_view subcommand, std::string_view message, bool show_help) {
    std::string line = "max_rss: ";
    if (!subcommand.empty()) line += fmt::format("{}: ", subcommand);
    // CLI11's own words, in the style of the rest.
    for (std::string_view prefix : {"The following argument was not expected: ",
                                    "The following arguments were not expected: "}) {
        if (message.substr(0, prefix.size()) == prefix) {
            const std::string_view extra = message.substr(prefix.size());
            line += fmt::format("{} '{}'", extra.substr(0, 1) == "-" ? "unknown option" : "unexpected argument",
                                extra);
            message = {};
        }
    }
    // "--output: At Most 1 required but received 2", "--backend: 1 required
    // TEXT:NAME missing": what CLI11 says of an option given twice or without
    // its value.
    if (const size_t colon = message.find(": "); colon != std::string_view::npos && message.substr(0, 1) == "-") {
        const std::string_view option = message.substr(0, colon), said = message.substr(colon + 2);
        constexpr std::string_view twice = "At Most 1 required but received ", needs = "1 required ", missing = " missing";
        if (said.substr(0, twice.size()) == twice) {
            line += fmt::format("{}: given {} times (give it once)", option, said.substr(twice.size()));
            message = {};
        } else if (said.substr(0, needs.size()) == needs && said.size() > needs.size() + missing.size() &&
                   said.substr(said.size() - missing.size()) == missing) {
            const std::string_view type = said.substr(needs.size(), said.size() - needs.size() - missing.size());
            const size_t name = type.find(':');
            line += name == std::string_view::npos ? fmt::format("{}: a value is missing", option)
                                                   : fmt::format("{}: its {} is missing", option, type.substr(name + 1));
            message = {};
        }
    }
    line += message;
    if (show_help)
        line += fmt::format(" (see 'max_rss{}{} --help')", subcommand.empty() ? "" : " ", subcommand);
    std::fprintf(stderr, "%s\n", line.c_str());
    return exit_code::usage;
}

CLI::Validator size_value() {
    return CLI::Validator([](std::string& text) { return size_problem(text); }, "SIZE", "size");
}

CLI::Validator duration_value(int64_t minimum_ns) {
    return CLI::Validator([minimum_ns](std::string& text) { return duration_problem(text, minimum_ns); }, "DURATION",
                          "duration");
}

CLI::Validator percent_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (parse_percent(text)) return {};
            return fmt::format("'{}' is not a percentage (try 5%, 0.5%)", text);
        },
        "PCT", "percentage");
}

CLI::Validator count_value(unsigned minimum, unsigned maximum) {
    return CLI::Validator(
        [minimum, maximum](std::string& text) -> std::string {
            unsigned value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (error == std::errc{} && end == text.data() + text.size() && value >= minimum && value <= maximum)
                return {};
            return fmt::format("'{}' is not a whole number from {} to {}", text, minimum, maximum);
        },
        "N", "count");
}

CLI::Validator path_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string { return text.empty() ? "empty path (use '-' for stdout)" : ""; },
        "FILE", "path");
}

CLI::Validator backend_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (text == "ptrace" || text == "sample" || text == "ebpf") return {};
            return fmt::format("'{}' is not a backend (try ptrace, sample, ebpf)", text);
        },
        "NAME", "backend");
}

namespace {
std::string probability_problem(const std::string& text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !(value > 0 && value < 1))
        return fmt::format("'{}' is not a probability between 0 and 1 (try 0.05, 0.01)", text);
    return {};
}
}  // namespace

CLI::Validator probability_value() {
    return CLI::Validator([](std::string& text) { return probability_problem(text); }, "P", "probability");
}

double probability(const std::string& text) {
    if (const std::string problem = probability_problem(text); !problem.empty()) throw UsageError(problem);
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
}

CLI::Validator baseline_name_value() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            try {
                baseline_path(text);
            } catch (const std::invalid_argument& e) {
                return e.what();
            }
            return {};
        },
        "NAME", "baseline");
}

CLI::Validator choice_value(std::vector<std::string> choices) {
    return CLI::Validator(
        [choices](std::string& text) -> std::string {
            if (std::find(choices.begin(), choices.end(), text) != choices.end()) return {};
            std::string all;
            for (const std::string& choice : choices) all += (all.empty() ? "" : ", ") + choice;
            return fmt::format("'{}' is not one of {}", text, all);
        },
        "WORD", "choice");
}

BackendKind backend_of(const std::string& name) {
    if (name == "ptrace") return BackendKind::Ptrace;
    if (name == "sample") return BackendKind::Sample;
    if (name == "ebpf") return BackendKind::Ebpf;
    throw UsageError(fmt::format("'{}' is not a backend (try ptrace, sample, ebpf)", name));
}

namespace {
// Levenshtein distance, for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}
}  // namespace

void check_not_a_mistyped_subcommand(const std::string& name) {
    if (name.find('/') != std::string::npos || os::find_in_path(name)) return;
    for (std::string_view subcommand : {"bench", "compare"}) {
        if (edit_distance(name, subcommand) <= 2)
            throw UsageError(fmt::format("'{}' is neither a program in PATH nor a subcommand: did you mean "
                                         "'max_rss {}'? (try 'max_rss -- ./{}' for a program of that name)",
                                         name, subcommand, name));
    }
}

uint64_t size_bytes(const std::string& text) {
    if (const std::string problem = size_problem(text); !problem.empty()) throw UsageError(problem);
    return *parse_size(text);
}

int64_t duration_ns(const std::string& text) {
    if (const std::string problem = duration_problem(text, 0); !problem.empty()) throw UsageError(problem);
    return *parse_duration_ns(text);
}

double percent_fraction(const std::string& text) {
    const auto fraction = parse_percent(text);
    if (!fraction) throw UsageError(fmt::format("'{}' is not a percentage (try 5%, 0.5%)", text));
    return *fraction;
}

}  // namespace max_rss::cli
