#include <max_rss/report/markdown.hpp>

#include <max_rss/util/utf8.hpp>

#include <algorithm>

namespace max_rss {

std::string markdown_code_span(std::string_view raw, bool in_table) {
    const std::string text = to_valid_utf8(raw);
    std::string content;
    size_t longest_backtick_run = 0;
    size_t run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest_backtick_run = std::max(longest_backtick_run, run);
        // A table row is one line; a command's line breaks cannot survive it.
        content += (c == '\n' || c == '\r') ? ' ' : c;
    }
    if (content.empty()) return {};
    // CommonMark strips one space from each end of a code span when both ends
    // have one, and a backtick at either end would merge with the fence.
    if (content.front() == '`' || content.back() == '`' ||
        (content.front() == ' ' && content.back() == ' ')) {
        content = ' ' + content + ' ';
    }
    const std::string fence(longest_backtick_run + 1, '`');
    std::string cell = fence;
    for (char c : content) {
        // GFM splits cells on '|' even inside code spans unless it is escaped.
        if (c == '|' && in_table) cell += '\\';
        cell += c;
    }
    return cell + fence;
}

}  // namespace max_rss
