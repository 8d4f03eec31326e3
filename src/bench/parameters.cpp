#include <max_rss/bench/parameters.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace max_rss {
namespace {

constexpr size_t kMaxCombinations = 100000;

double number(std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
        throw ParameterError(fmt::format("'{}' is not a number", text));
    }
    return value;
}

size_t decimals(std::string_view text) {
    const size_t dot = text.find('.');
    return dot == std::string_view::npos ? 0 : text.size() - dot - 1;
}

}  // namespace

ParameterValues scan_parameter(const std::string& name, std::string_view min, std::string_view max,
                               std::optional<std::string_view> step) {
    if (name.empty()) throw ParameterError("the parameter's NAME is empty");
    const double low = number(min);
    const double high = number(max);
    const double delta = step ? number(*step) : 1.0;
    if (delta <= 0) throw ParameterError(fmt::format("STEP must be above 0, not {}", *step));
    if (low > high) throw ParameterError(fmt::format("MIN {} is above MAX {}", min, max));
    const size_t places = std::max({step ? decimals(*step) : 0, decimals(min)});
    // Counting steps, never adding them up, keeps 0.1 * 3 from drifting past MAX.
    const double steps = std::floor((high - low) / delta + 1e-9);
    if (steps + 1 > static_cast<double>(kMaxCombinations)) {
        throw ParameterError(fmt::format("more than {} values", kMaxCombinations));
    }
    ParameterValues out{name, {}};
    for (size_t i = 0; i <= static_cast<size_t>(steps); ++i) {
        out.values.push_back(fmt::format("{:.{}f}", low + static_cast<double>(i) * delta, places));
    }
    return out;
}

ParameterValues list_parameter(const std::string& name, std::string_view values) {
    if (name.empty()) throw ParameterError("the parameter's NAME is empty");
    ParameterValues out{name, {}};
    size_t start = 0;
    while (true) {
        const size_t comma = values.find(',', start);
        out.values.emplace_back(values.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

std::vector<std::vector<BenchParameter>> parameter_combinations(const std::vector<ParameterValues>& parameters) {
    std::set<std::string> names;
    size_t count = 1;
    for (const ParameterValues& parameter : parameters) {
        if (!names.insert(parameter.name).second) {
            throw ParameterError(fmt::format("the parameter '{}' is given twice", parameter.name));
        }
        count *= parameter.values.size();
        if (count > kMaxCombinations) throw ParameterError(fmt::format("more than {} combinations", kMaxCombinations));
    }
    std::vector<std::vector<BenchParameter>> combinations(1);
    for (const ParameterValues& parameter : parameters) {
        std::vector<std::vector<BenchParameter>> next;
        for (const auto& prefix : combinations) {
            for (const std::string& value : parameter.values) {
                auto combination = prefix;
                combination.emplace_back(parameter.name, value);
                next.push_back(std::move(combination));
            }
        }
        combinations = std::move(next);
    }
    return combinations;
}

std::string substitute_parameters(std::string_view text, const std::vector<BenchParameter>& parameters) {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        bool replaced = false;
        if (text[i] == '{') {
            for (const auto& [name, value] : parameters) {
                if (text.substr(i + 1, name.size()) == name && text.substr(i + 1 + name.size(), 1) == "}") {
                    out += value;
                    i += name.size() + 2;
                    replaced = true;
                    break;
                }
            }
        }
        if (!replaced) out += text[i++];
    }
    return out;
}

}  // namespace max_rss
