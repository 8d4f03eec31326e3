// Issue 10, the outputs: no run loses or corrupts what it writes. The report,
// the plot and bench's exports end to end: what is not a regular file is
// written through, never replaced; every output is attempted on its own and a
// failure is one line and exit 4 (unless the program failed, or --budget);
// text that is not UTF-8; closed standard descriptors; broken pipes; and the
// limits of compare.
#include "helpers.hpp"
#include "temp_dir.hpp"

#include <max_rss/report/compare.hpp>
#include <max_rss/util/utf8.hpp>

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
#include <tuple>

namespace fs = std::filesystem;
using namespace max_rss::test;
using nlohmann::json;

namespace {

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
    std::vector<std::string> words{max_rss_bin()};
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
// 1. What is not a regular file is written through, never replaced.

TEST_CASE("outputs: a character device stays a device and gets the bytes", "[outputs]") {
    TempDir dir;
    if (!make_device(dir / "null", 3)) {
        WARN("skipped: cannot make a device node here (" << std::strerror(errno) << ")");
        return;
    }
    REQUIRE(make_device(dir / "null2", 3));
    REQUIRE(make_device(dir / "null3", 3));
    const Output run = run_max_rss({"-q", "-o", dir / "null", "--plot", dir / "null2", "--", "/bin/true"});
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.err.empty());
    CHECK(file_type(dir / "null") == S_IFCHR);
    CHECK(file_type(dir / "null2") == S_IFCHR);

    const Output bench =
        run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", dir / "null3", "true"});
    INFO(bench.err);
    CHECK(bench.exit_code == 0);
    CHECK(file_type(dir / "null3") == S_IFCHR);
    CHECK(dir.entries() == std::vector<std::string>{"null", "null2", "null3"});
}

TEST_CASE("outputs: a full device fails with ENOSPC in one line; the other outputs are written", "[outputs]") {
    TempDir dir;
    if (!make_device(dir / "full", 7)) {
        WARN("skipped: cannot make a device node here (" << std::strerror(errno) << ")");
        return;
    }
    SECTION("run: the report on a full disk, the plot beside it") {
        const Output out = run_max_rss({"-o", dir / "full", "--plot", dir / "plot.html", "--", "/bin/true"});
        CHECK(out.exit_code == 4);
        const auto errors = lines_starting(out.err, "max_rss: -o:");
        REQUIRE(errors.size() == 1);
        CHECK(errors[0] == "max_rss: -o: cannot write export file '" + (dir / "full") +
                               "': No space left on device");
        CHECK(contains(out.err, "peak of the whole tree"));  // the summary still printed
        CHECK(contains(read_text_file(dir / "plot.html"), "</html>"));
        CHECK(file_type(dir / "full") == S_IFCHR);
    }
    SECTION("run: the plot on a full disk") {
        const Output out = run_max_rss({"-q", "--plot", dir / "full", "--", "/bin/true"});
        CHECK(out.exit_code == 4);
        CHECK(out.err == "max_rss: --plot: cannot write export file '" + (dir / "full") +
                             "': No space left on device\n");
    }
    SECTION("bench: one line however often the export is rewritten") {
        const Output out = run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", dir / "full",
                                        "--export-csv", dir / "out.csv", "true", "true"});
        CHECK(out.exit_code == 4);
        CHECK(out.err == "max_rss: bench: --export-json: cannot write export file '" + (dir / "full") +
                             "': No space left on device\n");
        CHECK(lines_of(read_text_file(dir / "out.csv")).size() == 3);  // header + 2 commands
        CHECK(file_type(dir / "full") == S_IFCHR);
    }
    SECTION("compare: the table on a full disk is an output lost; the verdict still decides") {
        // The table went to stdout; a failed write made compare exit 125, as
        // if max_rss itself had failed, whatever the verdict.
        REQUIRE(run_max_rss({"-q", "-o", dir / "small.json", "--", "/bin/true"}).exit_code == 0);
        REQUIRE(run_max_rss({"-q", "-o", dir / "big.json", "--", fixture("touch"), "50"}).exit_code == 0);
        const std::string full = dir / "full";
        const auto stdout_full = [&full](int, int) {
            const int fd = ::open(full.c_str(), O_WRONLY);
            if (fd >= 0) ::dup2(fd, 1);
        };
        const std::string line = "max_rss: compare: cannot write the table: No space left on device\n";
        const Output same = run_max_rss_with({"compare", dir / "small.json", dir / "small.json"}, stdout_full);
        CHECK(same.exit_code == 4);
        CHECK(same.err == line);
        const Output grew = run_max_rss_with({"compare", dir / "small.json", dir / "big.json"}, stdout_full);
        CHECK(grew.exit_code == 1);
        CHECK(grew.err == line);
    }
}

