// Exit codes of max_rss itself. Otherwise max_rss exits as the traced program
// did: its exit code, or 128 + N when signal N killed it (like a shell).
#pragma once

namespace max_rss::exit_code {

inline constexpr int ok = 0;
inline constexpr int regression = 1;       // `compare`: a command grew beyond the threshold
inline constexpr int usage = 2;            // bad command line; nothing was run
inline constexpr int over_budget = 3;      // --budget exceeded by a program that itself succeeded
inline constexpr int output_failed = 4;    // a report, plot or export could not be written (the others were)
inline constexpr int internal_error = 125; // max_rss's own failure (as timeout(1) and env(1))
inline constexpr int not_executable = 126; // the command exists but cannot be executed
inline constexpr int not_found = 127;      // the command was not found

// The exit status of a run, or of a bench that measured every command: the
// program's own non-zero status (its code, or 128 + signal) wins, because it
// is what a caller of `max_rss -- prog` relies on; then over_budget, a verdict
// that was fully reached; then output_failed, whose one-line reasons are on
// stderr. 0 only when all went well.
constexpr int combine(int program_code, bool over_budget_exceeded, bool output_lost) {
    if (program_code != 0) return program_code;
    if (over_budget_exceeded) return over_budget;
    if (output_lost) return output_failed;
    return ok;
}

}  // namespace max_rss::exit_code
