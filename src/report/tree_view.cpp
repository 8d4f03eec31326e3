#include <max_rss/report/labels.hpp>
#include <max_rss/report/tree_view.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/util/text.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace max_rss {

namespace {

constexpr std::string_view DIM = "\x1b[2m";
constexpr std::string_view BOLD = "\x1b[1m";
constexpr std::string_view RED = "\x1b[31m";
constexpr std::string_view RESET = "\x1b[0m";
constexpr size_t kNoParent = std::numeric_limits<size_t>::max();
constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();
// A command is never cut below this to make room for its notes.
constexpr size_t kMinCommandColumns = 16;

// Every notation of the tree, in the order Used lists them.
constexpr std::string_view kNotation[] = {
    "fork (A) → prog (B): a forked copy of its parent that added A, then ran prog",
    "vfork → prog: ran in its parent's memory until it started prog",
    "a (A) → b (B): ran a, whose own peak was A, then b",
    "N more: programs run between the first and the last",
    "×N: N alike siblings in one line, with their largest peak",
    "?: no stop of it could be measured",
    "[exit N], [killed by SIG…]: how it ended, when not exit 0",
    "[shares memory of P]: a thread-like child, counted in P",
    "[orphaned]: outlived its parent",
    "+N deeper: descendants below --tree-depth",
};

// Which notation appeared, so that the key explains only that.
struct Used {
    bool fork = false, vfork = false, image_peaks = false, elided = false, group = false;
    bool unmeasured = false, ended = false, threads = false, shared = false, orphaned = false, deeper = false;
};

struct Notes {
    std::string text;  // without brackets; empty when nothing is worth saying
    bool failed = false;
};

Notes notes_of(const Process& p, Used* used) {
    std::vector<std::string> parts;
    Notes n;
    if (p.threads > 1) parts.push_back(fmt::format("{} threads", p.threads));
    if (p.shares_mm_with) parts.push_back(fmt::format("shares memory of {}", *p.shares_mm_with));
    if (p.exit.signal) parts.push_back(describe_exit(p.exit));
    else if (p.exit.code && *p.exit.code != 0) parts.push_back(fmt::format("exit {}", *p.exit.code));
    n.failed = p.exit.signal || (p.exit.code && *p.exit.code != 0);
    if (p.orphaned) parts.push_back("orphaned");
    for (const auto& part : parts) n.text += (n.text.empty() ? "" : ", ") + part;
    if (used) {
        used->threads |= p.threads > 1;
        used->shared |= p.shares_mm_with.has_value();
        used->ended |= n.failed;
        used->orphaned |= p.orphaned;
    }
    return n;
}

// "1.5–3.3 MiB", or "900.0 KiB–1.2 MiB" across units.
std::string bytes_range(uint64_t low, uint64_t high) {
    const std::string a = format_bytes(low), b = format_bytes(high);
    if (a == b) return a;
    const size_t space_a = a.rfind(' '), space_b = b.rfind(' ');
    if (space_a != std::string::npos && space_b != std::string::npos && a.substr(space_a) == b.substr(space_b))
        return a.substr(0, space_a) + "–" + b;
    return a + "–" + b;
}

bool measured(const Process& p) {
    return std::any_of(p.images.begin(), p.images.end(), [](const Image& i) { return i.measured; });
}

// One piece of a process's image chain: a word ("fork", "vfork") or a program.
struct Piece {
    const Program* program = nullptr;
    std::string_view word;
    std::string suffix;  // " (1.0 MiB)" when images' own peaks are shown
};

// One output line before alignment.
struct Row {
    std::string tree;  // the indentation glyphs
    std::string pid;   // a pid or "×N"
    std::string peak;
    std::vector<Piece> pieces;
    Notes notes;
};

// A line of the tree: one process, or alike siblings shown once.
struct Item {
    std::vector<size_t> members;  // indices into processes
};

class TreeFormatter {
public:
    TreeFormatter(const RunResult& r, const TreeOptions& options);
    std::string format();

private:
    struct Frame {
        std::vector<Item> items;
        size_t next = 0;
        std::string indent;  // glyphs in front of this level's branch glyph
    };
    void walk(const Item& root);
    std::vector<Item> items_below(const Item& item) const;
    std::vector<Piece> pieces_of(const Process& p, bool image_peaks);
    void emit(std::string tree, const Item& item);
    std::string render(const Piece& piece, size_t columns) const;
    std::string command(const std::vector<Piece>& pieces, size_t columns);
    std::string line(const Row& row, size_t left, size_t peak_width);
    std::string key_line() const;

