# fish completion for max_rss(1). Installed as
# share/fish/vendor_completions.d/max_rss.fish, which fish loads on first use.
#
# Every option of `max_rss [bench|compare] --help` must be completed here:
# tests/install/check_install.sh completes each mode in a real fish and fails
# otherwise.

# Options that take their value in the next word, per mode.
set -g __max_rss_run_valued -o --output --interval --plot --backend --budget --tree-min --tree-depth
set -g __max_rss_bench_valued -r --runs -m --min-runs -M --max-runs -w --warmup -n --command-name \
    -s --setup -p --prepare -c --cleanup -P --parameter-scan -D --parameter-step-size -L --parameter-list \
    --reference --sort -S --shell --backend --style --export-json --export-markdown --export-asciidoc \
    --export-csv --export-github-benchmark --export-bencher --budget --save-baseline --compare-baseline
set -g __max_rss_compare_valued -t --threshold --min-change --significance --markdown --json --baseline
# Of those, the ones whose value is more than one word: NAME MIN MAX, NAME VALUES.
set -g __max_rss_three_words -P --parameter-scan
set -g __max_rss_two_words -L --parameter-list

# Prints the mode the command line is in: run, bench, compare, or command when
# the cursor is in COMMAND (after `--`, or after the first word of the run
# mode that is not an option), or value when it is in the second or third word
# of -P's or -L's value; with -c, prints COMMAND's words instead.
function __max_rss_mode
    set -l words (commandline -opc)
    set -e words[1]
    set -l mode run
    set -l dashdash 0
    set -l skip 0
    set -l arity 0
    for i in (seq (count $words))
        set -l word $words[$i]
        if test $skip -gt 0
            set skip (math $skip - 1)
            continue
        end
        if test "$word" = --
            if test $mode = run
                set -q argv[1]; and printf '%s\n' $words[(math $i + 1)..-1]
                echo command
                return
            end
            set dashdash 1
            continue
        end
        if test $dashdash -eq 0; and string match -q -- '-*' $word
            set -l valued __max_rss_{$mode}_valued
            if contains -- $word $$valued
                set arity 1
                contains -- $word $__max_rss_three_words; and set arity 3
                contains -- $word $__max_rss_two_words; and set arity 2
                set skip $arity
            end
            continue
        end
        if test $mode = run
            if contains -- $word bench compare
                set mode $word
                continue
            end
            set -q argv[1]; and printf '%s\n' $words[$i..-1]
            echo command
            return
        end
    end
    if set -q argv[1]
        return
    end
    # Past the first word of a value of several words: nothing to offer.
    if test $skip -gt 0 -a $skip -lt $arity
        echo value
        return
    end
    echo $mode
end

# The names of the saved baselines (bench --save-baseline NAME).
function __max_rss_baselines
    set -l dir .max_rss/baselines
    test -n "$MAX_RSS_BASELINE_DIR"; and set dir $MAX_RSS_BASELINE_DIR
    for file in $dir/*.json
        test -f $file; and string replace -r '^.*/(.*)\.json$' '$1' -- $file
    end
end

function __max_rss_in
    test (__max_rss_mode) = $argv[1]
end

# COMMAND's own words, completed as if COMMAND were typed alone.
function __max_rss_complete_command
    set -l words (__max_rss_mode -c)
    set -e words[-1]
    __fish_complete_subcommand --commandline $words (commandline -ct)
end

complete -c max_rss -f

# The run mode.
set -l run '__max_rss_in run'
complete -c max_rss -n $run -s o -l output -r -F -d 'Write the JSON report to FILE (- = stdout)'
complete -c max_rss -n $run -s q -l quiet -d 'Do not print the summary on stderr'
complete -c max_rss -n $run -s v -l verbose -d 'More log output on stderr (-vv: every ptrace stop)'
complete -c max_rss -n $run -l interval -x -d 'Sample the live tree every DURATION (20ms; 0 = only at exits)'
complete -c max_rss -n $run -l plot -r -F -d 'Draw memory over time into an HTML page FILE'
complete -c max_rss -n $run -l backend -x -a 'ptrace\t"stop each process at birth, exec and exit (default)"
    sample\t"no ptrace, read /proc every --interval" ebpf\t"follow the tree with eBPF, no ptrace"' -d 'How to follow the tree'
complete -c max_rss -n $run -l tree -d "Print the process tree with each process's peak"
complete -c max_rss -n $run -l wide -d 'Never cut tree lines to the width (implies --tree)'
complete -c max_rss -n $run -l tree-min -x -d 'Hide processes whose peak is below SIZE (implies --tree)'
complete -c max_rss -n $run -l tree-depth -x -d 'Show N levels of the tree below the root (implies --tree)'
complete -c max_rss -n $run -l cgroup -d 'Also run the tree in a memory cgroup and report its peak'
complete -c max_rss -n $run -l budget -x -d 'Exit 3 when the tree peak exceeds SIZE (512MiB, 1.5GiB)'
complete -c max_rss -n $run -s h -l help -d 'Print the options'
complete -c max_rss -n $run -s V -l version -d 'Print the version'
complete -c max_rss -n $run -a bench -d 'Several runs of several commands, exports'
complete -c max_rss -n $run -a compare -d 'Compare two reports, fail on a regression'
complete -c max_rss -n $run -a '(__fish_complete_command)'
complete -c max_rss -n '__max_rss_in command' -a '(__max_rss_complete_command)'

