// `max_rss compare BASE NEW [--threshold 5%]`: the CI gate. Pairs the commands
// of two reports and fails (exit 1) when a peak grew beyond the threshold.
#include <max_rss/bench/runner.hpp>
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>

#include <CLI/CLI.hpp>
#include <max_rss/report/compare.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/util/size.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include <unistd.h>

namespace max_rss::cli {
namespace {

struct CompareArgs {
    std::string base;
    std::string after;
    std::string threshold = "5%";
};

}  // namespace

Action add_compare_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* compare = app.add_subcommand(
        "compare",
        "Compare two reports' peaks; exit 1 when one grew beyond --threshold");
    compare->prefix_command(false);
    compare->footer(
        "BASE and NEW are JSON reports: `max_rss -o FILE` run reports or `bench --export-json`\n"
        "exports. The table (before, after, change) goes to stdout.\n"
        "Commands pair by their command line, then by --command-name; two reports of one command\n"
        "each always pair. Bench exports compare median peaks; run reports the tree peak. A command\n"
        "only in one report is listed, not judged.\n"
        "'-' reads a report from stdin.\n"
        "\n"
        "Exit status: 0 no regression; 1 a peak grew by more than the threshold; 2 usage error or\n"
        "a report that cannot be read.");
    compare->add_option("BASE", args->base, "The baseline report (JSON)")->type_name("");
    compare->add_option("NEW", args->after, "The report to judge (JSON)")->type_name("");
    compare->add_option("-t,--threshold", args->threshold,
                        "Growth that counts as a regression, e.g. 5%, 0.5%, 10 (a bare number is a percentage)")
        ->option_text("PCT")
        ->capture_default_str()
        ->check(percent_value());

    return [args, &app, &after_dashdash]() -> int {
        if (app.get_subcommands().size() > 1) throw UsageError("'bench' and 'compare' cannot be combined");
        // main() splits off what follows "--"; BASE and NEW may be there.
        if (after_dashdash) {
            for (const std::string& word : *after_dashdash) {
                if (args->base.empty()) args->base = word;
                else if (args->after.empty()) args->after = word;
                else throw UsageError(fmt::format("unexpected argument '{}'", word), true);
            }
        }
        if (args->base.empty() || args->after.empty()) throw UsageError("needs two reports, BASE and NEW", true);
        if (args->base == "-" && args->after == "-")
            throw UsageError("only one of BASE and NEW can be '-' (stdin)");
        const double threshold = percent_fraction(args->threshold);
        std::vector<MeasuredPeak> base;
        std::vector<MeasuredPeak> after;
        try {
            base = load_report(args->base);
            after = load_report(args->after);
        } catch (const ReportError& e) {
            std::fprintf(stderr, "max_rss: compare: %s\n", e.what());
            return exit_code::usage;
        }
        for (const auto& [peaks, source] : {std::pair{&base, &args->base}, std::pair{&after, &args->after}}) {
            for (const std::string& line : degraded_warnings(*peaks, *source))
                std::fprintf(stderr, "max_rss: compare: warning: %s\n", line.c_str());
        }
        CompareResult result = compare_reports(base, after, threshold);
        if (result.rows.empty() && base.size() == 1 && after.size() == 1) {
            // Two reports of one command each: the user chose what to compare,
            // even if the command line changed (another build directory, a new
            // flag). Pair them under one label that shows both.
            const auto label = [](const MeasuredPeak& peak) { return peak.name.empty() ? peak.command : peak.name; };
            const std::string both = fmt::format("{} → {}", label(base[0]), label(after[0]));
            base[0].name = both;
            after[0].name = both;
            result = compare_reports(base, after, threshold);
        }
        const std::string table = format_compare_table(result);
        if (std::fwrite(table.data(), 1, table.size(), stdout) != table.size() || std::fflush(stdout) != 0) {
            std::fprintf(stderr, "max_rss: compare: cannot write to stdout: %s\n", std::strerror(errno));
            return exit_code::internal_error;
        }
        return result.any_regression ? exit_code::regression : exit_code::ok;
    };
}

}  // namespace max_rss::cli
