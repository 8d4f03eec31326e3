// Named baselines: bench exports kept under one directory, so that
// `bench --save-baseline main` and `compare --baseline main NEW` (or
// `bench --compare-baseline main`) need no file names.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace max_rss {

// Where baselines live: $MAX_RSS_BASELINE_DIR when set and not empty, else
// .max_rss/baselines in the working directory.
std::filesystem::path baseline_directory();

// baseline_directory()/NAME.json. NAME is letters, digits, '.', '_' and '-',
// not starting with '.', at most 100 characters; throws std::invalid_argument
// with one line otherwise ("'a/b' is not a baseline name (letters, digits, . _ -)").
std::filesystem::path baseline_path(std::string_view name);

}  // namespace max_rss
