// Small text helpers with one home each: signal names, exit descriptions,
// terminal width of UTF-8 text, shell quoting, whether to use colour.
#pragma once

#include <max_rss/model.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace max_rss {

// "SIGTERM" for 15; "signal 99" for what has no name.
std::string signal_name(int sig);

// How a process ended, for people: "exit code 3", "killed by SIGKILL",
// "killed by SIGSEGV (core dumped)", "exit unknown".
std::string describe_exit(const ExitStatus& exit);

// Terminal columns of UTF-8 text, counting each code point as one (what the
// padded columns of tables and trees hold: digits, box drawing, "×", "…").
size_t display_width(std::string_view text);

// text cut to at most max_columns (as display_width counts them), ending in
// "…" when anything was cut (spaces before it dropped); never splits a UTF-8
// sequence. max_columns 0
// gives "".
std::string truncate_to_width(std::string_view text, size_t max_columns);

// A word as a POSIX shell reads it back: unchanged when every character is
// plain ([A-Za-z0-9_@%+=:,./-]), else single-quoted ('it'\''s').
std::string shell_quote(std::string_view word);
// The words shell_quote()d and joined by spaces.
std::string shell_join(std::span<const std::string> words);

// NO_COLOR is set to a non-empty value (no-color.org): no colour, anywhere.
bool no_color_set();
// Colour on what goes to fd: it is a terminal and !no_color_set().
bool color_wanted(int fd);

// How many columns a line written to fd may take, the way POSIX tools decide:
// $COLUMNS when it is a positive number (the user's stated preference), else
// the terminal's width (TIOCGWINSZ) when fd is a terminal, else nullopt (a
// file, a pipe, a CI log: no width, nothing is cut).
std::optional<size_t> output_columns(int fd);

}  // namespace max_rss
