// bench's options, with hyperfine's names and meanings where hyperfine has them.
#include <max_rss/cli/bench_plan.hpp>
#include <max_rss/cli/options.hpp>

namespace max_rss::cli {

void add_bench_options(CLI::App& bench, BenchArgs& args) {
    bench.add_option("COMMAND", args.commands,
                     "A command line to measure, one argument each (quote it); run by the shell unless -N")
        ->type_name("");
    bench.add_option("-r,--runs", args.runs, "Measured runs per COMMAND (default 5)")
        ->option_text("N")
        ->check(count_value(1, 1000000));
    bench.add_option("-m,--min-runs", args.min_runs,
                     "Instead of --runs: as many runs as fit in 3 s (judged by the first), at least N (default 10)")
        ->option_text("N")
        ->check(count_value(1, 1000000));
    bench.add_option("-M,--max-runs", args.max_runs, "Instead of --runs: as many runs as fit in 3 s, at most N")
        ->option_text("N")
        ->check(count_value(1, 1000000));
    bench.add_option("-w,--warmup", args.warmup, "Unrecorded runs before the measured ones (default 0)")
        ->option_text("N")
        ->check(count_value(0, 1000000));
    bench.add_option("-n,--command-name", args.names,
                     "Name for a COMMAND in the output and exports, in order (repeatable; {NAME} is substituted)")
        ->option_text("NAME")
        ->allow_extra_args(false);
    bench.add_option("-s,--setup", args.setup,
                     "Run CMD once before each COMMAND's runs (warmup included), unmeasured; once for all or once "
                     "per COMMAND")
        ->option_text("CMD")
        ->allow_extra_args(false);
    bench.add_option("-p,--prepare", args.prepare,
                     "Run CMD before each run (warmup included), unmeasured; once for all COMMANDs or once each")
        ->option_text("CMD")
        ->allow_extra_args(false);
    bench.add_option("-c,--cleanup", args.cleanup,
                     "Run CMD once after each COMMAND's last run, unmeasured; once for all or once per COMMAND")
        ->option_text("CMD")
        ->allow_extra_args(false);
    bench.add_option("-P,--parameter-scan", args.parameter_scan,
                     "Benchmark each COMMAND for NAME = MIN, MIN+STEP, ... MAX, substituting {NAME}")
        ->option_text("NAME MIN MAX")
        ->expected(3)
        ->allow_extra_args(false);
    bench.add_option("-D,--parameter-step-size", args.parameter_step, "STEP of --parameter-scan (default 1)")
        ->option_text("STEP");
    bench.add_option("-L,--parameter-list", args.parameter_lists,
                     "Benchmark each COMMAND for each of the comma-separated VALUES of {NAME}; several -L give "
                     "every combination")
        ->option_text("NAME VALUES")
        ->expected(2)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
    bench.add_option("--reference", args.reference,
                     "Benchmark CMD first and give every ratio (summary, Relative) against it")
        ->option_text("CMD");
    bench.add_option("--sort", args.sort,
                     "auto (summary by mean peak, tables in COMMAND order), command, mean-peak or mean-time")
        ->option_text("ORDER")
        ->check(choice_value({"auto", "command", "mean-peak", "mean-time"}));
    bench.add_option("-S,--shell", args.shell,
                     "Run each COMMAND as SHELL -c COMMAND (default /bin/sh; the shell is measured too, "
                     "about 0.5 MiB for dash). 'none': see -N")
        ->option_text("SHELL");
    bench.add_flag("-N", args.no_shell,
                   "--shell=none: split each COMMAND into words (quotes and backslashes are honoured) and run it "
                   "without a shell, so the shell is not measured");
    bench.add_option("--backend", args.backend,
                     "How each run is followed: ptrace (default), ebpf or sample (see 'max_rss --help')")
        ->option_text("NAME")
        ->check(backend_value());
    bench.add_flag("-i,--ignore-failure", args.ignore_failure,
                   "Keep going when a COMMAND exits non-zero (runs still count)");
    bench.add_flag("--show-output", args.show_output, "Let the COMMANDs' stdout and stderr through");
    bench.add_option("--style", args.style,
                     "auto (default: full on a terminal unless NO_COLOR, else basic), basic (no bar, no colour), "
                     "full, nocolor, color (no bar) or none (no summary)")
        ->option_text("TYPE");
    const auto path_option = [&](const char* name, std::string& target, const char* what) {
        bench.add_option(name, target, what)->option_text("FILE")->check(path_value());
    };
    path_option("--export-json", args.export_json,
                "Write every run and statistic as JSON, a superset of hyperfine's, to FILE ('-' = stdout)");
    path_option("--export-markdown", args.export_markdown, "Write a Markdown table to FILE ('-' = stdout)");
    path_option("--export-asciidoc", args.export_asciidoc, "Write an AsciiDoc table to FILE ('-' = stdout)");
    path_option("--export-csv", args.export_csv, "Write a CSV table to FILE ('-' = stdout)");
    path_option("--export-github-benchmark", args.export_github_benchmark,
                "Write github-action-benchmark's customSmallerIsBetter JSON to FILE ('-' = stdout)");
    path_option("--export-bencher", args.export_bencher,
                "Write Bencher Metric Format (BMF) JSON to FILE ('-' = stdout)");
    bench.add_option("--budget", args.budget,
                     "Exit 3 when a COMMAND's median peak exceeds SIZE (512MiB, 1.5GiB, 300MB, 512Mi); once for "
                     "all or once per COMMAND")
        ->option_text("SIZE")
        ->allow_extra_args(false)
        ->check(size_value());
    bench.add_option("--save-baseline", args.save_baseline,
                     "Also save the JSON export as baseline NAME (.max_rss/baselines/NAME.json, or "
                     "$MAX_RSS_BASELINE_DIR/NAME.json)")
        ->option_text("NAME")
        ->check(baseline_name_value());
    bench.add_option("--compare-baseline", args.compare_baseline,
                     "Then compare with baseline NAME as `max_rss compare --baseline NAME` would (its defaults); "
                     "exit 1 on a regression")
        ->option_text("NAME")
        ->check(baseline_name_value());
}

}  // namespace max_rss::cli
