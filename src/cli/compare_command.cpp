// `max_rss compare BASE NEW`: the CI gate. Pairs the commands of two reports
// and fails (exit 1) on a regression or a benchmark missing from NEW.
#include <max_rss/bench/baseline.hpp>
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>

#include <CLI/CLI.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/export_target.hpp>
#include <max_rss/report/compare.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include <sys/stat.h>

namespace max_rss::cli {
namespace {

struct CompareArgs {
    std::vector<std::string> reports;
    std::string threshold = "5%";
    std::string min_change = "1MiB";
    std::string significance = "0.05";
    bool allow_missing = false;
    std::string markdown;
    std::string json;
    std::string baseline;
};

// One --markdown or --json output.
struct CompareOutput {
    const char* option;
    ExportTarget target;
    std::string (*format)(const CompareResult&);
};

}  // namespace

Action add_compare_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* compare = app.add_subcommand(
        "compare", "Compare two reports' peaks; exit 1 on a regression or a benchmark missing from NEW");
    compare->prefix_command(false);
    compare->footer(
        "BASE and NEW are JSON reports: `max_rss -o FILE` run reports or `bench --export-json`\n"
        "exports ('-' reads one from stdin); --baseline NAME reads BASE from a saved baseline.\n"
        "Commands pair by their command line, then by --command-name; two reports of one command\n"
        "each always pair. Bench exports compare median peaks; run reports the tree peak.\n"
        "\n"
        "A change counts (regression, or improvement) when it is above --threshold AND at least\n"
        "--min-change AND significant: a one-sided Mann-Whitney U test on the per-run peaks of\n"
        "both sides gives p <= --significance. When a side has too few runs for the test ever to\n"
        "reach that level (a run report; 2 runs against 2), the two thresholds alone decide.\n"
        "A change beyond both thresholds that the runs' spread explains is shown as 'noise'.\n"
        "\n"
        "The table goes to stdout (to stderr when --markdown or --json is '-').\n"
        "\n"
        "Exit status: 0 no regression; 1 a regression, or a benchmark of BASE missing from NEW\n"
        "(unless --allow-missing); 2 usage error or a report that cannot be read; 4 an output\n"
        "could not be written.");
    compare->add_option("REPORTS", args->reports,
                        "BASE NEW: the baseline report and the report to judge (JSON); only NEW with --baseline")
        ->type_name("");
    compare->add_option("-t,--threshold", args->threshold,
                        "Relative change that counts, e.g. 5%, 0.5%, 10 (a bare number is a percentage)")
        ->option_text("PCT")
        ->capture_default_str()
        ->check(percent_value());
    compare->add_option("--min-change", args->min_change,
                        "Absolute change that counts, however large in percent (default 1MiB; 0B for none)")
        ->option_text("SIZE")
        ->check(size_value());
    compare->add_option("--significance", args->significance,
                        "Level of the Mann-Whitney U test on per-run peaks (default 0.05)")
        ->option_text("P")
        ->check(probability_value());
    compare->add_flag("--allow-missing", args->allow_missing,
                      "A benchmark of BASE missing from NEW does not fail the comparison");
    compare->add_option("--markdown", args->markdown, "Also write the comparison as Markdown to FILE ('-' = stdout)")
        ->option_text("FILE")
        ->check(path_value());
    compare->add_option("--json", args->json, "Also write the comparison as JSON to FILE ('-' = stdout)")
        ->option_text("FILE")
        ->check(path_value());
    compare->add_option("--baseline", args->baseline,
                        "Read BASE from the named baseline that `bench --save-baseline NAME` saved "
                        "(.max_rss/baselines/NAME.json, or $MAX_RSS_BASELINE_DIR/NAME.json)")
        ->option_text("NAME")
        ->check(baseline_name_value());