TEST_CASE("outputs: a FIFO gets the report through it and stays a FIFO", "[outputs]") {
    TempDir dir;
    const std::string fifo = dir / "fifo";
    const int reader = dir.make_fifo_with_reader("fifo");  // the pipe buffer holds the report
    const Output out = run_max_rss({"-q", "-o", fifo, "--", "/bin/true"});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    std::string received;
    char buffer[65536];
    for (ssize_t n; (n = ::read(reader, buffer, sizeof buffer)) > 0;) received.append(buffer, static_cast<size_t>(n));
    ::close(reader);
    CHECK(file_type(fifo) == S_IFIFO);
    REQUIRE_FALSE(received.empty());
    CHECK(json::parse(received)["kind"] == "run");
}

TEST_CASE("outputs: a symlink stays a link; the file it points to gets the report", "[outputs]") {
    TempDir dir;
    std::ofstream(dir / "target.json") << "old\n";
    fs::create_symlink("target.json", dir / "link.json");
    fs::create_symlink("missing.json", dir / "dangling.json");
    const Output out = run_max_rss({"-q", "-o", dir / "link.json", "--plot", dir / "dangling.json", "--", "/bin/true"});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    CHECK(file_type(dir / "link.json") == S_IFLNK);
    CHECK(file_type(dir / "dangling.json") == S_IFLNK);
    CHECK(json::parse(read_text_file(dir / "target.json"))["kind"] == "run");
    CHECK(contains(read_text_file(dir / "missing.json"), "</html>"));
    CHECK(dir.entries() == std::vector<std::string>{"dangling.json", "link.json", "missing.json", "target.json"});
}

TEST_CASE("outputs: /proc/self/fd/1 or a link to it is max_rss's stdout, after the program's output", "[outputs]") {
    TempDir dir;
    fs::create_symlink("/proc/self/fd/1", dir / "stdout");
    SECTION("stdout a pipe, the report to /proc/self/fd/1") {
        const Output out = run_max_rss({"-q", "-o", "/proc/self/fd/1", "--", "/bin/echo", "hello"});
        INFO(out.err);
        CHECK(out.exit_code == 0);
        REQUIRE(out.out.rfind("hello\n", 0) == 0);
        CHECK(json::parse(out.out.substr(6))["kind"] == "run");
    }
    SECTION("stdout a regular file, the report to a link to /proc/self/fd/1") {
        const Output out = run_max_rss_with({"-q", "-o", dir / "stdout", "--", "/bin/echo", "hello"}, [](int, int) {});
        INFO(out.err);
        CHECK(out.exit_code == 0);
        REQUIRE(out.out.rfind("hello\n", 0) == 0);  // the program's output is kept, the report follows it
        CHECK(json::parse(out.out.substr(6))["kind"] == "run");
        CHECK(file_type(dir / "stdout") == S_IFLNK);
    }
}

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

// ---------------------------------------------------------------------------
// 3. Every output on its own; the exit status; no visible temporary file.

