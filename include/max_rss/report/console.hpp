// Human summaries, built as strings so they can be tested. No terminal I/O here.
#pragma once

#include <max_rss/model.hpp>

#include <string>

namespace max_rss {

// The short summary printed on stderr after a run: tree peak, process count,
// the largest process, and what ru_maxrss (GNU time, hyperfine) would claim.
std::string format_summary(const RunResult& result);

// A program's name for one line: basename of argv[0] plus arguments, shortened.
std::string short_command(const Program* program, size_t max_chars = 48);

}  // namespace max_rss
