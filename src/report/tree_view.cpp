#include <max_rss/report/console.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/report/tree_view.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace max_rss {

namespace {

constexpr size_t COLLAPSE_ABOVE = 200;  // processes; smaller trees show every one

constexpr std::string_view DIM = "\x1b[2m";
constexpr std::string_view BOLD = "\x1b[1m";
constexpr std::string_view RED = "\x1b[31m";
constexpr std::string_view RESET = "\x1b[0m";



std::string image_peak(const Image& img) {
    if (img.origin == ImageOrigin::SharedMm) return "shared mm";
    if (!img.measured) return "not measured";
    return format_bytes(img.peak_rss_bytes);
}

// The images a process ran, joined by arrows; with their own peaks when there
// is more than one (which one held the memory is then the point).
std::string command_text(const Process& p, bool with_peaks) {
    if (p.images.empty()) return short_command(nullptr);
    if (p.images.size() == 1) return short_command(p.images[0].program.get());
    std::string s;
    for (const auto& img : p.images) {
        if (!s.empty()) s += " → ";
        s += short_command(img.program.get());
        if (with_peaks) s += " (" + image_peak(img) + ")";
    }
    return s;
}

struct Notes {
    std::string text;  // without brackets; empty when nothing is worth saying
    bool failed = false;
};

Notes notes_of(const Process& p) {
    std::vector<std::string> parts;
    Notes n;
    if (p.threads > 1) parts.push_back(fmt::format("{} threads", p.threads));
    if (p.shares_mm_with) parts.push_back(fmt::format("shares memory of {}", *p.shares_mm_with));
    if (p.exit.signal) {
        parts.push_back(describe_exit(p.exit));
        n.failed = true;
    } else if (p.exit.code && *p.exit.code != 0) {
        parts.push_back(fmt::format("exit {}", *p.exit.code));
        n.failed = true;
    }
    if (p.orphaned) parts.push_back("orphaned");
    for (const auto& part : parts) n.text += (n.text.empty() ? "" : ", ") + part;
    return n;
}

bool measured(const Process& p) {
    return std::any_of(p.images.begin(), p.images.end(), [](const Image& i) { return i.measured; });
}

// One output line before alignment.
struct Row {
    std::string tree;  // the indentation glyphs
    std::string pid;   // a pid or "×N"
    std::string peak;
    std::string command;
    Notes notes;
};

// A child line: one process, or a run of alike leaves shown once.
struct Item {
    std::vector<size_t> members;  // indices into processes
};

class TreeFormatter {
public:
    explicit TreeFormatter(const RunResult& r) : r_(r), children_(r.processes.size()) {
        const auto& procs = r.processes;
        collapse_ = procs.size() > COLLAPSE_ABOVE;
        // The parent is the latest process created before the child with the
        // child's ppid: pids are recycled, and an earlier holder of the pid
        // cannot have been the creator.
        std::unordered_map<pid_t, size_t> latest;  // pid -> index of its latest holder so far
        for (size_t i = 0; i < procs.size(); ++i) {
            if (i > 0) {
                auto parent = latest.find(procs[i].ppid);
                if (parent != latest.end()) children_[parent->second].push_back(i);
                else roots_.push_back(i);
            }
            latest[procs[i].pid] = i;
        }
        if (!procs.empty()) roots_.insert(roots_.begin(), 0);
    }

    std::vector<Row> rows() {
        for (size_t root : roots_) {
            emit("", Item{{root}});
            walk(root);
        }
        return std::move(rows_);
    }

private:
    struct Frame {
        std::vector<Item> items;
        size_t next = 0;
        std::string indent;  // glyphs in front of this level's branch glyph
    };