# bench.
set -l bench '__max_rss_in bench'
complete -c max_rss -n $bench -s r -l runs -x -d 'Measured runs per COMMAND (default 5)'
complete -c max_rss -n $bench -s m -l min-runs -x -d 'As many runs as fit in 3 s, at least N (default 10)'
complete -c max_rss -n $bench -s M -l max-runs -x -d 'As many runs as fit in 3 s, at most N'
complete -c max_rss -n $bench -s w -l warmup -x -d 'Unrecorded runs before the measured ones'
complete -c max_rss -n $bench -s n -l command-name -x -d 'Name for a COMMAND, in order ({NAME} substituted)'
complete -c max_rss -n $bench -s s -l setup -x -a '(__fish_complete_command)' -d "Run CMD once before each COMMAND's runs"
complete -c max_rss -n $bench -s p -l prepare -x -a '(__fish_complete_command)' -d 'Run CMD before each run'
complete -c max_rss -n $bench -s c -l cleanup -x -a '(__fish_complete_command)' -d "Run CMD once after each COMMAND's last run"
complete -c max_rss -n $bench -s P -l parameter-scan -x -d 'Benchmark each COMMAND for {NAME} = MIN ... MAX (NAME MIN MAX)'
complete -c max_rss -n $bench -s D -l parameter-step-size -x -d 'STEP of --parameter-scan (default 1)'
complete -c max_rss -n $bench -s L -l parameter-list -x -d 'Benchmark each COMMAND for each value of {NAME} (NAME V1,V2,...)'
complete -c max_rss -n $bench -l reference -x -a '(__fish_complete_command)' -d 'Benchmark CMD first, every ratio against it'
complete -c max_rss -n $bench -l sort -x -a 'auto\t"summary by mean peak, tables in COMMAND order"
    command\t"COMMAND order everywhere" mean-peak\t"by mean peak" mean-time\t"by mean wall time"' -d 'Order of the summary and tables'
complete -c max_rss -n $bench -s S -l shell -x -a 'none\t"no shell, as -N" (string match -r "^/.*" </etc/shells)' \
    -d 'Run each COMMAND as SHELL -c COMMAND'
complete -c max_rss -n $bench -s N -d 'Run each COMMAND without a shell'
complete -c max_rss -n $bench -l backend -x -a 'ptrace sample ebpf' -d 'How each run is followed'
complete -c max_rss -n $bench -s i -l ignore-failure -d 'Keep going when a COMMAND exits non-zero'
complete -c max_rss -n $bench -l show-output -d "Let the COMMANDs' stdout and stderr through"
complete -c max_rss -n $bench -l style -x -a 'auto basic full nocolor color none' -d 'Output style'
complete -c max_rss -n $bench -l export-json -r -F -d 'Write all runs and statistics as JSON'
complete -c max_rss -n $bench -l export-markdown -r -F -d 'Write a Markdown table'
complete -c max_rss -n $bench -l export-asciidoc -r -F -d 'Write an AsciiDoc table'
complete -c max_rss -n $bench -l export-csv -r -F -d 'Write a CSV table'
complete -c max_rss -n $bench -l export-github-benchmark -r -F -d "Write github-action-benchmark's customSmallerIsBetter JSON"
complete -c max_rss -n $bench -l export-bencher -r -F -d 'Write Bencher Metric Format (BMF) JSON'
complete -c max_rss -n $bench -l budget -x -d 'Exit 3 when a median peak exceeds SIZE (once, or once per COMMAND)'
complete -c max_rss -n $bench -l save-baseline -x -a '(__max_rss_baselines)' -d 'Also save the JSON export as baseline NAME'
complete -c max_rss -n $bench -l compare-baseline -x -a '(__max_rss_baselines)' -d 'Then compare with baseline NAME'
complete -c max_rss -n $bench -s h -l help -d "Print bench's options"
complete -c max_rss -n $bench -a '(__fish_complete_command)'

# compare.
set -l compare '__max_rss_in compare'
complete -c max_rss -n $compare -s t -l threshold -x -d 'Relative change that counts (default 5%)'
complete -c max_rss -n $compare -l min-change -x -d 'Absolute change that counts (default 1MiB; 0B for none)'
complete -c max_rss -n $compare -l significance -x -d 'Level of the Mann-Whitney U test (default 0.05)'
complete -c max_rss -n $compare -l allow-missing -d 'A benchmark of BASE missing from NEW does not fail'
complete -c max_rss -n $compare -l markdown -r -F -d 'Also write the comparison as Markdown'
complete -c max_rss -n $compare -l json -r -F -d 'Also write the comparison as JSON'
complete -c max_rss -n $compare -l baseline -x -a '(__max_rss_baselines)' -d 'Read BASE from a saved baseline'
complete -c max_rss -n $compare -s h -l help -d "Print compare's options"
complete -c max_rss -n $compare -k -a '(__fish_complete_suffix .json)'
