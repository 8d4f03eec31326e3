// Test helpers: fixture paths, and running the max_rss binary as a user would.
#pragma once

#include <max_rss/model.hpp>

#include <functional>
#include <string>
#include <vector>

namespace max_rss::test {

inline constexpr uint64_t MiB = 1024 * 1024;

// Path of a fixture program built by tests/fixtures/CMakeLists.txt.
std::string fixture(const std::string& name);

inline double mib(uint64_t bytes) { return static_cast<double>(bytes) / MiB; }

struct Output {
    int exit_code = -1;       // max_rss's exit status (128+N if a signal killed it)
    std::string out;          // its stdout
    std::string err;          // its stderr
};

// Runs argv (argv[0] a path) with stdin_text on its stdin, capturing its output.
Output run_program(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                   double timeout_seconds = 60);

// Runs the max_rss binary with args, feeding stdin_text on its stdin.
// A run longer than timeout_seconds is killed and fails the test.
Output run_max_rss(const std::vector<std::string>& args, const std::string& stdin_text = "",
                   double timeout_seconds = 60);

// Starts max_rss in the background with stdout/stderr to the given files and
// env ("NAME=value" entries) added to its environment.
pid_t spawn_max_rss(const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path, const std::vector<std::string>& env = {});

// Polls cond every 5 ms until it holds (true) or timeout_seconds pass (false).
// A safety net against hangs, never a measurement: make it generous.
bool wait_until(const std::function<bool()>& cond, double timeout_seconds = 60);

// Waits until the file at path has a line equal to line: how a fixture says it
// reached a point (fx_ready() with FX_READY_FILE=path in its environment).
bool wait_for_line(const std::string& path, const std::string& line, double timeout_seconds = 60);
// Waits for pid; returns its shell-style exit status.
int wait_exit_code(pid_t pid, double timeout_seconds = 60);

// The processes whose parent is pid (from /proc/<pid>/task/*/children).
std::vector<pid_t> children_of(pid_t pid);
// The one-letter state of pid from /proc/<pid>/stat ('?' when gone).
char process_state(pid_t pid);

std::string read_text_file(const std::string& path);
std::string temp_path(const std::string& name);

// The process of result whose last image's argv[0] ends with name.
const Process* find_process(const RunResult& result, const std::string& name);

}  // namespace max_rss::test
