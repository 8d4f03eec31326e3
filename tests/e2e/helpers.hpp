// Test helpers: fixture paths, and running the max_rss binary as a user would.
#pragma once

#include <max_rss/model.hpp>

#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <vector>
#include "units.hpp"

namespace max_rss::test {


// Path of a fixture program built by tests/fixtures/CMakeLists.txt.
std::string fixture(const std::string& name);

// Path of the max_rss binary under test: the plain build's for max_rss_tests,
// the sanitized build's for max_rss_tests_sanitized (tests/binary_under_test.cpp).
const char* max_rss_bin();

// The shapes of tests/fixtures/peak_shapes.c at 100 MiB, with what each
// holds at its peak beside the fixture's baseline.
struct PeakShape {
    const char* name;
    double true_mib;
};
inline constexpr PeakShape kPeakShapes[] = {
    {"spike", 120}, {"heap", 120}, {"cow", 200}, {"replace", 200}, {"daemon", 150}, {"zombie", 200},
    {"spawn", 120}, {"guard", 120}, {"shm_remap", 120}, {"truncate", 120}, {"zero_range", 120}, {"mrelease", 120},
    {"unshare", 300},
    {"forking", 150},
};

inline double mib(uint64_t bytes) { return static_cast<double>(bytes) / MiB; }

struct Output {
    int exit_code = -1;       // max_rss's exit status (128+N if a signal killed it)
    std::string out;          // its stdout
    std::string err;          // its stderr
};

// Runs argv (argv[0] a path) with stdin_text on its stdin, capturing its output.
// in_child runs in the child just before exec (signal dispositions, masks...).
Output run_program(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                   double timeout_seconds = 60, const std::function<void()>& in_child = {});

// Runs the max_rss binary with args, feeding stdin_text on its stdin.
// A run longer than timeout_seconds is killed and fails the test.
Output run_max_rss(const std::vector<std::string>& args, const std::string& stdin_text = "",
                   double timeout_seconds = 60);

// Whether `max_rss --backend ebpf` runs here (root, BTF, built with it):
// asked once, by running it on /bin/true.
bool max_rss_ebpf_available();

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
// Waits for a line that starts with prefix in the file at path and returns
// it (empty when none came within timeout_seconds).
std::string wait_for_line_starting(const std::string& path, const std::string& prefix,
                                   double timeout_seconds = 60);
// Waits for pid; returns its shell-style exit status.
int wait_exit_code(pid_t pid, double timeout_seconds = 60);

// The processes whose parent is pid (from /proc/<pid>/task/*/children).
std::vector<pid_t> children_of(pid_t pid);
// All descendants of pid, recursively.
std::vector<pid_t> descendants(pid_t pid);
// Runs max_rss with options before `-- sh -c 'sleep 300 & sleep 300; wait'`
// (a tree of three), SIGKILLs max_rss once the tree is there, and checks
// that every process of the tree ends: gone, or a zombie waiting for init,
// never running, never stopped.
void check_sigkill_ends_tree(const std::vector<std::string>& options, const std::vector<std::string>& env = {});
// The one-letter state of pid from /proc/<pid>/stat ('?' when gone).
char process_state(pid_t pid);
// A child of the test that waits (pause) until killed, born with SIGTERM
// blocked: a SIGTERM sent to it stays pending (sigterm_pending), where the
// test sees it, instead of racing the test to its end.
pid_t fork_waiter();
// Whether SIGTERM is pending for pid (/proc/<pid>/status SigPnd, ShdPnd).
bool sigterm_pending(pid_t pid);
// SIGKILLs and reaps a child of the test.
void end_child(pid_t pid);

std::string read_text_file(const std::string& path);
std::string temp_path(const std::string& name);

// A memory cgroup (v1) of the test's own with a memory limit, removed again
// on destruction (after what it held is gone). ok() is false, and why() says
// why, where one cannot be made: not root, no v1 memory controller, a
// read-only /sys/fs/cgroup. name tells apart several in one test.
class TestCgroup {
public:
    explicit TestCgroup(const std::string& limit_bytes, const std::string& name = "");
    ~TestCgroup();
    TestCgroup(const TestCgroup&) = delete;
    TestCgroup& operator=(const TestCgroup&) = delete;
    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] const std::string& why() const { return why_; }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string procs() const { return path_ + "/cgroup.procs"; }
    [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }
    // Moves the calling process into it (for a child before exec).
    void enter() const;

private:
    std::string path_;
    std::string why_;
    bool ok_ = false;
};

// A run with one `thread_fork MIB` in it (a non-leader thread forks a child
// that touches MIB MiB; the root or a shell's child): the child is its
// process's, with its peak, and the process had two tasks and exited 0. The
// same checks for every backend.
void check_thread_fork(const RunResult& result, double child_mib);

// Measures argv in this process, through the library, with default options.
RunResult measure_argv(std::vector<std::string> argv);

// The shell command line that runs the touch fixture for mib MiB.
std::string touch_command(int mib);

// Whether path exists (stat succeeds).
bool file_exists(const std::string& path);

// A program (an image's argv) for building model structs by hand.
std::shared_ptr<const Program> program(std::vector<std::string> argv);

// An exit status: exited with code.
ExitStatus exited(int code);

// The lines of text, without their newlines.
std::vector<std::string> lines_of(const std::string& text);

// What parse_report says of text as a baseline file BASE.json ("(no error)" if
// it is read).
std::string report_error_of(std::string_view text);

// The process of result whose last image's argv[0] ends with name.
const Process* find_process(const RunResult& result, const std::string& name);

}  // namespace max_rss::test
