#!/usr/bin/env bash
# The memory gate of the GitHub Action (action.yml), usable from any CI:
# runs `max_rss bench` on the commands, compares the result with a baseline,
# writes the Markdown (the comparison, then the table) to $GITHUB_STEP_SUMMARY
# when that is set, and exits last with the gate's status:
#   bench's own failure (a command's exit code, 3 over --budget, ...) first,
#   else compare's (1 a regression or a missing benchmark), else 0.
# Nothing aborts before the summary is written: no `set -e` here.
#
# Inputs, from the environment (action.yml maps its inputs onto them):
#   MAX_RSS_COMMANDS        commands to measure, one per line (required)
#   MAX_RSS_NAMES           their names, one per line, in order (optional)
#   MAX_RSS_RUNS            runs per command (default 5)
#   MAX_RSS_WARMUP          warmup runs (default 1)
#   MAX_RSS_NO_SHELL        "true": run the commands without a shell (-N)
#   MAX_RSS_BUDGET          --budget for every command (optional)
#   MAX_RSS_BASELINE        the baseline file (default .max_rss/baselines/main.json)
#   MAX_RSS_SAVE_BASELINE   "true": after a successful bench, write the result there
#   MAX_RSS_THRESHOLD, MAX_RSS_MIN_CHANGE, MAX_RSS_SIGNIFICANCE   compare's options
#   MAX_RSS_ALLOW_MISSING   "true": a benchmark missing from the new results passes
#   MAX_RSS_OUT_DIR         where the results go (default max_rss-results)
#   MAX_RSS                 the max_rss binary (default: max_rss on PATH)
set -u -o pipefail

max_rss=${MAX_RSS:-max_rss}
out_dir=${MAX_RSS_OUT_DIR:-max_rss-results}
baseline=${MAX_RSS_BASELINE:-.max_rss/baselines/main.json}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}

say() { echo "memory-gate: $*" >&2; }

if [[ -z "${MAX_RSS_COMMANDS:-}" ]]; then
  say "MAX_RSS_COMMANDS is empty: give the commands to measure, one per line"
  exit 2
fi
mkdir -p "$out_dir" || exit 2

args=(bench --runs "${MAX_RSS_RUNS:-5}" --warmup "${MAX_RSS_WARMUP:-1}" --style basic
      --export-json "$out_dir/memory.json" --export-markdown "$out_dir/memory.md")
[[ "${MAX_RSS_NO_SHELL:-false}" == true ]] && args+=(-N)
[[ -n "${MAX_RSS_BUDGET:-}" ]] && args+=(--budget "$MAX_RSS_BUDGET")
while IFS= read -r name; do
  [[ -n "$name" ]] && args+=(--command-name "$name")
done <<< "${MAX_RSS_NAMES:-}"
args+=(--)
while IFS= read -r command; do
  [[ -n "$command" ]] && args+=("$command")
done <<< "$MAX_RSS_COMMANDS"

rm -f "$out_dir/memory.json" "$out_dir/memory.md" "$out_dir/compare.md" "$out_dir/compare.json"
"$max_rss" "${args[@]}"
bench_status=$?

compare_status=0
compare_note=""
if [[ ! -s "$out_dir/memory.json" ]]; then
  compare_note="bench wrote no results (exit $bench_status): nothing to compare."
elif [[ ! -f "$baseline" ]]; then
  compare_note="No baseline at \`$baseline\` yet: nothing compared. Save one from the main branch (save-baseline: true)."
else
  compare_args=(compare "$baseline" "$out_dir/memory.json"
                --markdown "$out_dir/compare.md" --json "$out_dir/compare.json")
  [[ -n "${MAX_RSS_THRESHOLD:-}" ]] && compare_args+=(--threshold "$MAX_RSS_THRESHOLD")
  [[ -n "${MAX_RSS_MIN_CHANGE:-}" ]] && compare_args+=(--min-change "$MAX_RSS_MIN_CHANGE")
  [[ -n "${MAX_RSS_SIGNIFICANCE:-}" ]] && compare_args+=(--significance "$MAX_RSS_SIGNIFICANCE")
  [[ "${MAX_RSS_ALLOW_MISSING:-false}" == true ]] && compare_args+=(--allow-missing)
  "$max_rss" "${compare_args[@]}"
  compare_status=$?
fi

{
  if [[ -s "$out_dir/compare.md" ]]; then
    cat "$out_dir/compare.md"
  else
    echo "### max_rss: peak memory"
    echo
    echo "$compare_note"
  fi
  echo
  if [[ -s "$out_dir/memory.md" ]]; then
    echo "#### This run"
    echo
    cat "$out_dir/memory.md"
  fi
  # An if, not `(( )) &&`: that list's status (1 when bench passed) would be
  # the block's, and read as a failed write.
  if (( bench_status != 0 )); then
    printf '\n**max_rss bench exited with %s** (see the log).\n' "$bench_status"
  fi
} >> "$summary" || say "cannot write the step summary to $summary"

if [[ "${MAX_RSS_SAVE_BASELINE:-false}" == true ]]; then
  if (( bench_status == 0 )); then
    mkdir -p "$(dirname "$baseline")" && cp "$out_dir/memory.json" "$baseline" && say "baseline saved to $baseline"
  else
    say "bench failed (exit $bench_status): baseline not saved"
  fi
fi

if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  {
    echo "json=$out_dir/memory.json"
    echo "markdown=$out_dir/memory.md"
    echo "compare-markdown=$out_dir/compare.md"
    echo "bench-status=$bench_status"
    echo "compare-status=$compare_status"
  } >> "$GITHUB_OUTPUT"
fi

(( bench_status != 0 )) && exit "$bench_status"
exit "$compare_status"
