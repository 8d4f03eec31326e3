// The two ways a measurement can fail before it has anything to report.
#pragma once

#include <stdexcept>
#include <string>

namespace max_rss {

// The command could not be started: not found (127) or not executable (126).
struct LaunchError : std::runtime_error {
    int exit_code;
    LaunchError(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
};

// max_rss itself failed (a system call that should not fail). Exit code 125.
struct TracerError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace max_rss