    return [args, &app, compare, &after_dashdash]() -> int {
        if (app.get_subcommands().size() > 1) throw UsageError("'bench' and 'compare' cannot be combined");
        // main() splits off what follows "--"; BASE and NEW may be there.
        std::vector<std::string> reports = args->reports;
        if (after_dashdash) reports.insert(reports.end(), after_dashdash->begin(), after_dashdash->end());
        const bool named_base = compare->get_option("--baseline")->count() > 0;
        if (named_base) reports.insert(reports.begin(), baseline_path(args->baseline).string());
        if (reports.size() > 2) {
            throw UsageError(fmt::format("unexpected argument '{}'{}", reports[2],
                                         named_base ? " (--baseline is BASE: give only NEW)" : ""),
                             true);
        }
        if (reports.size() < 2) {
            throw UsageError(named_base ? "needs the report to judge, NEW" : "needs two reports, BASE and NEW", true);
        }
        if (reports[0] == "-" && reports[1] == "-") throw UsageError("only one of BASE and NEW can be '-' (stdin)");
        CompareSettings settings;
        settings.threshold = percent_fraction(args->threshold);
        settings.min_change_bytes = size_bytes(args->min_change);
        settings.significance = probability(args->significance);
        settings.allow_missing = args->allow_missing;

        // Checked before anything is read, so a bad path fails at once.
        std::vector<CompareOutput> outputs;
        const std::tuple<const char*, const std::string*, std::string (*)(const CompareResult&)> wanted[] = {
            {"--markdown", &args->markdown, format_compare_markdown},
            {"--json", &args->json, format_compare_json},
        };
        for (const auto& [option, path, format] : wanted) {
            if (compare->get_option(option)->count() == 0) continue;
            try {
                outputs.push_back({option, ExportTarget(*path), format});
            } catch (const std::runtime_error& e) {
                throw UsageError(fmt::format("{}: {}", option, e.what()));
            }
        }
        std::vector<NamedExportTarget> named;
        bool output_on_stdout = false;
        for (const CompareOutput& output : outputs) {
            named.push_back({output.option, &output.target});
            output_on_stdout = output_on_stdout || output.target.is_stdout();
        }
        try {
            check_distinct_destinations(named);
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());
        }
        // An output onto BASE or NEW would replace the report it compares.
        for (const CompareOutput& output : outputs) {
            struct stat out {};
            if (output.target.path() == "-" || ::stat(output.target.path().c_str(), &out) != 0) continue;
            for (size_t i = 0; i < 2; ++i) {
                struct stat in {};
                if (reports[i] != "-" && ::stat(reports[i].c_str(), &in) == 0 && in.st_dev == out.st_dev &&
                    in.st_ino == out.st_ino)
                    throw UsageError(fmt::format("{} '{}' is {}, which it would replace", output.option,
                                                 output.target.path(), i == 0 ? "BASE" : "NEW"));
            }
        }

        std::vector<MeasuredPeak> base;
        std::vector<MeasuredPeak> after;
        try {
            base = load_report(reports[0]);
        } catch (const ReportError& e) {
            std::fprintf(stderr, "max_rss: compare: %s%s\n", e.what(),
                         named_base ? fmt::format(" (baseline '{}'; `max_rss bench --save-baseline {}` saves it)",
                                                  args->baseline, args->baseline)
                                          .c_str()
                                    : "");
            return exit_code::usage;
        }
        try {
            after = load_report(reports[1]);
        } catch (const ReportError& e) {
            std::fprintf(stderr, "max_rss: compare: %s\n", e.what());
            return exit_code::usage;
        }
        for (const auto& [peaks, source] : {std::pair{&base, &reports[0]}, std::pair{&after, &reports[1]}}) {
            for (const std::string& line : degraded_warnings(*peaks, *source))
                std::fprintf(stderr, "max_rss: compare: warning: %s\n", line.c_str());
        }
        if (const auto line = backend_warning(base, reports[0], after, reports[1]))
            std::fprintf(stderr, "max_rss: compare: warning: %s\n", line->c_str());
        CompareResult result = compare_reports(base, after, settings);
        if (result.rows.empty() && base.size() == 1 && after.size() == 1) {
            // Two reports of one command each: the user chose what to compare,
            // even if the command line changed (another build directory, a new
            // flag). Pair them under one label that shows both.
            const auto label = [](const MeasuredPeak& peak) { return peak.name.empty() ? peak.command : peak.name; };
            const std::string both = fmt::format("{} → {}", label(base[0]), label(after[0]));
            base[0].name = both;
            after[0].name = both;
            result = compare_reports(base, after, settings);
        }
        const std::string table = format_compare_table(result);
        FILE* table_stream = output_on_stdout ? stderr : stdout;
        // A table that cannot be written (a closed pipe, a full disk) is an
        // output lost like the others: the verdict still decides the code.
        bool output_lost = false;
        if (std::fwrite(table.data(), 1, table.size(), table_stream) != table.size() || std::fflush(table_stream) != 0) {
            std::fprintf(stderr, "max_rss: compare: cannot write the table: %s\n", std::strerror(errno));
            output_lost = true;
        }
        for (CompareOutput& output : outputs) {
            try {
                output.target.write(output.format(result));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "max_rss: compare: %s: %s\n", output.option, e.what());
                output_lost = true;
            }
        }
        if (result.failed) return exit_code::regression;
        return output_lost ? exit_code::output_failed : exit_code::ok;
    };
}

}  // namespace max_rss::cli