TEST_CASE("outputs: the report's directory removed by the program loses only the report", "[outputs]") {
    TempDir dir;
    fs::create_directory(dir / "build");
    const std::string report = dir / "build/r.json";
    const std::string remove = "rm -rf '" + (dir / "build") + "'; exit $0";
    const std::string expected_error =
        "max_rss: -o: cannot write export file '" + report + "': No such file or directory";

    SECTION("a program that succeeded: exit 4, plot, summary and tree kept") {
        const Output out = run_max_rss({"--tree", "-o", report, "--plot", dir / "p.html", "--", "/bin/sh", "-c",
                                        remove, "0"});
        CHECK(out.exit_code == 4);
        CHECK(lines_starting(out.err, "max_rss: -o:") == std::vector<std::string>{expected_error});
        CHECK(contains(out.err, "peak of the whole tree"));
        CHECK(contains(read_text_file(dir / "p.html"), "</html>"));
    }
    SECTION("the program's own failure wins") {
        const Output out = run_max_rss({"-q", "-o", report, "--", "/bin/sh", "-c", remove, "9"});
        CHECK(out.exit_code == 9);
        CHECK(out.err == expected_error + "\n");
    }
    SECTION("over --budget wins over a lost output, and the verdict is printed") {
        const Output out = run_max_rss({"-q", "-o", report, "--budget", "1KiB", "--", "/bin/sh", "-c", remove, "0"});
        CHECK(out.exit_code == 3);
        CHECK(lines_starting(out.err, "max_rss: -o:") == std::vector<std::string>{expected_error});
        CHECK(contains(out.err, "max_rss: over budget: peak "));
    }
}

TEST_CASE("outputs: bench goes on when an export cannot be written, and says so once", "[outputs]") {
    TempDir dir;
    fs::create_directory(dir / "gone");
    const std::string json_path = dir / "gone/b.json";
    const Output out = run_max_rss({"bench", "-r", "1", "--style", "none", "--export-json", json_path,
                                    "--export-csv", dir / "b.csv", "rm -rf '" + (dir / "gone") + "'", "true"});
    CHECK(out.exit_code == 4);
    CHECK(out.err == "max_rss: bench: --export-json: cannot write export file '" + json_path +
                         "': No such file or directory\n");
    CHECK(lines_of(read_text_file(dir / "b.csv")).size() == 3);  // both commands ran
}

TEST_CASE("outputs: no temporary file is visible while the program runs", "[outputs]") {
    TempDir dir;
    const Output out = run_max_rss(
        {"-q", "-o", dir / "r.json", "--plot", dir / "p.html", "--", "/bin/ls", "-A", dir.path.string()});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    CHECK(out.out.empty());  // ls saw an empty directory
    CHECK(dir.entries() == std::vector<std::string>{"p.html", "r.json"});

    const Output bench = run_max_rss({"bench", "-r", "1", "--show-output", "--style", "none", "--export-json",
                                      dir / "b.json", "ls -A '" + dir.path.string() + "'"});
    CHECK(bench.exit_code == 0);
    CHECK(bench.out == "p.html\nr.json\n");
}

TEST_CASE("outputs: SIGKILL of max_rss leaves no temporary file behind", "[outputs]") {
    TempDir dir;
    const std::string out = temp_path("kill.out"), err = temp_path("kill.err"), ready = temp_path("kill.ready");
    std::remove(ready.c_str());
    const pid_t pid = spawn_max_rss({"-q", "-o", dir / "r.json", "--plot", dir / "p.html", "--", fixture("touch"),
                                     "1", "600000"},
                                    out, err, {"FX_READY_FILE=" + ready});
    // The program runs (it says so once it has touched its memory): max_rss
    // is tracing, with its outputs open, when it is killed.
    REQUIRE(wait_for_line(ready, "touched"));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    CHECK(wait_exit_code(pid) == 137);
    CHECK(dir.entries().empty());
    std::remove(out.c_str());
    std::remove(err.c_str());
    std::remove(ready.c_str());
}

TEST_CASE("outputs: a bad path still fails before the program runs, leaving nothing", "[outputs]") {
    TempDir dir;
    std::ofstream(dir / "file") << "x";
    const std::string marker = dir / "ran";
    const Output out = run_max_rss({"-o", dir / "file/r.json", "--", "/bin/sh", "-c", "echo > '" + marker + "'"});
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: -o: cannot create export file '" + (dir / "file/r.json") + "': Not a directory\n");
    CHECK(dir.entries() == std::vector<std::string>{"file"});
}

