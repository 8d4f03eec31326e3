// UTF-8 validity, and base64 to carry bytes that are not UTF-8 where only
// UTF-8 may go (JSON). argv, paths and command lines are bytes on Linux.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace max_rss {

// True when text is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// text with every ill-formed subsequence replaced by U+FFFD, one replacement
// per maximal subpart (the Unicode standard's recommendation, which browsers
// and Python follow): "a\xFFb" -> "a\u{FFFD}b", a truncated "\xE2\x82" -> one
// U+FFFD. Valid text comes back unchanged.
std::string to_valid_utf8(std::string_view text);

// RFC 4648 base64: the standard alphabet ('+', '/'), '=' padding, no line breaks.
std::string base64_encode(std::string_view bytes);

// The bytes base64_encode() made text from; nullopt when text is not padded
// standard base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace max_rss
