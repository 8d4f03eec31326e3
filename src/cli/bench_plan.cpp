// bench's options and the plan made of them: every value checked, every
// export opened, before anything runs.
#include <max_rss/cli/bench_plan.hpp>

#include <max_rss/bench/baseline.hpp>
#include <max_rss/bench/parameters.hpp>
#include <max_rss/cli/options.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/launch.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>

namespace max_rss::cli {
namespace {

// Checks that argv[0] can be found, so a typo fails before minutes of runs.
// A path to something that is there but cannot run (a directory, a file
// without x) is said as a run of it would say it, exit 126.
void check_found(const std::vector<std::string>& argv, std::string_view what) {
    const std::string& program = argv.at(0);
    struct stat st {};
    if (program.find('/') != std::string::npos && ::stat(program.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode) && ::access(program.c_str(), X_OK) == 0) return;
        throw LaunchError(
            fmt::format("bench: {}: {}: {}", what, program, std::strerror(S_ISDIR(st.st_mode) ? EISDIR : EACCES)),
            exit_code::not_executable);
    }
    if (os::find_in_path(program)) return;
    throw LaunchError(fmt::format("bench: {}: {}: command not found", what, program.empty() ? "''" : program),
                      exit_code::not_found);
}

// An option given once for all COMMANDs, or once per COMMAND: the value for
// COMMAND i (nullopt when not given). Throws UsageError for another count.
std::optional<std::string> per_command(const std::vector<std::string>& values, size_t i, size_t commands,
                                       const char* option) {
    if (values.size() > 1 && values.size() != commands) {
        throw UsageError(fmt::format("give {} once, or once per COMMAND ({}), not {} times", option, commands,
                                     values.size()));
    }
    if (values.empty()) return std::nullopt;
    return values.size() == 1 ? values[0] : values[i];
}

std::vector<ParameterValues> parameters_of(const CLI::App& bench, const BenchArgs& args) {
    std::vector<ParameterValues> parameters;
    const bool scan = bench.get_option("--parameter-scan")->count() > 0;
    if (scan && !args.parameter_lists.empty()) {
        throw UsageError("--parameter-scan and --parameter-list cannot be combined (as in hyperfine)");
    }
    if (bench.get_option("--parameter-step-size")->count() > 0 && !scan) {
        throw UsageError("--parameter-step-size needs --parameter-scan");
    }
    try {
        if (scan) {
            if (args.parameter_scan.size() != 3) throw UsageError("--parameter-scan needs NAME MIN MAX, once");
            const std::optional<std::string_view> step =
                args.parameter_step.empty() ? std::nullopt : std::optional<std::string_view>(args.parameter_step);
            parameters.push_back(
                scan_parameter(args.parameter_scan[0], args.parameter_scan[1], args.parameter_scan[2], step));
        }
        for (size_t i = 0; i + 1 < args.parameter_lists.size(); i += 2) {
            parameters.push_back(list_parameter(args.parameter_lists[i], args.parameter_lists[i + 1]));
        }
        parameter_combinations(parameters);  // checks names and count
    } catch (const ParameterError& e) {
        throw UsageError(fmt::format("{}: {}", scan ? "--parameter-scan" : "--parameter-list", e.what()));
    }
    return parameters;
}

}  // namespace

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
    const size_t count = args.commands.size();
    if (args.names.size() > count) {
        throw UsageError(fmt::format("{} --command-name for {} COMMAND{}", args.names.size(), count,
                                     count == 1 ? "" : "s"));
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
    const bool runs_given = bench.get_option("--runs")->count() > 0;
    const bool min_given = bench.get_option("--min-runs")->count() > 0;
    const bool max_given = bench.get_option("--max-runs")->count() > 0;
    if (runs_given && (min_given || max_given)) {
        throw UsageError("--runs sets the count; --min-runs and --max-runs bound it when --runs is not given");
    }
    plan.settings.runs = args.runs;
    if (min_given || max_given) {
        plan.settings.runs = 0;
        plan.settings.max_runs = args.max_runs;
        plan.settings.min_runs = min_given ? args.min_runs : std::min(args.min_runs, args.max_runs);
        if (plan.settings.min_runs > plan.settings.max_runs) {
            throw UsageError(fmt::format("--min-runs {} is above --max-runs {}", plan.settings.min_runs,
                                         plan.settings.max_runs));
        }
    }
    plan.settings.warmup = args.warmup;
    plan.settings.ignore_failure = args.ignore_failure;
    plan.sort = args.sort == "command"     ? BenchSort::Command
                : args.sort == "mean-peak" ? BenchSort::MeanPeak
                : args.sort == "mean-time" ? BenchSort::MeanTime
                                           : BenchSort::Auto;

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
    const auto helper = [&](const std::optional<std::string>& text, const char* what,
                            const std::vector<BenchParameter>& parameters) {
        HelperCommand command;
        if (!text) return command;
        command.command = substitute_parameters(*text, parameters);
        command.argv = argv_of(command.command, what);
        return command;
    };
    // The per-command options (--prepare, --setup, --cleanup, --budget) of
    // COMMAND i of `of`; only_shared: just those given once for all.
    const auto fill = [&](BenchCommand& command, size_t i, size_t of, bool only_shared) {
        const auto value = [&](const std::vector<std::string>& values, const char* option) {
            if (only_shared && values.size() != 1) return std::optional<std::string>();
            return per_command(values, i, of, option);
        };
        const auto& parameters = command.parameters;
        const HelperCommand prepare = helper(value(args.prepare, "--prepare"), "--prepare command", parameters);
        command.prepare = prepare.command;
        command.prepare_argv = prepare.argv;
        command.setup = helper(value(args.setup, "--setup"), "--setup command", parameters);
        command.cleanup = helper(value(args.cleanup, "--cleanup"), "--cleanup command", parameters);
        if (const auto budget = value(args.budget, "--budget")) command.budget_bytes = size_bytes(*budget);
    };

    if (bench.get_option("--reference")->count() > 0) {
        if (args.reference.empty()) throw UsageError("--reference: empty command");
        BenchCommand reference;
        reference.command = args.reference;
        reference.argv = argv_of(reference.command, "--reference command");
        reference.reference = true;
        // Options given once apply to the reference too; per-command ones do not.
        fill(reference, 0, 1, true);
        plan.commands.push_back(std::move(reference));
    }
    const auto combinations = parameter_combinations(parameters_of(bench, args));
    for (size_t i = 0; i < count; ++i) {
        if (args.commands[i].empty()) throw UsageError(fmt::format("COMMAND {} is empty", i + 1));
        for (const auto& parameters : combinations) {
            BenchCommand command;
            command.parameters = parameters;
            command.command = substitute_parameters(args.commands[i], parameters);
            if (i < args.names.size()) command.name = substitute_parameters(args.names[i], parameters);
            command.argv = argv_of(command.command, "COMMAND");
            fill(command, i, count, false);
            plan.commands.push_back(std::move(command));
        }
    }
    plan.backend = backend_of(args.backend);

    // Opened now, so a bad path fails before any run.
    const std::tuple<const char*, const std::string*, ExportFormat> requested[] = {
        {"--export-json", &args.export_json, ExportFormat::Json},
        {"--export-markdown", &args.export_markdown, ExportFormat::Markdown},
        {"--export-csv", &args.export_csv, ExportFormat::Csv},
        {"--export-asciidoc", &args.export_asciidoc, ExportFormat::Asciidoc},
        {"--export-github-benchmark", &args.export_github_benchmark, ExportFormat::GithubBenchmark},
        {"--export-bencher", &args.export_bencher, ExportFormat::Bencher},
    };
    for (const auto& [option, path, format] : requested) {
        if (bench.get_option(option)->count() == 0) continue;
        try {
            plan.exports.push_back(Export{format, ExportTarget(*path), option, {}});
        } catch (const std::runtime_error& e) {
            throw UsageError(fmt::format("{}: {}", option, e.what()));
        }
    }
    if (bench.get_option("--compare-baseline")->count() > 0) {
        const std::string path = baseline_path(args.compare_baseline).string();
        try {
            plan.baseline = load_report(path);
        } catch (const ReportError& e) {
            throw UsageError(fmt::format("--compare-baseline: {} (`max_rss bench --save-baseline {}` saves it)",
                                         e.what(), args.compare_baseline));
        }
        plan.baseline_name = args.compare_baseline;
    }
    // Only now the slower checks that look at the file system.
    for (const BenchCommand& command : plan.commands) {
        check_found(command.argv, fmt::format("COMMAND '{}'", command.command));
        const std::tuple<const char*, const std::string*, const std::vector<std::string>*> helpers[] = {
            {"--prepare", &command.prepare, &command.prepare_argv},
            {"--setup", &command.setup.command, &command.setup.argv},
            {"--cleanup", &command.cleanup.command, &command.cleanup.argv},
        };
        for (const auto& [option, text, argv] : helpers) {
            if (!argv->empty()) check_found(*argv, fmt::format("{} command '{}'", option, *text));
        }
    }

    if (bench.get_option("--save-baseline")->count() > 0) {
        const std::filesystem::path path = baseline_path(args.save_baseline);
        std::error_code error;
        std::filesystem::create_directories(path.parent_path(), error);
        if (error) {
            throw UsageError(fmt::format("--save-baseline: cannot create '{}': {}", path.parent_path().string(),
                                         error.message()));
        }
        try {
            plan.exports.push_back(
                Export{ExportFormat::Json, ExportTarget(path.string()), "--save-baseline", {}, true});
        } catch (const std::runtime_error& e) {
            throw UsageError(fmt::format("--save-baseline: {}", e.what()));
        }
    }
    std::vector<NamedExportTarget> named;
    for (const Export& output : plan.exports) named.push_back({output.option, &output.target});
    try {
        check_distinct_destinations(named);
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }

    plan.style = resolve_style(*style, ::isatty(STDERR_FILENO) == 1, no_color_set());
    // The programs' output would tear the bar apart.
    plan.show_output = args.show_output;
    if (args.show_output) plan.style.progress = false;
    // The commands' output goes to stdout too: an export there gets it mixed in.
    if (args.show_output)
        for (const Export& output : plan.exports)
            if (output.target.is_stdout())
                std::fprintf(stderr,
                             "max_rss: bench: %s: the export goes to stdout, where --show-output lets the "
                             "COMMANDs' output through: anything they print is mixed with it (export to a file "
                             "instead)\n",
                             output.option);
    return plan;
}

}  // namespace max_rss::cli
