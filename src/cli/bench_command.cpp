// `max_rss bench [OPTIONS] COMMAND...`: measure each command's peak over
// several runs, hyperfine-style, print a summary and export the results.
#include <max_rss/bench/executor.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/bench/runner.hpp>
#include <max_rss/report/bench_console.hpp>
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>

#include <CLI/CLI.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/export_target.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/os/launch.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/engine/measure.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

namespace max_rss::cli {
namespace {

struct BenchArgs {
    std::vector<std::string> commands;
    unsigned runs = 5;
    unsigned warmup = 0;
    std::vector<std::string> names;
    std::vector<std::string> prepare;
    std::string shell = "/bin/sh";
    bool no_shell = false;
    bool ignore_failure = false;
    bool show_output = false;
    std::string style = "auto";
    std::string export_json;
    std::string export_markdown;
    std::string export_csv;
    std::string budget;
    std::string backend = "ptrace";
};

struct Export {
    ExportFormat format;
    ExportTarget target;
    const char* option;      // "--export-json", for messages
    std::string last_error;  // the last failure printed, so a rewrite that fails alike is not said again
};

// Everything the loop needs, checked before anything runs.
struct Plan {
    std::vector<BenchCommand> commands;
    BenchSettings settings;
    std::vector<Export> exports;
    std::optional<uint64_t> budget;
    OutputStyle style;
    bool show_output = false;
    BackendKind backend = BackendKind::Ptrace;
};

// Checks that argv[0] can be found, so a typo fails before minutes of runs.
void check_found(const std::vector<std::string>& argv, std::string_view what) {
    if (!os::find_in_path(argv.at(0))) {
        throw LaunchError(fmt::format("bench: {}: {}: command not found", what, argv[0]), exit_code::not_found);
    }
}

Plan make_plan(CLI::App& app, CLI::App& bench, BenchArgs& args,
               const std::optional<std::vector<std::string>>& after_dashdash) {
    // main() splits off everything after "--", so `max_rss bench -- CMD...`
    // arrives as after_dashdash; options given before "bench" belong to the
    // run mode.
    if (app.get_subcommands().size() > 1) {
        throw UsageError("'bench' and 'compare' cannot be combined (a COMMAND named 'compare' needs a path, "
                         "e.g. './compare')");
    }
    for (const CLI::Option* option : app.get_options()) {
        if (option->count() > 0) {
            throw UsageError(fmt::format("{} is an option of the run mode; give bench's options after 'bench'",
                                         option->get_name()));
        }
    }
    if (after_dashdash) args.commands.insert(args.commands.end(), after_dashdash->begin(), after_dashdash->end());

    Plan plan;
    if (args.commands.empty()) throw UsageError("no COMMAND given", true);
    if (args.names.size() > args.commands.size()) {
        throw UsageError(fmt::format("{} --command-name for {} COMMAND{}", args.names.size(),
                                     args.commands.size(), args.commands.size() == 1 ? "" : "s"));
    }
    if (args.prepare.size() > 1 && args.prepare.size() != args.commands.size()) {
        throw UsageError(fmt::format("give --prepare once, or once per COMMAND ({}), not {} times",
                                     args.commands.size(), args.prepare.size()));
    }
    if (args.no_shell && bench.get_option("--shell")->count() > 0) {
        throw UsageError("-N is --shell=none; give one of them");
    }
    std::optional<std::string> shell;
    if (!args.no_shell && args.shell != "none") {
        if (args.shell.empty()) throw UsageError("--shell: empty (use --shell=none or -N for no shell)");
        shell = args.shell;
    }
    const auto style = parse_bench_style(args.style);
    if (!style) {
        throw UsageError(
            fmt::format("--style: '{}' is not one of auto, basic, full, nocolor, color, none", args.style));
    }
    if (bench.get_option("--budget")->count() > 0) plan.budget = size_bytes(args.budget);

    const auto argv_of = [&](const std::string& command, std::string_view what) {
        std::vector<std::string> argv;
        try {
            argv = command_argv(command, shell);
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("{} '{}': {}", what, command, e.what()));
        }
        if (argv.empty()) throw UsageError(fmt::format("{} '{}' has no words to run", what, command));
        return argv;
    };
    for (size_t i = 0; i < args.commands.size(); ++i) {
        BenchCommand command;
        command.command = args.commands[i];
        if (i < args.names.size()) command.name = args.names[i];
        if (command.command.empty()) throw UsageError(fmt::format("COMMAND {} is empty", i + 1));
        command.argv = argv_of(command.command, "COMMAND");
        if (!args.prepare.empty()) {
            command.prepare = args.prepare.size() == 1 ? args.prepare[0] : args.prepare[i];
            command.prepare_argv = argv_of(command.prepare, "--prepare command");
        }
        plan.commands.push_back(std::move(command));
    }
    plan.backend = backend_of(args.backend);
    plan.settings.runs = args.runs;
    plan.settings.warmup = args.warmup;
    plan.settings.ignore_failure = args.ignore_failure;

