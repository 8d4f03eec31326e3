#include <max_rss/report/labels.hpp>
#include <max_rss/util/text.hpp>

#include <algorithm>

namespace max_rss {

namespace {

std::string_view name_of(const Program& program) {
    if (program.argv.empty()) return program.exe;
    std::string_view argv0 = program.argv[0];
    const size_t slash = argv0.rfind('/');
    return slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
}

// "/usr/lib/x/liblto.so" -> "…/liblto.so"; options ("-o", "--x=/a/b") and
// words without a directory stay as they are.
std::string short_path(const std::string& arg) {
    const size_t slash = arg.rfind('/');
    if (arg.empty() || arg[0] == '-' || slash == std::string::npos || slash + 1 == arg.size()) return arg;
    return "…/" + arg.substr(slash + 1);
}

}  // namespace

std::string one_line(std::string_view text) {
    std::string line;
    for (char c : text) {
        const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
        if (space) {
            if (line.empty() || line.back() != ' ') line += ' ';
        } else {
            line += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
        }
    }
    return line;
}

const Program* main_program(const Process& process) {
    const Image* best = nullptr;
    for (const auto& img : process.images)
        if (!best || img.peak_rss_bytes >= best->peak_rss_bytes) best = &img;
    return best ? best->program.get() : nullptr;
}

std::string program_name(const Program* program) {
    if (!program || (program->argv.empty() && program->exe.empty())) return "?";
    return std::string(name_of(*program));
}

std::string command_line(const Program* program) {
    if (!program || (program->argv.empty() && program->exe.empty())) return "?";
    std::string s(name_of(*program));
    for (size_t i = 1; i < program->argv.size(); ++i) s += " " + program->argv[i];
    return one_line(s);
}

ProgramLabels::ProgramLabels(const std::vector<const Program*>& programs) {
    for (const Program* program : programs) {
        if (!program || program->argv.size() < 2) continue;
        const std::string name(name_of(*program));
        std::vector<std::string> args(program->argv.begin() + 1, program->argv.end());
        std::sort(args.begin(), args.end());
        args.erase(std::unique(args.begin(), args.end()), args.end());
        auto [common, first] = common_args_.try_emplace(name, args);
        if (!first) {
            // Programs that are the same object (forks of one image) add nothing.
            std::vector<std::string> kept;
            std::set_intersection(common->second.begin(), common->second.end(), args.begin(), args.end(),
                                  std::back_inserter(kept));
            common->second = std::move(kept);
        }
        ++group_size_[name];
    }
}

std::string ProgramLabels::label(const Program* program, size_t max_columns) const {
    const std::string full = command_line(program);
    if (display_width(full) <= max_columns || !program || program->argv.empty()) return truncate_to_width(full, max_columns);
    const std::string name(name_of(*program));
    // Paths by their last component: "…/pyenv-which" says more in less room.
    std::string compact = name;
    for (size_t i = 1; i < program->argv.size(); ++i) compact += " " + short_path(program->argv[i]);
    compact = one_line(compact);
    if (display_width(compact) <= max_columns) return compact;
    const auto common = common_args_.find(name);
    const auto size = group_size_.find(name);
    std::vector<std::string> distinct;
    if (common != common_args_.end() && size != group_size_.end() && size->second > 1) {
        for (size_t i = 1; i < program->argv.size(); ++i) {
            const std::string& arg = program->argv[i];
            if (std::binary_search(common->second.begin(), common->second.end(), arg)) continue;
            if (std::find(distinct.begin(), distinct.end(), arg) == distinct.end()) distinct.push_back(arg);
        }
    }
    const std::string cut = truncate_to_width(compact, max_columns);
    // Nothing to leave out before the first distinguishing argument: the
    // plain command shows it soonest.
    if (distinct.empty() || distinct.front() == program->argv[1]) return cut;
    // Still there, whole, before the cut: the command says it all.
    const std::string_view shown = std::string_view(cut).substr(0, cut.size() - std::string_view("…").size());
    const std::string word = one_line(" " + short_path(distinct.front()));
    if (const size_t at = shown.find(word); at != std::string_view::npos) {
        const size_t after = at + word.size();
        if (after < shown.size() && shown[after] == ' ') return cut;
    }
    std::string s = name + " …";
    for (const auto& arg : distinct) s += " " + short_path(arg);
    s = one_line(s);
    // Leaving out the common part helps only when the first distinguishing
    // argument then shows whole.
    if (display_width(one_line(name + " … " + short_path(distinct.front()))) > max_columns) return cut;
    return truncate_to_width(s, max_columns);
}

}  // namespace max_rss
