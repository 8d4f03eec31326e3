// The process tree of a run as text, like pstree with memory figures.
// Pure: RunResult in, string out; no terminal I/O.
#pragma once

#include <max_rss/model.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace max_rss {

struct TreeOptions {
    bool color = false;  // ANSI escapes: dim tree and notes, bold peaks, red failures
    // Cut each line to this many columns, ending it in "…" (pstree's habit);
    // nullopt: never cut (--wide, or no terminal).
    std::optional<size_t> width_columns;
    // Hide processes whose peak is below this, unless a descendant is shown.
    uint64_t min_peak_bytes = 0;
    // Show processes at most this deep (the root is 0); nullopt: all.
    std::optional<unsigned> max_depth;
    // Runs of at least this many alike consecutive siblings become one line.
    size_t collapse_at = 3;
};

// One line per process, children indented under the process that created
// them (Process::ppid, matched to the latest earlier process with that pid, so
// reparented orphans stay under their creator), siblings in creation order,
// processes[0] first:
//
//   100        300.0 MiB  fork_exec 300
//   ├─ 101      10.0 MiB  fork (1.0 MiB) → touch 10 (10.0 MiB)
//   │  └─ 103  512.0 KiB  sleep 1  [killed by SIGKILL]
//   ├─ 102       2.0 MiB  vfork → worker --jobs 4  [4 threads, exit 3]
//   └─ ×40       3.3 MiB  bash pyenv-hooks which  [40 alike: 1.5–3.3 MiB, pids 210…290]
//
// Columns: tree and pid, the process's peak right-aligned ("?" when no image
// was measured), then what it ran. A process that exec'd shows its images
// joined by "→": "fork" for a forked copy of its parent (with what it added
// before exec), "vfork" for a child that ran in its parent's memory, then
// each program. Images' own peaks follow them when two or more images held
// memory of their own. Notes in brackets: threads when more than 1, the exit
// when non-zero or a signal, shared mm, orphaned, "+N deeper" where
// max_depth cut. Consecutive siblings alike in what they ran, how they ended
// and in their whole subtrees collapse into one "×N" line with their largest
// peak, and their children likewise.
//
// Then, when something was hidden, one line saying how much and why, and
// last a "key:" line explaining the notation that appears above (wrapped to
// the width, never cut).
std::string format_tree(const RunResult& result, const TreeOptions& options);

// Every notation the key line may explain, one indented line each (for --help).
std::string tree_notation();

}  // namespace max_rss
