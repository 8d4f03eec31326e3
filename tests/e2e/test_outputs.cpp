// Issue 10, the outputs: no run loses or corrupts what it writes. The report,
// the plot and bench's exports end to end: what is not a regular file is
// written through, never replaced; every output is attempted on its own and a
// failure is one line and exit 4 (unless the program failed, or --budget);
// text that is not UTF-8; closed standard descriptors; broken pipes; and the
// limits of compare.
#include "helpers.hpp"
#include "temp_dir.hpp"

#include <max_rss/compare.hpp>
#include <max_rss/utf8.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace max_rss::test;
using nlohmann::json;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The lines of text that start with prefix.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
    std::vector<std::string> found;
    for (const std::string& line : lines_of(text))
        if (line.rfind(prefix, 0) == 0) found.push_back(line);
    return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

mode_t file_type(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return 0;
    return st.st_mode & S_IFMT;
}

// A device node like /dev/null (1, 3) or /dev/full (1, 7) inside dir: writing
// to a copy cannot break the system's own if max_rss wrongly replaces it.
// false where device nodes cannot be made (not root, or a nodev mount).
bool make_device(const std::string& path, unsigned minor) {
    return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
}

// Polls cond every 5 ms for up to seconds.
bool eventually(const std::function<bool()>& cond, double seconds = 10) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return cond();
}

// Runs max_rss with args after set_up_fds(stdout_fd, stderr_fd) rearranged the
// child's descriptors: stdout and stderr go to the two files (read back into
// the Output), stdin is /dev/null.
Output run_max_rss_with(const std::vector<std::string>& args, const std::function<void(int, int)>& set_up_fds) {
    const std::string out_path = temp_path("with.out"), err_path = temp_path("with.err");
    std::vector<std::string> words{MAX_RSS_BIN};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(out >= 0);
    REQUIRE(err >= 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int null_fd = ::open("/dev/null", O_RDONLY);
        ::dup2(null_fd, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        if (null_fd > 2) ::close(null_fd);
        set_up_fds(out, err);
        ::execv(argv[0], argv.data());
        ::_exit(121);
    }
    ::close(out);
    ::close(err);
    Output result;
    result.exit_code = wait_exit_code(pid);
    result.out = read_text_file(out_path);
    result.err = read_text_file(err_path);
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    return result;
}

}  // namespace

// ---------------------------------------------------------------------------
// 2. Text that is not UTF-8.

TEST_CASE("outputs: an argument that is not UTF-8 keeps the exit status; the report is valid and exact",
          "[outputs][utf8]") {
    TempDir dir;
    const std::string latin1 = "caf\xE9";
    const Output out =
        run_max_rss({"-q", "-o", dir / "r.json", "--plot", dir / "p.html", "--", "/bin/sh", "-c", "exit 7", latin1});
    INFO(out.err);
    CHECK(out.exit_code == 7);
    CHECK(out.err.empty());
    const std::string text = read_text_file(dir / "r.json");
    CHECK(max_rss::is_valid_utf8(text));
    const json r = json::parse(text);
    CHECK(r["command"][3] == "caf\xEF\xBF\xBD");
    CHECK(max_rss::base64_decode(r["command_base64"][3].get<std::string>()) == latin1);
    CHECK(max_rss::is_valid_utf8(read_text_file(dir / "p.html")));
}

TEST_CASE("outputs: bench measures a command that is not UTF-8 and goes on to the next", "[outputs][utf8]") {
    TempDir dir;
    const Output out = run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", dir / "b.json",
                                    "--export-markdown", dir / "b.md", "true caf\xE9", "true"});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    const json exported = json::parse(read_text_file(dir / "b.json"));
    REQUIRE(exported["results"].size() == 2);
    CHECK(max_rss::base64_decode(exported["results"][0]["command_base64"].get<std::string>()) == "true caf\xE9");
    CHECK(max_rss::is_valid_utf8(read_text_file(dir / "b.md")));
}
