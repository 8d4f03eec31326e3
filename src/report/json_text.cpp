#include <max_rss/report/json_text.hpp>

#include <max_rss/util/utf8.hpp>

#include <algorithm>

namespace max_rss {

void put_text(nlohmann::ordered_json& object, const std::string& key, std::string_view text) {
    if (is_valid_utf8(text)) {
        object[key] = text;
        return;
    }
    object[key] = to_valid_utf8(text);
    object[key + "_base64"] = base64_encode(text);
}

void put_texts(nlohmann::ordered_json& object, const std::string& key, const std::vector<std::string>& texts) {
    nlohmann::ordered_json valid = nlohmann::ordered_json::array();
    for (const std::string& text : texts) valid.push_back(to_valid_utf8(text));
    object[key] = std::move(valid);
    if (std::all_of(texts.begin(), texts.end(), [](const std::string& text) { return is_valid_utf8(text); })) return;
    nlohmann::ordered_json exact = nlohmann::ordered_json::array();
    for (const std::string& text : texts) exact.push_back(base64_encode(text));
    object[key + "_base64"] = std::move(exact);
}

namespace {
const nlohmann::json* find(const nlohmann::json& object, const std::string& key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}
}  // namespace

std::optional<std::string> get_text(const nlohmann::json& object, const std::string& key) {
    const nlohmann::json* text = find(object, key);
    if (text == nullptr || !text->is_string()) return std::nullopt;
    if (const nlohmann::json* exact = find(object, key + "_base64"); exact != nullptr && exact->is_string()) {
        if (auto bytes = base64_decode(exact->get_ref<const std::string&>())) return bytes;
    }
    return text->get<std::string>();
}

std::optional<std::vector<std::string>> get_texts(const nlohmann::json& object, const std::string& key) {
    const nlohmann::json* texts = find(object, key);
    const auto all_strings = [](const nlohmann::json& array) {
        return array.is_array() &&
               std::all_of(array.begin(), array.end(), [](const nlohmann::json& item) { return item.is_string(); });
    };
    if (texts == nullptr || !all_strings(*texts)) return std::nullopt;
    if (const nlohmann::json* exact = find(object, key + "_base64");
        exact != nullptr && all_strings(*exact) && exact->size() == texts->size()) {
        std::vector<std::string> decoded;
        for (const nlohmann::json& item : *exact) {
            auto bytes = base64_decode(item.get_ref<const std::string&>());
            if (!bytes) break;
            decoded.push_back(std::move(*bytes));
        }
        if (decoded.size() == texts->size()) return decoded;
    }
    return texts->get<std::vector<std::string>>();
}

}  // namespace max_rss
