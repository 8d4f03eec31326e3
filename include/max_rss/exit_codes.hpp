// Exit codes of max_rss itself. Otherwise max_rss exits as the traced program
// did: its exit code, or 128 + N when signal N killed it (like a shell).
#pragma once

namespace max_rss::exit_code {

inline constexpr int ok = 0;
inline constexpr int regression = 1;       // `compare`: a command grew beyond the threshold
inline constexpr int usage = 2;            // bad command line; nothing was run
inline constexpr int over_budget = 3;      // --budget exceeded by a program that itself succeeded
inline constexpr int internal_error = 125; // max_rss's own failure (as timeout(1) and env(1))
inline constexpr int not_executable = 126; // the command exists but cannot be executed
inline constexpr int not_found = 127;      // the command was not found

}  // namespace max_rss::exit_code
