// Names for processes where one line must tell them apart: the tree, the
// summary, the plot's legend. Pure: programs in, text out.
#pragma once

#include <max_rss/model.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace max_rss {

// The program a process is best known by: its image with the largest peak
// (the later one on a tie, which is the exec'd program rather than the fork).
// Null when it has no image.
const Program* main_program(const Process& process);

// A program's command as one line: the basename of argv[0], then the
// arguments, space-separated, on one line (runs of white space, newlines
// included, become one space; other control characters '?'); exe when argv
// is empty, "?" when there is neither.
std::string command_line(const Program* program);
// text fit for one line of a terminal: runs of white space (a script's
// newlines) become one space, other control characters '?' (so a command
// line cannot send escape sequences to the terminal).
std::string one_line(std::string_view text);
// Only the name: the basename of argv[0] (or exe, or "?").
std::string program_name(const Program* program);

// Labels that keep what distinguishes programs of the same name when a label
// must be short. Built once over every program that may be named; each
// label() then fits its own width.
//
// Programs are grouped by name (argv[0]'s basename). The arguments that
// distinguish a program are those not shared by every program of its group
// (none when it is alone in its group). A label is, the first that applies:
//  - the whole command line, when it fits;
//  - the same with each path argument cut to "…/" and its last component,
//    when that fits ("bash …/pyenv-which python3");
//  - that cut to width, when it still shows the first distinguishing
//    argument whole, or when that argument is the first argument;
//  - the name, "…", and the distinguishing arguments (paths shortened), each
//    once, cut to width, when the first of them shows whole (else the cut
//    command):
//   cc1 -quiet -imultiarch x86_64-linux-gnu alpha.c -dumpbase alpha.c -o /tmp/ccA.s
//   cc1 -quiet -imultiarch x86_64-linux-gnu beta.c -dumpbase beta.c -o /tmp/ccB.s
//   at 24 columns: "cc1 … alpha.c …/ccA.s", "cc1 … beta.c …/ccB.s"
class ProgramLabels {
public:
    ProgramLabels() = default;
    explicit ProgramLabels(const std::vector<const Program*>& programs);

    // At most max_columns columns (display_width), never empty for a program.
    [[nodiscard]] std::string label(const Program* program, size_t max_columns) const;

private:
    // name -> the arguments every program of that name has (absent: alone).
    std::unordered_map<std::string, std::vector<std::string>> common_args_;
    std::unordered_map<std::string, size_t> group_size_;
};

}  // namespace max_rss
