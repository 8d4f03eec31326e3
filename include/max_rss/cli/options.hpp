// What every command shares on the command line: the checks CLI11 runs on
// option values as it parses, and the one way a usage error is reported.
#pragma once

#include <max_rss/backends/backend.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss::cli {

// A mistake on the command line found after parsing (no COMMAND, two outputs
// to one file...): reported like CLI11's own errors, exit 2, nothing was run.
// show_help: the mistake is in the shape of the command line (an unknown
// option, a missing COMMAND), so the line points at --help; a bad value says
// itself what would do.
struct UsageError : std::runtime_error {
    explicit UsageError(const std::string& what, bool show_help_ = false)
        : std::runtime_error(what), show_help(show_help_) {}
    bool show_help;
};

// The one line every usage error becomes, on stderr:
//   "max_rss: [SUBCOMMAND: ]MESSAGE[ (see 'max_rss [SUBCOMMAND] --help')]"
// Returns exit code 2.
int report_usage_error(std::string_view subcommand, std::string_view message, bool show_help);

// Checks for option values. CLI11 reports a failure as "--OPTION: WHAT",
// which report_usage_error() then prints, e.g.
//   max_rss: --budget: '512' has no unit (try 512MiB, 1.5GiB, 300MB, 512Mi)
//   max_rss: --budget: 'lots' is not a size (try 512MiB, 1.5GiB, 300MB, 512Mi)
//   max_rss: --interval: '0.5' has no unit (try 20ms, 0.1s, 500us; 0 = only at exits)
//   max_rss: --interval: '10us' is below the 1ms minimum (...)
//   max_rss: compare: --threshold: 'lots' is not a percentage (try 5%, 0.5%)
//   max_rss: -o: empty path (use '-' for stdout)
CLI::Validator size_value();
CLI::Validator duration_value(int64_t minimum_ns);
CLI::Validator percent_value();
CLI::Validator path_value();
CLI::Validator count_value(unsigned minimum, unsigned maximum);
// "ptrace", "sample" or "ebpf" (backends/backend.hpp).
CLI::Validator backend_value();
// A probability strictly between 0 and 1 ("0.05"), for --significance.
CLI::Validator probability_value();
// A baseline name (bench/baseline.hpp): letters, digits, '.', '_', '-'.
CLI::Validator baseline_name_value();
// One of choices, for options such as --sort: "'x' is not one of a, b, c".
CLI::Validator choice_value(std::vector<std::string> choices);

// The shortest sampling interval: each snapshot reads every live process, and
// much shorter periods starve the tracer (1ns: 16 s to start /bin/true).
inline constexpr int64_t kMinIntervalNs = 1'000'000;

// A value that passed its check, as a number (throws UsageError otherwise).
uint64_t size_bytes(const std::string& text);
int64_t duration_ns(const std::string& text);
double percent_fraction(const std::string& text);
double probability(const std::string& text);
BackendKind backend_of(const std::string& name);

// `max_rss bnech` would run a program called bnech: when name is not a
// program in PATH and is within two edits of a subcommand, it is a usage
// error that says which one was meant.
void check_not_a_mistyped_subcommand(const std::string& name);

}  // namespace max_rss::cli