    const RunResult& r_;
    const TreeOptions& options_;
    ProgramLabels labels_;
    std::vector<std::vector<size_t>> children_;  // visible children only, in creation order
    std::vector<size_t> roots_;                  // processes[0], then any whose creator is not in the run
    std::vector<uint32_t> shape_;                // equal: alike in every shown line of their subtrees
    std::vector<size_t> deeper_;                 // descendants max_depth hid, for processes at the cut
    size_t hidden_small_ = 0, hidden_deep_ = 0;
    std::vector<Row> rows_;
    Used used_;
};

TreeFormatter::TreeFormatter(const RunResult& r, const TreeOptions& options)
    : r_(r), options_(options), children_(r.processes.size()), shape_(r.processes.size()),
      deeper_(r.processes.size()) {
    const auto& procs = r.processes;
    const size_t n = procs.size();
    std::vector<const Program*> programs;
    for (const auto& p : procs)
        for (const auto& img : p.images) programs.push_back(img.program.get());
    labels_ = ProgramLabels(programs);

    // The parent is the latest process created before the child with the
    // child's ppid: pids are recycled, and an earlier holder of the pid
    // cannot have been the creator. Parents come before their children.
    std::vector<size_t> parent(n, kNoParent);
    std::vector<unsigned> depth(n, 0);
    std::unordered_map<pid_t, size_t> latest;  // pid -> index of its latest holder so far
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
            if (auto found = latest.find(procs[i].ppid); found != latest.end()) {
                parent[i] = found->second;
                depth[i] = depth[found->second] + 1;
            }
        }
        latest[procs[i].pid] = i;
    }
    // Children before parents: what is shown, and each subtree's shape.
    std::vector<bool> shown(n, false), any_shown_below(n, false);
    std::vector<size_t> descendants(n, 0);
    std::map<std::pair<std::string, std::vector<uint32_t>>, uint32_t> shapes;
    std::vector<std::vector<uint32_t>> child_shapes(n);
    for (size_t i = n; i-- > 0;) {
        const bool deep_enough = !options.max_depth || depth[i] <= *options.max_depth;
        shown[i] = deep_enough && (i == 0 || procs[i].peak_rss_bytes >= options.min_peak_bytes ||
                                   any_shown_below[i] || !measured(procs[i]));
        if (!deep_enough) ++hidden_deep_;
        else if (!shown[i]) ++hidden_small_;
        if (deep_enough && options.max_depth && depth[i] == *options.max_depth) deeper_[i] = descendants[i];
        if (shown[i]) {
            std::vector<uint32_t>& below = child_shapes[i];
            std::reverse(below.begin(), below.end());  // gathered last child first
            std::string own = command(pieces_of(procs[i], false), kUnlimited) + '\0' + notes_of(procs[i], nullptr).text;
            own += '\0' + std::to_string(deeper_[i]);
            const auto id = static_cast<uint32_t>(shapes.size());
            shape_[i] = shapes.try_emplace({std::move(own), std::move(below)}, id).first->second;
            below = {};
        }
        if (parent[i] != kNoParent) {
            descendants[parent[i]] += 1 + descendants[i];
            if (shown[i]) {
                any_shown_below[parent[i]] = true;
                child_shapes[parent[i]].push_back(shape_[i]);
                children_[parent[i]].push_back(i);
            }
        }
    }
    for (auto& kids : children_) std::reverse(kids.begin(), kids.end());
    used_ = Used{};  // command() above only measured: nothing is printed yet
    for (size_t i = 0; i < n; ++i)
        if (i == 0 || (parent[i] == kNoParent && shown[i])) roots_.push_back(i);
}

std::vector<Piece> TreeFormatter::pieces_of(const Process& p, bool image_peaks) {
    std::vector<Piece> pieces;
    if (p.images.empty()) return {Piece{}};
    const bool chain = p.images.size() > 1;
    for (size_t i = 0; i < p.images.size(); ++i) {
        const Image& img = p.images[i];
        Piece piece;
        piece.program = img.program.get();
        if (chain && img.origin == ImageOrigin::SharedMm) piece.word = "vfork";
        else if (chain && img.origin == ImageOrigin::Fork && i == 0) piece.word = "fork";
        if (image_peaks && img.origin != ImageOrigin::SharedMm)
            piece.suffix = " (" + (img.measured ? format_bytes(img.peak_rss_bytes) : std::string("?")) + ")";
        pieces.push_back(std::move(piece));
    }
    return pieces;
}

std::string TreeFormatter::render(const Piece& piece, size_t columns) const {
    const size_t suffix = display_width(piece.suffix);
    if (!piece.word.empty()) return std::string(piece.word) + piece.suffix;
    return labels_.label(piece.program, columns > suffix ? columns - suffix : 1) + piece.suffix;
}

