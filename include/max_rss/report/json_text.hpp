// Text from the system (argv, executable paths, command lines) in a JSON
// report. JSON strings must be UTF-8, but these are arbitrary bytes, so a
// field holds the text made valid (to_valid_utf8: U+FFFD for every ill-formed
// subsequence) and, only when that changed it, a sibling "KEY_base64" holds
// the exact bytes in base64. A reader that wants text reads KEY; one that
// wants the bytes reads KEY_base64 when it is there, else KEY. docs/report.md
// documents the scheme.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// object[key] = text made valid; object[key + "_base64"] = base64 of text,
// only when text is not valid UTF-8.
void put_text(nlohmann::ordered_json& object, const std::string& key, std::string_view text);

// The same for a list: object[key] = each text made valid; when any of them is
// not valid UTF-8, object[key + "_base64"] = every text in base64, in order.
void put_texts(nlohmann::ordered_json& object, const std::string& key, const std::vector<std::string>& texts);

// The exact bytes put_text() stored under key: KEY_base64 decoded when it is
// a valid base64 string, else the string at key. nullopt when key holds no
// string.
std::optional<std::string> get_text(const nlohmann::json& object, const std::string& key);

// The exact list put_texts() stored under key: KEY_base64 decoded when it is
// an array of valid base64 strings as long as KEY, else KEY. nullopt when key
// holds no array of strings.
std::optional<std::vector<std::string>> get_texts(const nlohmann::json& object, const std::string& key);

}  // namespace max_rss
