// `max_rss bench [OPTIONS] COMMAND...`: measure each command's peak over
// several runs, hyperfine-style, print a summary and export the results.
#include <max_rss/bench/executor.hpp>
#include <max_rss/bench/provenance.hpp>
#include <max_rss/bench/runner.hpp>
#include <max_rss/cli/bench_plan.hpp>
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/report/bench_console.hpp>
#include <max_rss/report/compare.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/report/labels.hpp>
#include <max_rss/report/words.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace max_rss::cli {
namespace {

// The human output, on stderr.
class Console {
public:
    explicit Console(OutputStyle style) : style_(style) {}
    ~Console() { clear_progress(); }
    Console(const Console&) = delete;
    Console& operator=(const Console&) = delete;

    void print(const std::string& text) {
        if (!style_.show || text.empty()) return;
        clear_progress();
        std::fputs(text.c_str(), stderr);
        std::fflush(stderr);
    }
    void progress(const BenchProgress& progress) {
        if (!style_.progress) return;
        std::fprintf(stderr, "\r\x1b[2K%s", format_progress_line(progress, style_.color).c_str());
        std::fflush(stderr);
        progress_shown_ = true;
    }
    void clear_progress() {
        if (!progress_shown_) return;
        std::fputs("\r\x1b[2K", stderr);
        std::fflush(stderr);
        progress_shown_ = false;
    }
    [[nodiscard]] bool color() const { return style_.color; }

private:
    OutputStyle style_;
    bool progress_shown_ = false;
};

// Writes every export (the final results, or, when !final, the results so
// far), each on its own: one that fails costs only itself, in one line on
// stderr, said again only when its reason changes. The baseline is written
// only as a final write of a benchmark that passed. Returns false when a
// final write failed.
bool write_exports(Plan& plan, const BenchReport& report, Console& console, bool final, bool passed) {
    bool all_written = true;
    for (Export& output : plan.exports) {
        if (output.only_when_passed && !(final && passed)) continue;
        try {
            const std::string bytes = export_results(output.format, report);
            if (final) {
                output.target.write(bytes);
            } else {
                output.target.write_intermediate(bytes);
            }
            output.last_error.clear();
        } catch (const std::exception& e) {
            if (final) all_written = false;
            std::string line = fmt::format("max_rss: bench: {}: {}\n", output.option, e.what());
            if (line == output.last_error) continue;
            console.clear_progress();
            std::fputs(line.c_str(), stderr);
            output.last_error = std::move(line);
        }
    }
    return all_written;
}

// One line when --save-baseline was asked for and the benchmark did not pass.
void say_baseline_not_saved(const Plan& plan) {
    for (const Export& output : plan.exports)
        if (output.only_when_passed)
            std::fprintf(stderr, "max_rss: bench: --save-baseline: not saved, the benchmark did not pass (the "
                                 "saved baseline is unchanged)\n");
}

// --compare-baseline: the results against the saved baseline, read back
// through the JSON export so that both sides are read alike. The table goes
// to stderr (stdout is the exports'). True when the gate failed.
bool compare_with_baseline(const Plan& plan, const BenchReport& report) {
    const std::vector<MeasuredPeak> now = parse_report(export_json(report), "this bench");
    const CompareResult result = compare_reports(*plan.baseline, now, CompareSettings{});
    std::fprintf(stderr, "\nAgainst baseline '%s':\n%s", plan.baseline_name.c_str(),
                 format_compare_table(result).c_str());
    return result.failed;
}

Provenance provenance_of(const Plan& plan) {
    Provenance provenance = machine_provenance();
    provenance.runs = plan.settings.runs;
    provenance.min_runs = plan.settings.runs != 0 ? plan.settings.runs : plan.settings.min_runs;
    provenance.max_runs = plan.settings.runs != 0 ? plan.settings.runs : plan.settings.max_runs;
    provenance.warmup = plan.settings.warmup;
    provenance.backend = backend_name(plan.backend);
    return provenance;
}

int run_bench(Plan& plan) {
    Console console(plan.style);
    TracingExecutor executor(plan.show_output, plan.backend);
    BenchReport report;
    report.provenance = provenance_of(plan);
    report.sort = plan.sort;
    for (size_t i = 0; i < plan.commands.size(); ++i) {
        const BenchCommand& command = plan.commands[i];
        BenchResult header;
        header.command = command.command;
        header.name = command.name;
        console.print(format_bench_header(i + 1, header, console.color()));
        BenchOutcome outcome;
        try {
            outcome = run_benchmark(command, plan.settings, executor,
                                    [&console](const BenchProgress& progress) { console.progress(progress); });
        } catch (const BenchAborted& e) {
            console.clear_progress();
            std::fprintf(stderr, "max_rss: bench: %s\n", one_line(e.what()).c_str());  // it may quote a command
            // What finished is not lost: stdout, a FIFO or a device gets its
            // one write now (files have it already).
            if (!report.results.empty()) write_exports(plan, report, console, true, false);
            say_baseline_not_saved(plan);
            return e.exit_code;
        }
        console.clear_progress();
        console.print(format_bench_statistics(outcome.result, console.color()) +
                      format_bench_warnings(outcome.result, outcome.failed_runs) + "\n");
        report.results.push_back(std::move(outcome.result));
        write_exports(plan, report, console, false, false);
    }
    console.print(format_bench_summary(report.results, plan.sort, console.color()));
    const std::string violations = format_budget_violations(report.results);
    std::fputs(violations.c_str(), stderr);
    const bool regression = plan.baseline && compare_with_baseline(plan, report);
    const bool passed = violations.empty() && !regression;
    const bool output_lost = !write_exports(plan, report, console, true, passed);
    if (!passed) say_baseline_not_saved(plan);
    // A command's failure has returned already; then 3, then 1, then 4.
    if (!violations.empty()) return exit_code::over_budget;
    if (regression) return exit_code::regression;
    return exit_code::combine(exit_code::ok, false, output_lost);
}

}  // namespace