TEST_CASE("outputs: a directory with no anonymous files, where nothing can be created, is refused before the run",
          "[outputs]") {
    // /proc has no O_TMPFILE, and access() says yes to root: the check passed,
    // the program ran, and the report failed after it (exit 4).
    const Output out = run_max_rss({"-q", "-o", "/proc/version", "--", "/bin/echo", "ran"});
    CHECK(out.exit_code == 2);
    CHECK(out.out.empty());
    // As root, the file may be written but nothing made beside it to replace
    // it with (that line said "cannot create ... No such file or directory" of
    // a file that exists); otherwise, Permission denied.
    if (::geteuid() == 0)
        CHECK(out.err == "max_rss: -o: cannot replace export file '/proc/version': no file can be made in /proc: "
                         "No such file or directory\n");
    else
        CHECK(out.err == "max_rss: -o: cannot create export file '/proc/version': Permission denied\n");
}

// ---------------------------------------------------------------------------
// 4. Closed standard descriptors.

TEST_CASE("outputs: with fd 2 closed, logs never reach the report and the program sees fd 2 closed",
          "[outputs][fds]") {
    TempDir dir;
    const std::string report = dir / "r.json";
    const Output out = run_max_rss_with(
        {"-vv", "-o", report, "--", "/bin/sh", "-c", "if [ -e /proc/$$/fd/2 ]; then echo open; else echo closed; fi"},
        [](int, int) { ::close(2); });
    CHECK(out.exit_code == 0);
    CHECK(out.out == "closed\n");
    const std::string text = read_text_file(report);
    CHECK_FALSE(contains(text, "max_rss: "));
    CHECK(json::parse(text)["kind"] == "run");
}

TEST_CASE("outputs: '-o -' with fd 1 closed is refused before the program runs", "[outputs][fds]") {
    const Output out = run_max_rss_with({"-q", "-o", "-", "--", "/bin/true"}, [](int, int) { ::close(1); });
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: -o: cannot write export to stdout: Bad file descriptor\n");
}

TEST_CASE("outputs: /dev/stdout, /dev/fd/2 and /proc/self/fd/1 of a closed fd are refused as '-' is",
          "[outputs][fds]") {
    // max_rss keeps /dev/null on a standard descriptor that was closed, for
    // its own sake: a report written through these names went there, lost,
    // with exit 0.
    for (const auto& [option, path, fd] : {std::tuple{"-o", "/dev/stdout", 1}, std::tuple{"-o", "/dev/fd/2", 2},
                                           std::tuple{"-o", "/proc/self/fd/1", 1},
                                           std::tuple{"--plot", "/dev/stdout", 1}}) {
        INFO(option << " " << path);
        const Output out = run_max_rss_with({"-q", option, path, "--", "/bin/true"}, [fd = fd](int, int) { ::close(fd); });
        CHECK(out.exit_code == 2);
        if (fd == 1) CHECK(contains(out.err, "cannot write export to stdout: Bad file descriptor\n"));
    }
    // /dev/null itself, with fd 1 closed, is a place the user chose.
    CHECK(run_max_rss_with({"-q", "-o", "/dev/null", "--", "/bin/true"}, [](int, int) { ::close(1); }).exit_code == 0);
}

TEST_CASE("outputs: 'compare -' with fd 0 closed says so", "[outputs][fds]") {
    const Output out =
        run_max_rss_with({"compare", "-", "/dev/null"}, [](int, int) { ::close(0); });
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: compare: -: cannot read: Bad file descriptor\n");
}

// ---------------------------------------------------------------------------
// 5. bench keeps degraded runs and warnings; compare warns about them.