    // Depth-first without recursion: a tree may be a chain of thousands.
    void walk(size_t root) {
        std::vector<Frame> stack;
        stack.push_back(Frame{items_of(root), 0, ""});
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next == f.items.size()) {
                stack.pop_back();
                continue;
            }
            const Item item = f.items[f.next++];
            const bool last = f.next == f.items.size();
            emit(f.indent + (last ? "└─ " : "├─ "), item);
            if (item.members.size() == 1 && !children_[item.members[0]].empty()) {
                std::string indent = f.indent + (last ? "   " : "│  ");
                std::vector<Item> items = items_of(item.members[0]);
                stack.push_back(Frame{std::move(items), 0, std::move(indent)});  // invalidates f
            }
        }
    }

    // What identifies alike leaves: everything shown but the pid and peaks.
    std::string key_of(size_t i) const {
        const Process& p = r_.processes[i];
        return command_text(p, false) + '\0' + notes_of(p).text;
    }

    std::vector<Item> items_of(size_t parent) const {
        std::vector<Item> items;
        const auto& kids = children_[parent];
        for (size_t k = 0; k < kids.size();) {
            Item item{{kids[k]}};
            size_t end = k + 1;
            if (collapse_ && children_[kids[k]].empty()) {
                const std::string key = key_of(kids[k]);
                while (end < kids.size() && children_[kids[end]].empty() && key_of(kids[end]) == key)
                    item.members.push_back(kids[end++]);
            }
            items.push_back(std::move(item));
            k = end;
        }
        return items;
    }

    void emit(std::string tree, const Item& item) {
        const Process& first = r_.processes[item.members.front()];
        Row row;
        row.tree = std::move(tree);
        row.notes = notes_of(first);
        if (item.members.size() == 1) {
            row.pid = std::to_string(first.pid);
            row.peak = measured(first) ? format_bytes(first.peak_rss_bytes) : "?";
            row.command = command_text(first, true);
        } else {
            const Process& last = r_.processes[item.members.back()];
            uint64_t max_peak = 0;
            bool any_measured = false;
            for (size_t i : item.members) {
                max_peak = std::max(max_peak, r_.processes[i].peak_rss_bytes);
                any_measured = any_measured || measured(r_.processes[i]);
            }
            row.pid = fmt::format("×{}", item.members.size());
            row.peak = any_measured ? format_bytes(max_peak) : "?";
            row.command = command_text(first, false);
            std::string what = fmt::format("peak max of {}, pids {}…{}", item.members.size(), first.pid, last.pid);
            row.notes.text = row.notes.text.empty() ? what : what + ", " + row.notes.text;
        }
        rows_.push_back(std::move(row));
    }

    const RunResult& r_;
    std::vector<std::vector<size_t>> children_;
    std::vector<size_t> roots_;  // processes[0], then any whose creator is not in the run
    std::vector<Row> rows_;
    bool collapse_ = false;
};

}  // namespace

std::string format_tree(const RunResult& result, bool color) {
    const std::vector<Row> rows = TreeFormatter(result).rows();
    size_t left = 0, peak = 0;
    for (const auto& row : rows) {
        left = std::max(left, display_width(row.tree) + display_width(row.pid));
        peak = std::max(peak, display_width(row.peak));
    }
    std::string out;
    for (const auto& row : rows) {
        const size_t pad_pid = left - display_width(row.tree) - display_width(row.pid);
        const std::string pad_peak(peak - display_width(row.peak), ' ');
        if (color && !row.tree.empty()) out += fmt::format("{}{}{}", DIM, row.tree, RESET);
        else out += row.tree;
        out += row.pid + std::string(pad_pid, ' ') + "  " + pad_peak;
        if (color) out += fmt::format("{}{}{}", BOLD, row.peak, RESET);
        else out += row.peak;
        out += "  " + row.command;
        if (!row.notes.text.empty()) {
            const std::string notes = "[" + row.notes.text + "]";
            if (color) out += fmt::format("  {}{}{}", row.notes.failed ? RED : DIM, notes, RESET);
            else out += "  " + notes;
        }
        out += '\n';
    }
    return out;
}

}  // namespace max_rss