Action add_bench_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash) {
    auto args = std::make_shared<BenchArgs>();
    CLI::App* bench = app.add_subcommand(
        "bench",
        "Measure commands' peak memory over several runs, like hyperfine");
    // Subcommands inherit the run mode's "everything after the first word is the program".
    bench->prefix_command(false);
    bench->footer(
        "Each run of a COMMAND is traced like `max_rss -- COMMAND`; the figures are the tree peak\n"
        "(mean ± σ, min … max, median in exports) beside wait4's ru_maxrss, and the wall time.\n"
        "\n"
        "Output: the human summary and any progress bar go to stderr, so stdout carries only the\n"
        "exports given as '-'. The COMMANDs read /dev/null and their output is discarded unless\n"
        "--show-output. A progress bar and colours appear when stderr is a terminal (--style).\n"
        "\n"
        "Exit status: 0 success; 1 a regression against --compare-baseline; 2 usage error or an\n"
        "export file that cannot be created (nothing was run); 3 a median peak over --budget;\n"
        "4 an export could not be written (the others were; 3 and 1 win); a COMMAND's own exit\n"
        "code when it failed and -i was not given (128+N for signal N), or that of a failing\n"
        "--setup, --prepare or --cleanup; 127 a COMMAND not found; 125 max_rss failed.\n"
        "\n"
        "Example (-c keeps the input, so every run has one):\n"
        "  max_rss bench -r 10 -N 'gzip -9 -c /bin/bash' 'xz -9 -c /bin/bash' --export-json mem.json");
    add_bench_options(*bench, *args);

    return [args, &app, bench, &after_dashdash]() -> int {
        std::optional<Plan> plan;
        try {
            plan.emplace(make_plan(app, *bench, *args, after_dashdash));
        } catch (const UsageError& e) {
            return report_usage_error("bench", e.what(), e.show_help);
        }
        return run_bench(*plan);
    };
}

}  // namespace max_rss::cli