    // Opened now, so a bad path fails before any run.
    const std::tuple<const char*, const std::string*, ExportFormat> requested[] = {
        {"--export-json", &args.export_json, ExportFormat::Json},
        {"--export-markdown", &args.export_markdown, ExportFormat::Markdown},
        {"--export-csv", &args.export_csv, ExportFormat::Csv},
    };
    for (const auto& [option, path, format] : requested) {
        if (bench.get_option(option)->count() == 0) continue;
        try {
            plan.exports.push_back(Export{format, ExportTarget(*path), option, {}});
        } catch (const std::runtime_error& e) {
            throw UsageError(fmt::format("{}: {}", option, e.what()));
        }
    }
    std::vector<NamedExportTarget> named;
    for (const Export& output : plan.exports) named.push_back({output.option, &output.target});
    try {
        check_distinct_destinations(named);
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }

    // Only now the slower checks that look at the file system.
    for (size_t i = 0; i < plan.commands.size(); ++i) {
        check_found(plan.commands[i].argv, fmt::format("COMMAND '{}'", plan.commands[i].command));
        if (!plan.commands[i].prepare_argv.empty()) {
            check_found(plan.commands[i].prepare_argv, fmt::format("--prepare command '{}'", plan.commands[i].prepare));
        }
    }

    plan.style = resolve_style(*style, ::isatty(STDERR_FILENO) == 1, no_color_set());
    // The programs' output would tear the bar apart.
    plan.show_output = args.show_output;
    if (args.show_output) plan.style.progress = false;
    return plan;
}

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
// stderr, said again only when its reason changes. Returns false when a
// final write failed.
bool write_exports(Plan& plan, const std::vector<BenchResult>& results, Console& console, bool final) {
    bool all_written = true;
    for (Export& output : plan.exports) {
        try {
            const std::string bytes = export_results(output.format, results);
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

int run_bench(Plan& plan) {
    Console console(plan.style);
    TracingExecutor executor(plan.show_output, plan.backend);
    std::vector<BenchResult> results;
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
            std::fprintf(stderr, "max_rss: bench: %s\n", e.what());
            return e.exit_code;
        }
        console.clear_progress();
        console.print(format_bench_statistics(outcome.result, console.color()) +
                      format_bench_warnings(outcome.result, outcome.failed_runs) + "\n");
        results.push_back(std::move(outcome.result));
        write_exports(plan, results, console, false);
    }
    console.print(format_bench_summary(results, console.color()));
    const bool output_lost = !write_exports(plan, results, console, true);
    bool over_budget = false;
    if (plan.budget) {
        const std::string violations = format_budget_violations(results, *plan.budget);
        over_budget = !violations.empty();
        std::fputs(violations.c_str(), stderr);
    }
    return exit_code::combine(exit_code::ok, over_budget, output_lost);
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
        "(mean ± σ, min … max, median in exports) beside wait4's ru_maxrss.\n"
        "\n"
        "Output: the human summary and any progress bar go to stderr, so stdout carries only the\n"
        "exports given as '-'. The COMMANDs read /dev/null and their output is discarded unless\n"
        "--show-output. A progress bar and colours appear when stderr is a terminal (--style).\n"
        "\n"
        "Exit status: 0 success; 2 usage error or an export file that cannot be created (nothing\n"
        "was run); 3 a median peak over --budget; 4 an export could not be written (the others\n"
        "were; 3 wins); a COMMAND's own exit code when it failed and -i was not given (128+N for\n"
        "signal N); 127 a COMMAND not found; 125 max_rss failed.\n"
        "\n"
        "Example (-c keeps the input, so every run has one):\n"
        "  max_rss bench -r 10 -N 'gzip -9 -c /bin/bash' 'xz -9 -c /bin/bash' --export-json mem.json");
    bench->add_option("COMMAND", args->commands,
                      "A command line to measure, one argument each (quote it); run by the shell unless -N")
        ->type_name("");
    bench->add_option("-r,--runs", args->runs, "Measured runs per COMMAND (default 5)")
        ->option_text("N")
        ->check(count_value(1, 1000000));
    bench->add_option("-w,--warmup", args->warmup, "Unrecorded runs before the measured ones (default 0)")
        ->option_text("N")
        ->check(count_value(0, 1000000));
    bench->add_option("-n,--command-name", args->names,
                      "Name for a COMMAND in the output and exports, in order (repeatable)")
        ->option_text("NAME")
        ->allow_extra_args(false);
    bench->add_option("-p,--prepare", args->prepare,
                      "Run CMD before each run (warmup included), unmeasured; once for all COMMANDs or once each")
        ->option_text("CMD")
        ->allow_extra_args(false);
    bench->add_option("-S,--shell", args->shell,
                      "Run each COMMAND as SHELL -c COMMAND (default /bin/sh; the shell is measured too, "
                      "about 0.5 MiB for dash). 'none': see -N")
        ->option_text("SHELL");
    bench->add_flag("-N", args->no_shell,
                    "--shell=none: split each COMMAND into words (quotes and backslashes are honoured) and run it "
                    "without a shell, so the shell is not measured");
    bench->add_option("--backend", args->backend,
                      "How each run is followed: ptrace (default) or sample (no ptrace; see 'max_rss --help')")
        ->option_text("NAME")
        ->check(backend_value());
    bench->add_flag("-i,--ignore-failure", args->ignore_failure,
                    "Keep going when a COMMAND exits non-zero (runs still count)");
    bench->add_flag("--show-output", args->show_output, "Let the COMMANDs' stdout and stderr through");
    bench->add_option("--style", args->style,
                      "auto (default: full on a terminal unless NO_COLOR, else basic), basic (no bar, no colour), "
                      "full, nocolor, color (no bar) or none (no summary)")
        ->option_text("TYPE");
    bench->add_option("--export-json", args->export_json, "Write all runs and statistics as JSON to FILE ('-' = stdout)")
        ->option_text("FILE")
        ->check(path_value());
    bench->add_option("--export-markdown", args->export_markdown,
                      "Write a Markdown table to FILE ('-' = stdout)")
        ->option_text("FILE")
        ->check(path_value());
    bench->add_option("--export-csv", args->export_csv, "Write a CSV table to FILE ('-' = stdout)")
        ->option_text("FILE")
        ->check(path_value());
    bench->add_option("--budget", args->budget,
                      "Exit 3 when a COMMAND's median peak exceeds SIZE (512MiB, 1.5GiB, 300MB, 512Mi); checked "
                      "at the end")
        ->option_text("SIZE")
        ->check(size_value());

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
