// `max_rss bench`'s command line: its options, and the plan they make,
// checked in full before anything runs (cli/bench_command.cpp runs it).
#pragma once

#include <max_rss/bench/model.hpp>
#include <max_rss/bench/runner.hpp>
#include <max_rss/model.hpp>
#include <max_rss/os/export_target.hpp>
#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/report/report_reader.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace max_rss::cli {

// The options as given.
struct BenchArgs {
    std::vector<std::string> commands;
    unsigned runs = 5;
    unsigned min_runs = 10;
    unsigned max_runs = 1000000;
    unsigned warmup = 0;
    std::vector<std::string> names;
    std::vector<std::string> prepare;
    std::vector<std::string> setup;
    std::vector<std::string> cleanup;
    std::vector<std::string> parameter_scan;   // NAME MIN MAX
    std::string parameter_step;
    std::vector<std::string> parameter_lists;  // NAME VALUES, NAME VALUES, ...
    std::string reference;
    std::string sort = "auto";
    std::string shell = "/bin/sh";
    bool no_shell = false;
    bool ignore_failure = false;
    bool show_output = false;
    std::string style = "auto";
    std::string export_json;
    std::string export_markdown;
    std::string export_csv;
    std::string export_asciidoc;
    std::string export_github_benchmark;
    std::string export_bencher;
    std::vector<std::string> budget;
    std::string backend = "ptrace";
    std::string save_baseline;
    std::string compare_baseline;
};

// One export, opened (checked) at plan time.
struct Export {
    ExportFormat format;
    ExportTarget target;
    const char* option;      // "--export-json", for messages
    std::string last_error;  // the last failure printed, so a rewrite that fails alike is not said again
    // --save-baseline: written once, at the end, and only when the benchmark
    // passed (no failed command, no regression, nothing over --budget): a
    // good baseline is never replaced by a bad one.
    bool only_when_passed = false;
};

// Everything the loop needs, checked before anything runs.
struct Plan {
    std::vector<BenchCommand> commands;  // the --reference first, then COMMANDs with parameters expanded
    BenchSettings settings;
    std::vector<Export> exports;  // --save-baseline's file among them (as JSON)
    OutputStyle style;
    bool show_output = false;
    BackendKind backend = BackendKind::Ptrace;
    BenchSort sort = BenchSort::Auto;
    // --compare-baseline: the baseline's entries, read at plan time, and its name.
    std::optional<std::vector<MeasuredPeak>> baseline;
    std::string baseline_name;
};

// Registers bench's options on the subcommand, into args.
void add_bench_options(CLI::App& bench, BenchArgs& args);

// Checks everything and makes the plan. Throws UsageError (exit 2: nothing
// ran), or LaunchError (127: a program not found, with -N or for a helper).
Plan make_plan(CLI::App& app, CLI::App& bench, BenchArgs& args,
               const std::optional<std::vector<std::string>>& after_dashdash);

}  // namespace max_rss::cli