TEST_CASE("outputs: bench's degraded runs reach its summary and every export", "[outputs][degraded]") {
    REQUIRE(fs::exists("/usr/bin/strace"));  // installed by scripts/setup.sh --test
    TempDir dir;
    // Under strace -f, max_rss's own PTRACE_SEIZE fails: every run is degraded.
    const Output out = run_program({"/usr/bin/strace", "-f", "-o", "/dev/null", max_rss_bin(), "bench", "-r", "2",
                                    "--style", "basic", "--export-json", dir / "b.json", "--export-csv",
                                    dir / "b.csv", "--export-markdown", dir / "b.md", fixture("touch") + " 10"});
    INFO(out.err);
    CHECK(out.exit_code == 0);
    CHECK(contains(out.err, "  Warning: 2 of 2 runs degraded"));
    const json exported = json::parse(read_text_file(dir / "b.json"));
    const json& result = exported["results"][0];
    CHECK(result["degraded_runs"] == 2);
    CHECK(result["runs"][0]["degraded"] == true);
    REQUIRE(result["warnings"].is_array());
    REQUIRE_FALSE(result["warnings"].empty());
    CHECK(contains(result["warnings"][0].get<std::string>(), "PTRACE_SEIZE"));
    const auto csv = lines_of(read_text_file(dir / "b.csv"));
    REQUIRE(csv.size() >= 2);
    CHECK(contains(csv[0], ",degraded_runs,"));
    CHECK(csv[0].ends_with(",backend,warnings"));
    CHECK(contains(csv[1], ",2,"));
    CHECK(contains(read_text_file(dir / "b.md"), "2 of 2 runs degraded"));

    SECTION("compare warns about either side") {
        const Output compared = run_max_rss({"compare", dir / "b.json", dir / "b.json"});
        CHECK(compared.exit_code == 0);
        const auto warnings = lines_starting(compared.err, "max_rss: compare: warning: ");
        CHECK(warnings.size() == 2);  // BASE and NEW
        CHECK(contains(compared.err, "2 of 2 runs degraded"));
    }
}

// ---------------------------------------------------------------------------
// 6. Empty values, two outputs to one place, a broken stdout.

