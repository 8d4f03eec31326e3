// Builds the command line (CLI11) and turns every failure into one line on
// stderr with a documented exit code.
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/os/standard_fds.hpp>
#include <max_rss/report/tree_view.hpp>

#include <max_rss/util/log.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string_view>

namespace max_rss::cli {
namespace {

// The subcommand being parsed or run ("" for the run mode).
std::string subcommand_of(const CLI::App& app) {
    const auto subs = app.get_subcommands();
    return subs.empty() ? std::string() : subs.front()->get_name();
}

}  // namespace

int main(int argc, char** argv) {
    // Before anything opens a file: a closed fd 2 must not become the report.
    guard_standard_fds();
    catch_sigpipe();
    // Logs go to stderr only: stdout belongs to the program and to `-o -`.
    log::init();

    CLI::App app{
        "max_rss: the true peak memory of a program and of every process it starts.\n"
        "Runs COMMAND under ptrace, reads each process's peak (VmHWM) when it execs\n"
        "and when it exits, and reports per-process and tree-wide peaks beside what\n"
        "wait4's ru_maxrss (GNU time, hyperfine) would claim.\n\n"
        "  max_rss [OPTIONS] [--] COMMAND [ARGS...]   measure one run\n"
        "  max_rss bench [OPTIONS] COMMAND...         several runs and commands, exports\n"
        "  max_rss compare [OPTIONS] BASE NEW         fail CI on a memory regression\n",
        "max_rss"};
    app.set_version_flag("-V,--version", "max_rss " MAX_RSS_VERSION);
    app.footer(
        "--tree shows one line per process: pid, its peak, what it ran, notes in brackets.\n" +
        tree_notation() +
        "Lines are cut to $COLUMNS, else to the terminal's width (not cut when stderr is not a\n"
        "terminal, or with --wide); alike siblings are counted in one ×N line.\n\n"
        "Exit status: that of COMMAND (128+N if signal N killed it); 2 usage error;\n"
        "3 over --budget; 4 an output could not be written (COMMAND's failure and 3 win);\n"
        "125 max_rss failed; 126 COMMAND not executable; 127 not found.");
    // Everything after the first "--" is COMMAND, untouched: `max_rss -- bench`
    // runs a program called bench, and COMMAND's own options never reach CLI11.
    std::optional<std::vector<std::string>> after_dashdash;
    int own_argc = argc;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--") {
            own_argc = i;
            after_dashdash.emplace(argv + i + 1, argv + argc);
            break;
        }
    }
    Action run = add_run_command(app, after_dashdash);
    Action bench = add_bench_command(app, after_dashdash);
    Action compare = add_compare_command(app, after_dashdash);
    try {
        app.parse(own_argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ValidationError& e) {
        return report_usage_error(subcommand_of(app), e.what(), false);  // a value: it says what would do
    } catch (const CLI::ParseError& e) {
        return report_usage_error(subcommand_of(app), e.what(), true);
    }
    try {
        const std::string sub = subcommand_of(app);
        try {
            if (sub == "bench") return bench();
            if (sub == "compare") return compare();
            return run();
        } catch (const UsageError& e) {
            return report_usage_error(sub, e.what(), e.show_help);
        }
    } catch (const LaunchError& e) {
        std::fprintf(stderr, "max_rss: %s\n", e.what());
        return e.exit_code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "max_rss: %s\n", e.what());
        return exit_code::internal_error;
    }
}

}  // namespace max_rss::cli
