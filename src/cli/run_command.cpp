// `max_rss [OPTIONS] -- COMMAND [ARGS...]`: trace one run, summarise, report.
#include <max_rss/cli/commands.hpp>
#include <max_rss/cli/options.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/report/console.hpp>
#include <max_rss/util/duration.hpp>
#include <max_rss/exit_codes.hpp>
#include <max_rss/os/export_target.hpp>
#include <max_rss/report/export.hpp>
#include <max_rss/report/plot.hpp>
#include <max_rss/report/report.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/engine/measure.hpp>
#include <max_rss/report/tree_view.hpp>

#include <max_rss/util/log.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

namespace max_rss::cli {
namespace {

struct RunArgs {
    std::vector<std::string> command;
    std::string output;
    bool quiet = false;
    int verbose = 0;
    std::string budget;
    std::string interval = "20ms";
    std::string plot;
    std::string backend = "ptrace";
    bool tree = false;
    bool wide = false;
    std::string tree_min;
    unsigned tree_depth = 0;
    bool cgroup = false;
};

// Where max_rss's stdout stood, to tell whether the program wrote to it.
struct StdoutMark {
    bool regular = false;  // a regular file: its offset and size say whether it grew
    bool null_device = false;
    // Opened to append (>>): its offset is 0 until the first write, then the
    // file's end, so only the size says what was written.
    bool append = false;
    off_t offset = 0;
    off_t size = 0;
};

StdoutMark mark_stdout() {
    StdoutMark mark;
    struct stat st {};
    if (::fstat(STDOUT_FILENO, &st) != 0) return mark;
    mark.regular = S_ISREG(st.st_mode);
    struct stat null {};
    mark.null_device = S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 && null.st_rdev == st.st_rdev;
    mark.size = st.st_size;
    mark.offset = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
    const int flags = ::fcntl(STDOUT_FILENO, F_GETFL);
    mark.append = flags >= 0 && (flags & O_APPEND) != 0;
    return mark;
}

// An output going to stdout shares it with the program, which inherited that
// very descriptor: one line on stderr when what the program printed is mixed
// with it. A regular file shows whether the program wrote (its offset or size
// moved); a pipe or a terminal cannot say, so it is always mentioned;
// /dev/null keeps nothing, so nothing is mixed. The maybe of a pipe or a
// terminal is part of the summary, and -q silences it; a file that grew is
// always said.
void warn_if_mixed(const char* option, const StdoutMark& before, const StdoutMark& after, bool quiet) {
    if (before.null_device) return;
    if (before.regular) {
        const off_t grew = before.append ? after.size - before.size
                                         : std::max(after.offset - before.offset, after.size - before.size);
        if (grew <= 0) return;
        std::fprintf(stderr,
                     "max_rss: %s: COMMAND wrote %lld bytes to stdout, where the output goes too: they are mixed "
                     "(write the output to a file instead, or redirect COMMAND's stdout)\n",
                     option, static_cast<long long>(grew));
        return;
    }
    if (quiet) return;
    std::fprintf(stderr,
                 "max_rss: %s: the output goes to stdout, which COMMAND also writes to: anything it printed is "
                 "mixed with it (write the output to a file instead, or redirect COMMAND's stdout)\n",
                 option);
}

}  // namespace

void apply_verbosity(int verbose) {
    if (verbose >= 2) log::set_level(log::Level::trace);
    else if (verbose == 1) log::set_level(log::Level::debug);
}

Action add_run_command(CLI::App& app, const std::optional<std::vector<std::string>>& after_dashdash) {
    auto args = std::make_shared<RunArgs>();
    app.add_option("-o,--output", args->output, "Write the JSON report to FILE ('-' = stdout)")
        ->option_text("FILE");
    app.add_flag("-q,--quiet", args->quiet, "Do not print the summary on stderr");
    app.add_flag("-v,--verbose", args->verbose, "More log output on stderr (-vv: every ptrace stop)");
    app.add_option("--interval", args->interval,
                   "Sample the live tree every DURATION (e.g. 20ms, 0.1s; at least 1ms; 0 = only at exits)")
        ->option_text("DURATION")
        ->capture_default_str()
        ->check(duration_value(kMinIntervalNs));
    app.add_option("--plot", args->plot, "Draw memory over time, by process, into an HTML page FILE")
        ->option_text("FILE");
    app.add_option("--backend", args->backend,
                   "How to follow the tree: ptrace (default: stops each process at its birth, exec, exit and "
                   "where its memory can fall), ebpf (kernel events, nobody stopped, programs that use ptrace run "
                   "untouched; needs root or CAP_BPF+CAP_PERFMON, and kernel BTF), sample (no ptrace: reads /proc "
                   "every --interval, can miss what happens between two reads; max_rss is the tree's subreaper, "
                   "so an orphan's getppid() is max_rss)")
        ->option_text("NAME")
        ->capture_default_str()
        ->check(backend_value());
    app.add_flag("--tree", args->tree,
                 "Print the process tree on stderr: each process's peak, what it ran, how it ended (see below)");
    app.add_flag("--wide", args->wide, "Tree lines are never cut to the width ($COLUMNS, else the terminal's); implies --tree");
    app.add_option("--tree-min", args->tree_min,
                   "Hide processes whose peak is below SIZE (e.g. 1MiB) unless a descendant is shown; implies --tree")
        ->option_text("SIZE")
        ->check(size_value());
    app.add_option("--tree-depth", args->tree_depth, "Show N levels of the tree below the root (0: the root only); implies --tree")
        ->option_text("N")
        ->check(count_value(0, 1000000));
    app.add_flag("--cgroup", args->cgroup,
                 "Also run the tree in a memory cgroup and report its peak (includes page cache)");
    app.add_option("--budget", args->budget,
                   "Fail (exit 3) when the tree peak exceeds SIZE, e.g. 512MiB, 1.5GiB, 300MB, 512Mi")
        ->option_text("SIZE")
        ->check(size_value());
    // Everything from the first positional on belongs to COMMAND, options included.
    app.prefix_command();

    return [args, &app, &after_dashdash]() -> int {
        apply_verbosity(args->verbose);
        // `max_rss prog a -- b`: prog's own "--" was split off by main(); put it back.
        args->command = app.remaining();
        // prefix_command() passes unknown options through; before COMMAND they
        // can only be a mistake for one of ours.
        if (!args->command.empty() && args->command.front().size() > 1 && args->command.front()[0] == '-')
            throw UsageError(fmt::format("unknown option '{}'", args->command.front()), true);
        if (after_dashdash) {
            if (!args->command.empty()) args->command.push_back("--");
            args->command.insert(args->command.end(), after_dashdash->begin(), after_dashdash->end());
        }
        if (args->command.empty()) throw UsageError("no COMMAND given", true);
        check_not_a_mistyped_subcommand(args->command.front());
        std::optional<uint64_t> budget;
        if (app.get_option("--budget")->count() > 0) budget = size_bytes(args->budget);
        const int64_t interval_ns = duration_ns(args->interval);
        // Checked now, so an unwritable path fails before the program runs.
        std::optional<ExportTarget> report, plot;
        struct Requested {
            const char* name;  // as messages say it
            const CLI::Option* option;
            const std::string& path;
            std::optional<ExportTarget>& target;
        };
        const Requested requested[] = {{"-o", app.get_option("--output"), args->output, report},
                                       {"--plot", app.get_option("--plot"), args->plot, plot}};
        std::vector<NamedExportTarget> outputs;
        for (const Requested& output : requested) {
            if (output.option->count() == 0) continue;
            // An empty value is a mistake (a CI variable left unset), never "off".
            if (output.path.empty()) throw UsageError(fmt::format("{}: empty path (use '-' for stdout)", output.name));
            try {
                outputs.push_back({output.name, &output.target.emplace(output.path)});
            } catch (const std::exception& e) {
                throw UsageError(fmt::format("{}: {}", output.name, e.what()));
            }
        }
        try {
            check_distinct_destinations(outputs);
        } catch (const std::exception& e) {
            throw UsageError(e.what());
        }

        TreeOptions tree;
        tree.color = color_wanted(STDERR_FILENO);
        if (!args->wide) tree.width_columns = output_columns(STDERR_FILENO);
        if (app.get_option("--tree-min")->count() > 0) tree.min_peak_bytes = size_bytes(args->tree_min);
        if (app.get_option("--tree-depth")->count() > 0) tree.max_depth = args->tree_depth;
        // Any of the tree's own options asks for the tree.
        const bool show_tree = args->tree || args->wide || app.get_option("--tree-min")->count() > 0 ||
                               app.get_option("--tree-depth")->count() > 0;
        const char* shares_stdout = report && report->is_stdout() ? "-o" : plot && plot->is_stdout() ? "--plot" : nullptr;
        const StdoutMark stdout_before = mark_stdout();

        MeasureOptions options;
        options.argv = args->command;
        options.sample_interval_ns = interval_ns;
        options.backend = backend_of(args->backend);
        options.use_cgroup = args->cgroup;
        RunResult result = measure(options);
        const StdoutMark stdout_after = mark_stdout();  // before the outputs add to it

        // Each output on its own: one that cannot be written (a full disk, a
        // directory the program removed) costs only itself, in one line.
        bool output_lost = false;
        const auto attempt = [&output_lost](const char* name, const std::function<void()>& write) {
            try {
                write();
                return true;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "max_rss: %s: %s\n", name, e.what());
                output_lost = true;
                return false;
            }
        };
        bool stdout_written = false;  // an output went to stdout, whole
        if (report) {
            const bool written = attempt(
                "-o", [&] { report->write_stream([&result](std::ostream& out) { write_report_json(out, result); }); });
            stdout_written |= written && report->is_stdout();
        }
        if (plot) stdout_written |= attempt("--plot", [&] { plot->write(render_plot_html(result)); }) && plot->is_stdout();
        if (stdout_written) warn_if_mixed(shares_stdout, stdout_before, stdout_after, args->quiet);
        if (show_tree) std::fputs(format_tree(result, tree).c_str(), stderr);
        if (!args->quiet) std::fputs(format_summary(result).c_str(), stderr);
        if (result.internal_error) {
            // The outputs above hold what was measured until max_rss failed.
            std::fprintf(stderr, "max_rss: %s (the report is partial)\n", result.internal_error->c_str());
            return exit_code::internal_error;
        }
        const bool over_budget = budget && result.peak.tree_bytes > *budget;
        if (over_budget) {
            std::fprintf(stderr, "max_rss: over budget: peak %s exceeds --budget %s\n",
                         format_bytes(result.peak.tree_bytes).c_str(), format_bytes(*budget).c_str());
        }
        return exit_code::combine(result.exit.shell_code(), over_budget, output_lost);
    };
}

}  // namespace max_rss::cli