// The image chain in at most columns: whole when it fits; else its first
// and last pieces, with how many were left out between them, the last one
// (the program the process became) given the most room.
std::string TreeFormatter::command(const std::vector<Piece>& pieces, size_t columns) {
    std::string full;
    for (const auto& piece : pieces) {
        if (!full.empty()) full += " → ";
        full += render(piece, kUnlimited);
        used_.fork |= piece.word == "fork";
        used_.vfork |= piece.word == "vfork";
        used_.image_peaks |= !piece.suffix.empty();
    }
    if (display_width(full) <= columns) return full;
    if (pieces.size() == 1) return render(pieces[0], columns);
    // The first program by its name alone when its command does not fit.
    const Piece& first = pieces.front();
    std::string head = render(first, kUnlimited);
    if (display_width(head) > std::max<size_t>(kMinCommandColumns, columns / 3))
        head = program_name(first.program) + "…" + first.suffix;
    head += " → ";
    if (pieces.size() > 2) head += fmt::format("{} more → ", pieces.size() - 2);
    const size_t used = display_width(head);
    if (columns < used + kMinCommandColumns) return truncate_to_width(full, columns);
    used_.elided |= pieces.size() > 2;
    return head + render(pieces.back(), columns - used);
}

std::vector<Item> TreeFormatter::items_below(const Item& item) const {
    // Alike members have alike children, position by position.
    const std::vector<size_t>& first = children_[item.members.front()];
    std::vector<Item> items;
    for (size_t k = 0; k < first.size();) {
        size_t end = k + 1;
        while (end < first.size() && shape_[first[end]] == shape_[first[k]]) ++end;
        const bool collapse = options_.collapse_at >= 2 && (end - k) * item.members.size() >= options_.collapse_at;
        if (!collapse) end = k + 1;
        Item below;
        for (size_t member : item.members)
            for (size_t j = k; j < end; ++j) below.members.push_back(children_[member][j]);
        if (!collapse && below.members.size() > 1) {
            // Alike under a group too small to collapse: one line each.
            for (size_t m : below.members) items.push_back(Item{{m}});
        } else {
            items.push_back(std::move(below));
        }
        k = end;
    }
    return items;
}

// Depth-first without recursion: a tree may be a chain of thousands.
void TreeFormatter::walk(const Item& root) {
    std::vector<Frame> stack;
    stack.push_back(Frame{items_below(root), 0, ""});
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == f.items.size()) {
            stack.pop_back();
            continue;
        }
        const Item item = f.items[f.next++];
        const bool last = f.next == f.items.size();
        emit(f.indent + (last ? "└─ " : "├─ "), item);
        std::vector<Item> items = items_below(item);
        if (!items.empty()) {
            std::string indent = f.indent + (last ? "   " : "│  ");
            stack.push_back(Frame{std::move(items), 0, std::move(indent)});  // invalidates f
        }
    }
}

void TreeFormatter::emit(std::string tree, const Item& item) {
    const Process& first = r_.processes[item.members.front()];
    Row row;
    row.tree = std::move(tree);
    row.notes = notes_of(first, &used_);
    const bool group = item.members.size() > 1;
    int owners = 0;
    for (const auto& img : first.images) owners += img.origin != ImageOrigin::SharedMm;
    row.pieces = pieces_of(first, owners >= 2 && !group);
    if (const size_t deeper = deeper_[item.members.front()]; deeper > 0) {
        used_.deeper = true;
        row.notes.text += fmt::format("{}+{} deeper", row.notes.text.empty() ? "" : ", ", deeper * item.members.size());
    }
    uint64_t low = std::numeric_limits<uint64_t>::max(), high = 0;
    bool any_measured = false;
    pid_t low_pid = first.pid, high_pid = first.pid;
    for (size_t i : item.members) {
        const Process& p = r_.processes[i];
        if (measured(p)) {
            any_measured = true;
            low = std::min(low, p.peak_rss_bytes);
            high = std::max(high, p.peak_rss_bytes);
        }
        low_pid = std::min(low_pid, p.pid);
        high_pid = std::max(high_pid, p.pid);
    }
    used_.unmeasured |= !any_measured;
    row.peak = any_measured ? format_bytes(high) : "?";
    row.pid = group ? fmt::format("×{}", item.members.size()) : std::to_string(first.pid);
    if (group) {
        used_.group = true;
        std::string range = any_measured ? bytes_range(low, high) : "";
        std::string what = fmt::format("{} alike: {}{}pids {}…{}", item.members.size(), range, range.empty() ? "" : ", ",
                                       low_pid, high_pid);
        row.notes.text = row.notes.text.empty() ? what : what + ", " + row.notes.text;
    }
    rows_.push_back(std::move(row));
}

