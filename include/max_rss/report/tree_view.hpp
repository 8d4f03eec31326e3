// The process tree of a run as text, like pstree with memory figures.
// Pure: RunResult in, string out; no terminal I/O.
#pragma once

#include <max_rss/model.hpp>

#include <string>

namespace max_rss {

// One line per process, children indented under the process that created
// them (Process::ppid, matched to the latest earlier process with that pid, so
// reparented orphans stay under their creator), siblings in creation order,
// processes[0] first:
//
//   100        300.0 MiB  fork_exec 300
//   ├─ 101      10.0 MiB  fork_exec 300 (1.0 MiB) → touch 10 (10.0 MiB)
//   │  └─ 103  512.0 KiB  sleep 1  [killed by SIGKILL]
//   └─ 102       2.0 MiB  worker  [4 threads, exit 3]
//
// Columns: tree and pid, the process's peak right-aligned ("?" when no image
// was measured), then its command. A process that exec'd shows every image
// with that image's own peak, joined by "→". Notes in brackets: threads when
// more than 1, the exit when non-zero or a signal, shared mm, orphaned.
// With more than 200 processes, runs of 2 or more alike leaf siblings (same
// images and notes, no children) become one line: "×1999" in the pid column,
// their largest peak, the command, and "[peak max of 1999, pids 102…2100]".
// With color, ANSI escapes dim the tree, embolden peaks and redden failures.
std::string format_tree(const RunResult& result, bool color);

}  // namespace max_rss