TEST_CASE("outputs: an empty -o, --plot, --budget or export path is a usage error", "[outputs]") {
    TempDir dir;
    const std::string marker = dir / "ran";
    const std::vector<std::string> command{"--", "/bin/sh", "-c", "echo > '" + marker + "'"};
    const auto check_usage = [&](std::vector<std::string> args, const std::string& message) {
        if (args[0] != "bench") args.insert(args.end(), command.begin(), command.end());
        else args.push_back("echo > '" + marker + "'");
        const Output out = run_max_rss(args);
        CHECK(out.exit_code == 2);
        CHECK(out.err == message);
        CHECK_FALSE(fs::exists(marker));
    };
    check_usage({"-o", ""}, "max_rss: -o: empty path (use '-' for stdout)\n");
    const Output equals = run_max_rss({"--output=", "--", "/bin/true"});  // CLI11's own parse error
    CHECK(equals.exit_code == 2);
    CHECK(equals.err.rfind("max_rss: --output: ", 0) == 0);
    check_usage({"--plot", ""}, "max_rss: --plot: empty path (use '-' for stdout)\n");
    check_usage({"--budget", ""}, "max_rss: --budget: '' is not a size (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
    check_usage({"bench", "--budget", ""}, "max_rss: bench: --budget: '' is not a size (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
    check_usage({"bench", "--export-csv", ""}, "max_rss: bench: --export-csv: empty path (use '-' for stdout)\n");
}

TEST_CASE("outputs: two outputs to one file are refused before anything runs", "[outputs]") {
    TempDir dir;
    fs::create_directory(dir / "sub");
    const std::string marker = dir / "ran";
    const std::string run = "echo > '" + marker + "'";
    const auto check_refused = [&](std::vector<std::string> args, const std::string& message) {
        if (args[0] != "bench") args.insert(args.end(), {"--", "/bin/sh", "-c", run});
        else args.push_back(run);
        const Output out = run_max_rss(args);
        INFO(out.err);
        CHECK(out.exit_code == 2);
        CHECK(out.err == message);
        CHECK_FALSE(fs::exists(marker));
    };
    const std::string a = dir / "a";
    check_refused({"-o", a, "--plot", a}, "max_rss: -o and --plot write to the same file '" + a + "'\n");
    check_refused({"-o", a, "--plot", dir / "sub/../a"},
                  "max_rss: -o and --plot write to the same file '" + (dir / "sub/../a") + "'\n");
    check_refused({"-o", "-", "--plot", "-"}, "max_rss: -o and --plot both write to stdout\n");
    check_refused({"-o", "-", "--plot", "/proc/self/fd/1"}, "max_rss: -o and --plot both write to stdout\n");
    check_refused({"bench", "--export-json", a, "--export-csv", dir / "./a"},
                  "max_rss: bench: --export-json and --export-csv write to the same file '" + (dir / "./a") + "'\n");
    std::ofstream(a) << "existing\n";
    fs::create_symlink("a", dir / "link");
    check_refused({"bench", "--export-json", a, "--export-markdown", dir / "link"},
                  "max_rss: bench: --export-json and --export-markdown write to the same file '" + (dir / "link") +
                      "'\n");
    CHECK(read_text_file(a) == "existing\n");
}

TEST_CASE("outputs: a closed pipe on stdout is an output failure, not a death", "[outputs]") {
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    ::close(pipe_fds[0]);  // `max_rss -o - ... | true`: nobody reads
    const int write_end = pipe_fds[1];
    const auto broken_stdout = [write_end](int, int) { ::dup2(write_end, 1); };
    const Output failed = run_max_rss_with({"-q", "-o", "-", "--", fixture("exit_code"), "7"}, broken_stdout);
    CHECK(failed.exit_code == 7);
    CHECK(failed.err == "max_rss: -o: cannot write export to stdout: Broken pipe\n");
    const Output succeeded = run_max_rss_with({"-q", "-o", "-", "--", fixture("exit_code"), "0"}, broken_stdout);
    CHECK(succeeded.exit_code == 4);
    CHECK(succeeded.err == "max_rss: -o: cannot write export to stdout: Broken pipe\n");
    // The program still gets SIGPIPE as given: it dies of it writing to the pipe.
    const Output program = run_max_rss_with({"-q", "--", "/bin/sh", "-c", "echo x; echo y"}, broken_stdout);
    CHECK(program.exit_code == 128 + SIGPIPE);
    ::close(write_end);
}

TEST_CASE("outputs: the program inherits SIGPIPE's disposition as max_rss got it", "[outputs]") {
    // SigIgn of grep itself, as a hexadecimal mask: bit 12 is SIGPIPE (13).
    const auto sigpipe_ignored = [](const std::string& status) {
        for (const std::string& line : lines_of(status)) {
            if (line.rfind("SigIgn:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 12 & 1) == 1;
        }
        FAIL("no SigIgn line in: " << status);
        return false;
    };
    const Output plain = run_max_rss({"-q", "--", "/bin/grep", "SigIgn", "/proc/self/status"});
    REQUIRE(plain.exit_code == 0);
    CHECK_FALSE(sigpipe_ignored(plain.out));
    const Output ignored = run_program(
        {"/bin/sh", "-c", "trap '' PIPE; exec \"$0\" -q -- /bin/grep SigIgn /proc/self/status", max_rss_bin()});
    REQUIRE(ignored.exit_code == 0);
    CHECK(sigpipe_ignored(ignored.out));
}

// ---------------------------------------------------------------------------
// 7. compare reads bounded input and only what it understands.

TEST_CASE("outputs: compare's table shows a command's control characters as '?'", "[outputs][compare_cli]") {
    // The table goes to a terminal; the labels are the commands as run.
    TempDir dir;
    const std::vector<std::string> command{"/bin/sh", "-c", "true", "\x1b[31mred"};
    std::vector<std::string> base{"-q", "-o", dir / "a.json", "--"}, after{"-q", "-o", dir / "b.json", "--"};
    base.insert(base.end(), command.begin(), command.end());
    after.insert(after.end(), command.begin(), command.end());
    REQUIRE(run_max_rss(base).exit_code == 0);
    REQUIRE(run_max_rss(after).exit_code == 0);
    const Output out = run_max_rss({"compare", dir / "a.json", dir / "b.json"});
    INFO(out.out << out.err);
    CHECK(out.exit_code == 0);
    CHECK(contains(out.out, "?[31mred"));
    CHECK(out.out.find('\x1b') == std::string::npos);
    CHECK(out.err.find('\x1b') == std::string::npos);
}

TEST_CASE("outputs: compare refuses unknown schema versions", "[outputs][compare_cli]") {
    TempDir dir;
    std::ofstream(dir / "v2.json")
        << R"({"schema_version": 2, "kind": "run", "command": ["x"], "peak": {"tree_bytes": 1}})";
    std::ofstream(dir / "v1.json")
        << R"({"schema_version": 1, "kind": "run", "command": ["x"], "peak": {"tree_bytes": 1}})";
    const Output out = run_max_rss({"compare", dir / "v1.json", dir / "v2.json"});
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: compare: " + (dir / "v2.json") +
                         ": run report schema_version 2 is newer than this max_rss supports (1)\n");
    CHECK(out.out.empty());
}

TEST_CASE("outputs: compare stops at a nesting limit", "[outputs][compare_cli]") {
    TempDir dir;
    std::ofstream(dir / "v1.json")
        << R"({"schema_version": 1, "kind": "run", "command": ["x"], "peak": {"tree_bytes": 1}})";
    std::ofstream(dir / "deep.json") << std::string(1 << 20, '[');
    const Output deep = run_max_rss({"compare", dir / "deep.json", dir / "v1.json"});
    CHECK(deep.exit_code == 2);
    CHECK(deep.err == "max_rss: compare: " + (dir / "deep.json") +
                          ": not a max_rss report (nested more than 64 levels deep)\n");
}

TEST_CASE("outputs: compare stops at a size limit; /dev/zero is not JSON", "[outputs][compare_cli]") {
    TempDir dir;
    std::ofstream(dir / "v1.json")
        << R"({"schema_version": 1, "kind": "run", "command": ["x"], "peak": {"tree_bytes": 1}})";
    const Output zero = run_max_rss({"compare", "/dev/zero", dir / "v1.json"}, "", 20);
    CHECK(zero.exit_code == 2);
    CHECK(zero.err.rfind("max_rss: compare: /dev/zero: not valid JSON: ", 0) == 0);

    // Endless white space from a pipe: the lexer would keep all of it.
    const Output blank = run_program(
        {"/bin/sh", "-c", "yes '' | tr '\\n' ' ' | \"$0\" compare - \"$1\"", max_rss_bin(), dir / "v1.json"}, "", 60);
    CHECK(blank.exit_code == 2);
    CHECK(blank.err == "max_rss: compare: -: not a max_rss report (more than 1 MiB without a string or number)\n");

    // Endless small tokens in what compare skips: only the size limit ends it.
    const Output endless = run_program({"/bin/sh", "-c",
                                        "{ printf '{\"processes\": ['; yes '[1],' | tr -d '\\n'; } | "
                                        "\"$0\" compare - \"$1\"",
                                        max_rss_bin(), dir / "v1.json"},
                                       "", 100);
    CHECK(endless.exit_code == 2);
    CHECK(endless.err == "max_rss: compare: -: not a max_rss report (larger than 256 MiB)\n");
}

TEST_CASE("outputs: compare keeps at most a million values", "[outputs][compare_cli]") {
    TempDir dir;
    std::ofstream(dir / "v1.json")
        << R"({"schema_version": 1, "kind": "run", "command": ["x"], "peak": {"tree_bytes": 1}})";
    {
        std::ofstream many(dir / "many.json");
        many << "{\"schema_version\": 1, \"kind\": \"run\", \"command\": [\"x\"";
        for (int i = 0; i < 1'000'000; ++i) many << ",\"x\"";
        many << "], \"peak\": {\"tree_bytes\": 1}}";
    }
    const Output out = run_max_rss({"compare", dir / "many.json", dir / "v1.json"});
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: compare: " + (dir / "many.json") + ": not a max_rss report (more than 1000000 values)\n");
}
