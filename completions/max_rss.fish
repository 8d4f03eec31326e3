# fish completion for max_rss(1). Installed as
# share/fish/vendor_completions.d/max_rss.fish, which fish loads on first use.
#
# Every option of `max_rss [bench|compare] --help` must be completed here:
# tests/install/check_install.sh completes each mode in a real fish and fails
# otherwise.

# Options that take their value in the next word, per mode.
set -g __max_rss_run_valued -o --output --interval --plot --backend --budget
set -g __max_rss_bench_valued -r --runs -w --warmup -n --command-name -p --prepare -S --shell --backend \
    --style --export-json --export-markdown --export-csv --budget
set -g __max_rss_compare_valued -t --threshold

# Prints the mode the command line is in: run, bench, compare, or command when
# the cursor is in COMMAND (after `--`, or after the first word of the run
# mode that is not an option); with -c, prints COMMAND's words instead.
function __max_rss_mode
    set -l words (commandline -opc)
    set -e words[1]
    set -l mode run
    set -l dashdash 0
    set -l skip 0
    for i in (seq (count $words))
        set -l word $words[$i]
        if test $skip -eq 1
            set skip 0
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
            contains -- $word $$valued; and set skip 1
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
    set -q argv[1]; or echo $mode
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
complete -c max_rss -n $bench -s w -l warmup -x -d 'Unrecorded runs before the measured ones'
complete -c max_rss -n $bench -s n -l command-name -x -d 'Name for a COMMAND, in order'
complete -c max_rss -n $bench -s p -l prepare -x -a '(__fish_complete_command)' -d 'Run CMD before each run'
complete -c max_rss -n $bench -s S -l shell -x -a 'none\t"no shell, as -N" (string match -r "^/.*" </etc/shells)' \
    -d 'Run each COMMAND as SHELL -c COMMAND'
complete -c max_rss -n $bench -s N -d 'Run each COMMAND without a shell'
complete -c max_rss -n $bench -l backend -x -a 'ptrace sample ebpf' -d 'How each run is followed'
complete -c max_rss -n $bench -s i -l ignore-failure -d 'Keep going when a COMMAND exits non-zero'
complete -c max_rss -n $bench -l show-output -d "Let the COMMANDs' stdout and stderr through"
complete -c max_rss -n $bench -l style -x -a 'auto basic full nocolor color none' -d 'Output style'
complete -c max_rss -n $bench -l export-json -r -F -d 'Write all runs and statistics as JSON'
complete -c max_rss -n $bench -l export-markdown -r -F -d 'Write a Markdown table'
complete -c max_rss -n $bench -l export-csv -r -F -d 'Write a CSV table'
complete -c max_rss -n $bench -l budget -x -d 'Exit 3 when a median peak exceeds SIZE'
complete -c max_rss -n $bench -s h -l help -d "Print bench's options"
complete -c max_rss -n $bench -a '(__fish_complete_command)'

# compare.
set -l compare '__max_rss_in compare'
complete -c max_rss -n $compare -s t -l threshold -x -d 'Growth that counts as a regression (default 5%)'
complete -c max_rss -n $compare -s h -l help -d "Print compare's options"
complete -c max_rss -n $compare -k -a '(__fish_complete_suffix .json)'
