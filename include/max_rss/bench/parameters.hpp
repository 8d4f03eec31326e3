// hyperfine's parameters: `-P/--parameter-scan NAME MIN MAX [-D STEP]` and
// `-L/--parameter-list NAME V1,V2,...`, substituted for `{NAME}` in commands,
// names and the commands run around them. Pure functions.
#pragma once

#include <max_rss/bench/model.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// A named list of values, in order.
struct ParameterValues {
    std::string name;
    std::vector<std::string> values;
};

// A mistake in a parameter option; what() is one line, without the option's name.
struct ParameterError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The values of --parameter-scan NAME MIN MAX with -D STEP (default 1), as
// hyperfine: MIN, MIN+STEP, ... up to MAX included. Whole numbers stay whole;
// with a decimal STEP, values have as many decimals as STEP ("0.25" -> 0.25,
// 0.50, ...). Throws ParameterError: "'x' is not a number", "MIN 5 is above
// MAX 1", "STEP must be above 0", "more than 100000 values".
ParameterValues scan_parameter(const std::string& name, std::string_view min, std::string_view max,
                               std::optional<std::string_view> step);

// The values of --parameter-list NAME "a,b,c": split on commas (empty values
// kept: "a,,b" has three). Throws ParameterError for an empty NAME.
ParameterValues list_parameter(const std::string& name, std::string_view values);

// Every combination of the parameters' values, the first parameter varying
// slowest (hyperfine's order): {a: 1, 2} x {b: x, y} -> (1,x) (1,y) (2,x) (2,y).
// One empty combination when there are no parameters. Throws ParameterError
// when two parameters share a name or there would be more than 100000.
std::vector<std::vector<BenchParameter>> parameter_combinations(const std::vector<ParameterValues>& parameters);

// text with every "{NAME}" of a parameter replaced by its value, in one pass
// (a value containing "{other}" is not substituted again); other braces stay.
std::string substitute_parameters(std::string_view text, const std::vector<BenchParameter>& parameters);

}  // namespace max_rss
