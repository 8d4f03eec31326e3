// Markdown pieces shared by bench's export and compare's PR comment.
#pragma once

#include <string>
#include <string_view>

namespace max_rss {

// text as one CommonMark code span, on one line (line breaks become spaces),
// fenced with more backticks than it contains; in_table escapes '|' as "\\|"
// as GFM tables need. Markdown is for reading: bytes that are not UTF-8
// become U+FFFD. Empty for empty text.
std::string markdown_code_span(std::string_view raw, bool in_table);

}  // namespace max_rss