std::string TreeFormatter::line(const Row& row, size_t left, size_t peak_width) {
    const bool color = options_.color;
    const size_t pad_pid = left - display_width(row.tree) - display_width(row.pid);
    std::string out;
    if (color && !row.tree.empty()) out += fmt::format("{}{}{}", DIM, row.tree, RESET);
    else out += row.tree;
    out += row.pid + std::string(pad_pid, ' ') + "  " + std::string(peak_width - display_width(row.peak), ' ');
    out += color ? fmt::format("{}{}{}", BOLD, row.peak, RESET) : row.peak;
    out += "  ";
    // What is left of the width: the command first, then as much of the notes as fits.
    const size_t prefix = left + 2 + peak_width + 2;
    size_t room = kUnlimited;
    if (options_.width_columns) room = *options_.width_columns > prefix ? *options_.width_columns - prefix : 1;
    std::string notes = row.notes.text.empty() ? "" : "[" + row.notes.text + "]";
    const size_t notes_width = notes.empty() ? 0 : 2 + display_width(notes);
    const size_t command_room = room >= notes_width + kMinCommandColumns ? room - notes_width : room;
    const std::string cmd = command(row.pieces, command_room);
    out += cmd;
    if (!notes.empty() && room > display_width(cmd) + 2) {
        notes = truncate_to_width(notes, room - display_width(cmd) - 2);
        if (color) out += fmt::format("  {}{}{}", row.notes.failed ? RED : DIM, notes, RESET);
        else out += "  " + notes;
    }
    return out + '\n';
}

// The notation that appears above, explained.
std::string TreeFormatter::key_line() const {
    const bool used[] = {used_.fork,       used_.vfork, used_.image_peaks && !used_.fork, used_.elided,
                         used_.group,      used_.unmeasured, used_.ended, used_.shared, used_.orphaned,
                         used_.deeper};
    static_assert(std::size(used) == std::size(kNotation));
    std::vector<std::string_view> items;
    for (size_t i = 0; i < std::size(kNotation); ++i)
        if (used[i]) items.push_back(kNotation[i]);
    if (items.empty()) return {};
    // Wrapped at the width, never cut: it is there to be read.
    const size_t width = options_.width_columns.value_or(kUnlimited);
    std::string out = "key:", line_so_far = out;
    for (size_t i = 0; i < items.size(); ++i) {
        const std::string item = std::string(items[i]) + (i + 1 < items.size() ? ";" : "");
        if (line_so_far.size() > 5 && display_width(line_so_far) + 1 + display_width(item) > width) {
            out += "\n    ";
            line_so_far = "    ";
        } else {
            out += ' ';
            line_so_far += ' ';
        }
        out += item;
        line_so_far += item;
    }
    return options_.color ? fmt::format("{}{}{}\n", DIM, out, RESET) : out + '\n';
}

std::string TreeFormatter::format() {
    if (r_.processes.empty()) return {};
    for (size_t root : roots_) {
        emit("", Item{{root}});
        walk(Item{{root}});
    }
    size_t left = 0, peak = 0;
    for (const auto& row : rows_) {
        left = std::max(left, display_width(row.tree) + display_width(row.pid));
        peak = std::max(peak, display_width(row.peak));
    }
    std::string out;
    for (const auto& row : rows_) out += line(row, left, peak);
    if (hidden_small_ + hidden_deep_ > 0) {
        std::vector<std::string> why;
        if (hidden_small_) why.push_back(fmt::format("{} below --tree-min {}", hidden_small_, format_bytes(options_.min_peak_bytes)));
        if (hidden_deep_) why.push_back(fmt::format("{} deeper than --tree-depth {}", hidden_deep_, *options_.max_depth));
        const size_t n = hidden_small_ + hidden_deep_;
        std::string text = why.size() == 1 ? fmt::format("({} process{} {} not shown)", n, n == 1 ? "" : "es",
                                                         why[0].substr(why[0].find(' ') + 1))
                                           : fmt::format("({} processes not shown: {}, {})", n, why[0], why[1]);
        out += options_.color ? fmt::format("{}{}{}\n", DIM, text, RESET) : text + '\n';
    }
    return out + key_line();
}

}  // namespace

std::string format_tree(const RunResult& result, const TreeOptions& options) {
    return TreeFormatter(result, options).format();
}

std::string tree_notation() {
    std::string out;
    for (std::string_view item : kNotation) out += fmt::format("  {}\n", item);
    return out;
}

}  // namespace max_rss
