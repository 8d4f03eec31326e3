# bash completion for max_rss(1)                           -*- shell-script -*-
# Installed as share/bash-completion/completions/max_rss, where bash-completion
# loads it on first use; `source` it to try it by hand. It needs nothing from
# bash-completion, but uses _command_offset from it when present to complete
# COMMAND's own arguments.
#
# Every option of `max_rss [bench|compare] --help` must be in the lists below:
# tests/install/check_install.sh completes each mode and fails otherwise.

_max_rss_run_opts='-o --output -q --quiet -v --verbose --interval --plot --backend --tree --wide --tree-min --tree-depth --cgroup --budget
  -h --help -V --version'
_max_rss_bench_opts='-r --runs -m --min-runs -M --max-runs -w --warmup -n --command-name -s --setup
  -p --prepare -c --cleanup -P --parameter-scan -D --parameter-step-size -L --parameter-list --reference
  --sort -S --shell -N --backend -i --ignore-failure --show-output --style --export-json --export-markdown
  --export-asciidoc --export-csv --export-github-benchmark --export-bencher --budget --save-baseline
  --compare-baseline -h --help'
_max_rss_compare_opts='-t --threshold --min-change --significance --allow-missing --markdown --json
  --baseline -h --help'
# Options that take a value in the next word (or after '=').
_max_rss_run_valued='-o --output --interval --plot --backend --budget --tree-min --tree-depth'
_max_rss_bench_valued='-r --runs -m --min-runs -M --max-runs -w --warmup -n --command-name -s --setup
  -p --prepare -c --cleanup -P --parameter-scan -D --parameter-step-size -L --parameter-list --reference
  --sort -S --shell --backend --style --export-json --export-markdown --export-asciidoc --export-csv
  --export-github-benchmark --export-bencher --budget --save-baseline --compare-baseline'
_max_rss_compare_valued='-t --threshold --min-change --significance --markdown --json --baseline'

# How many words of value valued option $1 takes: NAME MIN MAX, NAME VALUES, or one.
_max_rss_arity() {
    case $1 in
        -P | --parameter-scan) echo 3 ;;
        -L | --parameter-list) echo 2 ;;
        *) echo 1 ;;
    esac
}

# Whether word $1 is one of the words of $2.
_max_rss_in() {
    local w
    for w in $2; do [[ $w == "$1" ]] && return 0; done
    return 1
}

# Command names (compgen -c repeats a name found in several places).
_max_rss_commands() {
    mapfile -t COMPREPLY < <(compgen -c -- "$1" | sort -u)
}

_max_rss_files() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
}

# The names of the saved baselines (bench --save-baseline NAME).
_max_rss_baselines() {
    local dir=${MAX_RSS_BASELINE_DIR:-.max_rss/baselines} file names=()
    for file in "$dir"/*.json; do
        [[ -f $file ]] && file=${file##*/} && names+=("${file%.json}")
    done
    mapfile -t COMPREPLY < <(compgen -W "${names[*]}" -- "$1")
}

# Completes the value of option $1 (the word being completed is $2).
_max_rss_value() {
    case $1 in
        -o | --output | --plot | --export-json | --export-markdown | --export-asciidoc | --export-csv | \
            --export-github-benchmark | --export-bencher | --markdown | --json) _max_rss_files "$2" ;;
        --save-baseline | --compare-baseline | --baseline) _max_rss_baselines "$2" ;;
        --sort) mapfile -t COMPREPLY < <(compgen -W 'auto command mean-peak mean-time' -- "$2") ;;
        --backend) mapfile -t COMPREPLY < <(compgen -W 'ptrace sample ebpf' -- "$2") ;;
        --style) mapfile -t COMPREPLY < <(compgen -W 'auto basic full nocolor color none' -- "$2") ;;
        -S | --shell)
            local shells
            shells=$(grep -s '^/' /etc/shells)
            mapfile -t COMPREPLY < <(compgen -W "none $shells" -- "$2")
            ;;
        -s | --setup | -p | --prepare | -c | --cleanup | --reference) _max_rss_commands "$2" ;;
        *) COMPREPLY=() ;;  # a number, a size, a duration, a name: nothing to offer
    esac
}

_max_rss() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    # `--opt=value`: bash splits it into "--opt" "=" "value" (COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        _max_rss_value "$prev" ""
        return
    fi
    if [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
        _max_rss_value "${COMP_WORDS[COMP_CWORD - 2]}" "$cur"
        return
    fi

    # Which mode the words before the cursor chose, and where COMMAND starts.
    local mode=run command_at=0 dashdash=0 positionals=0 i word
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -- ]]; then
            dashdash=1
            if [[ $mode == run ]]; then
                command_at=$((i + 1))
                break
            fi
            continue
        fi
        if ((!dashdash)) && [[ $word == -* ]]; then
            local valued_var=_max_rss_${mode}_valued arity
            if _max_rss_in "$word" "${!valued_var}"; then
                arity=$(_max_rss_arity "$word")
                [[ ${COMP_WORDS[i + 1]} == = ]] && ((arity++))  # --opt=value: '=' is a word
                if ((i + arity >= COMP_CWORD)); then
                    # The cursor is in this option's value; only -P's and -L's
                    # later words (numbers, values) get nothing.
                    if ((i + 1 == COMP_CWORD)); then
                        _max_rss_value "$word" "$cur"
                    fi
                    return
                fi
                ((i += arity))  # its value(s)
            elif [[ ${COMP_WORDS[i + 1]} == = ]]; then
                ((i += 2))  # --flag=value
            fi
            continue
        fi
        if [[ $mode == run ]]; then
            if [[ $word == bench || $word == compare ]]; then
                mode=$word
                continue
            fi
            command_at=$i
            break
        fi
        ((positionals++))
    done

    if ((command_at)); then
        # COMMAND's own words: complete as if COMMAND were typed alone.
        if declare -F _command_offset >/dev/null; then
            _command_offset "$command_at"
        elif ((COMP_CWORD == command_at)); then
            _max_rss_commands "$cur"
        else
            _max_rss_files "$cur"
        fi
        return
    fi

    local valued_var=_max_rss_${mode}_valued
    if ((!dashdash)) && _max_rss_in "$prev" "${!valued_var}"; then
        _max_rss_value "$prev" "$cur"
        return
    fi
    if ((!dashdash)) && [[ $cur == -* ]]; then
        local opts_var=_max_rss_${mode}_opts
        mapfile -t COMPREPLY < <(compgen -W "${!opts_var} --" -- "$cur")
        return
    fi
    case $mode in
        run) mapfile -t COMPREPLY < <(compgen -W 'bench compare' -- "$cur"; compgen -c -- "$cur" | sort -u) ;;
        bench) _max_rss_commands "$cur" ;;
        compare)
            ((positionals < 2)) || return
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
            ;;
    esac
}
complete -F _max_rss max_rss
