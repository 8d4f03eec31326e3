#include "helpers.hpp"

#include <max_rss/engine/measure.hpp>
#include <max_rss/procfs/procfs.hpp>
#include <max_rss/report/compare.hpp>
#include <max_rss/util/text.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace max_rss::test {

std::string fixture(const std::string& name) { return std::string(MAX_RSS_FIXTURE_DIR) + "/" + name; }

namespace {
std::vector<char*> make_argv(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    static std::string bin = max_rss_bin();
    argv.push_back(bin.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    return argv;
}
int shell_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}
}  // namespace

Output run_max_rss(const std::vector<std::string>& args, const std::string& stdin_text,
                   double timeout_seconds) {
    std::vector<std::string> argv{max_rss_bin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, stdin_text, timeout_seconds);
}

Output run_program(const std::vector<std::string>& args, const std::string& stdin_text,
                   double timeout_seconds, const std::function<void()>& in_child) {
    int in[2], out[2], err[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(pipe2(err, O_CLOEXEC) == 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (in_child) in_child();
        execv(argv[0], argv.data());
        _exit(121);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    // A blocking write of more than the pipe holds would deadlock against a
    // program that is itself blocked writing to the stdout we are not reading.
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    // Feed stdin and drain both outputs without deadlocking on full pipes.
    size_t written = 0;
    if (stdin_text.empty()) {
        close(in[1]);
        in[1] = -1;
    }
    Output result;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0 || in[1] >= 0) {
        pollfd fds[3];
        nfds_t n = 0;
        if (out[0] >= 0) fds[n++] = {out[0], POLLIN, 0};
        if (err[0] >= 0) fds[n++] = {err[0], POLLIN, 0};
        if (in[1] >= 0) fds[n++] = {in[1], POLLOUT, 0};
        int r = poll(fds, n, 200);
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            FAIL("max_rss did not finish within the timeout");
        }
        if (r <= 0) continue;
        for (nfds_t i = 0; i < n; ++i) {
            if (!fds[i].revents) continue;
            if (fds[i].fd == in[1]) {
                ssize_t w = write(in[1], stdin_text.data() + written, stdin_text.size() - written);
                if (w > 0) written += static_cast<size_t>(w);
                if ((w < 0 && errno != EAGAIN) || written == stdin_text.size()) {
                    close(in[1]);
                    in[1] = -1;
                }
                continue;
            }
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close(fds[i].fd);
                if (fds[i].fd == out[0]) out[0] = -1;
                else err[0] = -1;
                --open_fds;
            } else {
                (fds[i].fd == out[0] ? result.out : result.err).append(buf, static_cast<size_t>(got));
            }
        }
    }
    result.exit_code = wait_exit_code(pid, timeout_seconds);
    return result;
}

bool max_rss_ebpf_available() {
    static const bool available = run_max_rss({"-q", "--backend", "ebpf", "--", "/bin/true"}).exit_code == 0;
    return available;
}

pid_t spawn_max_rss(const std::vector<std::string>& args, const std::string& stdout_path,
                    const std::string& stderr_path, const std::vector<std::string>& env) {
    auto argv = make_argv(args);
    std::vector<std::string> env_copy = env;  // putenv keeps the pointer
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int o = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(o, 1);
        dup2(e, 2);
        for (auto& entry : env_copy) putenv(entry.data());
        execv(argv[0], argv.data());
        _exit(121);
    }
    return pid;
}

bool wait_until(const std::function<bool()>& cond, double timeout_seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return cond();
}

bool wait_for_line(const std::string& path, const std::string& line, double timeout_seconds) {
    return wait_until([&] { return ("\n" + read_text_file(path)).find("\n" + line + "\n") != std::string::npos; },
                      timeout_seconds);
}

std::string wait_for_line_starting(const std::string& path, const std::string& prefix, double timeout_seconds) {
    std::string found;
    wait_until(
        [&] {
            std::istringstream lines(read_text_file(path));
            for (std::string line; std::getline(lines, line);) {
                if (line.rfind(prefix, 0) == 0) {
                    found = line;
                    return true;
                }
            }
            return false;
        },
        timeout_seconds);
    return found;
}

int wait_exit_code(pid_t pid, double timeout_seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return shell_code(status);
        if (r < 0) return -1;
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            FAIL("process " << pid << " did not finish within the timeout");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::string dir = "/proc/" + std::to_string(pid) + "/task/";
    std::ifstream tasks_probe(dir + std::to_string(pid) + "/children");
    // Threads may have children too; the leader's list is enough for our fixtures.
    pid_t c;
    while (tasks_probe >> c) out.push_back(c);
    return out;
}

std::vector<pid_t> descendants(pid_t pid) {
    std::vector<pid_t> out;
    for (pid_t c : children_of(pid)) {
        out.push_back(c);
        for (pid_t g : descendants(c)) out.push_back(g);
    }
    return out;
}

void check_thread_fork(const RunResult& r, double child_mib) {
    CHECK(r.exit.code == 0);
    const Process* p = find_process(r, "thread_fork");
    REQUIRE(p);
    CHECK(p->threads == 2);
    CHECK(p->exit.code == 0);
    const Process* child = nullptr;
    for (const Process& q : r.processes)
        if (q.ppid == p->pid) child = &q;
    REQUIRE(child);  // not an orphan of ppid 0
    CHECK_FALSE(child->orphaned);
    CHECK(child->exit.code == 0);
    // Its own pages plus a C program's baseline (~1-2 MiB).
    CHECK_THAT(mib(child->peak_rss_bytes), Catch::Matchers::WithinAbs(child_mib + 1.0, 1.5));
    CHECK_THAT(mib(r.peak.tree_bytes), Catch::Matchers::WithinAbs(child_mib + 1.0, 1.5));
}

void check_sigkill_ends_tree(const std::vector<std::string>& options, const std::vector<std::string>& env) {
    const std::string out = temp_path("sigkill.out"), err = temp_path("sigkill.err");
    std::vector<std::string> args = options;
    for (const char* arg : {"--", "/bin/sh", "-c", "sleep 300 & sleep 300; wait"}) args.emplace_back(arg);
    const pid_t pid = spawn_max_rss(args, out, err, env);
    std::vector<pid_t> tree;
    REQUIRE(wait_until([&] {
        tree = descendants(pid);
        return tree.size() >= 3;
    }));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    CHECK(wait_exit_code(pid, 60) == 137);
    for (pid_t p : tree) {
        INFO("pid " << p);
        CHECK(wait_until([&] { char s = process_state(p); return s == '?' || s == 'Z'; }));
    }
    for (const auto& p : {out, err}) std::remove(p.c_str());
}

char process_state(pid_t pid) { return max_rss::procfs::read_stat_state(pid).value_or('?'); }

pid_t fork_waiter() {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, &old);
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    return child;
}

bool sigterm_pending(pid_t pid) {
    const auto status = max_rss::procfs::read_status(pid);
    REQUIRE(status);
    REQUIRE(status->pending_signals);
    return (*status->pending_signals & (uint64_t{1} << (SIGTERM - 1))) != 0;
}

void end_child(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string temp_path(const std::string& name) {
    return "/tmp/max_rss_test_" + std::to_string(getpid()) + "_" + name;
}

const Process* find_process(const RunResult& result, const std::string& name) {
    for (const auto& p : result.processes) {
        if (p.images.empty() || !p.images.back().program || p.images.back().program->argv.empty()) continue;
        const std::string& argv0 = p.images.back().program->argv[0];
        if (argv0.size() >= name.size() && argv0.compare(argv0.size() - name.size(), name.size(), name) == 0)
            return &p;
    }
    return nullptr;
}

namespace {
bool write_small_file(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    return ::close(fd) == 0 && ok;
}
}  // namespace

TestCgroup::TestCgroup(const std::string& limit_bytes, const std::string& name) {
    path_ = "/sys/fs/cgroup/memory/max_rss_test_" + std::to_string(::getpid()) + name;
    if (::mkdir(path_.c_str(), 0755) != 0 && errno != EEXIST) {
        why_ = "mkdir " + path_ + ": " + std::strerror(errno);
        path_.clear();
        return;
    }
    if (!write_small_file(path_ + "/memory.limit_in_bytes", limit_bytes)) {
        why_ = "cannot set " + path_ + "/memory.limit_in_bytes: " + std::strerror(errno);
        return;
    }
    // With swap, the limit of memory+swap must be set too, or the program swaps.
    struct stat st {};
    if (::stat((path_ + "/memory.memsw.limit_in_bytes").c_str(), &st) == 0)
        write_small_file(path_ + "/memory.memsw.limit_in_bytes", limit_bytes);
    ok_ = true;
}

TestCgroup::~TestCgroup() {
    if (path_.empty()) return;
    // An OOM-killed process leaves only once its parent reaped it; retry briefly.
    for (int i = 0; i < 200 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void TestCgroup::enter() const { write_small_file(procs(), std::to_string(::getpid())); }

RunResult measure_argv(std::vector<std::string> argv) {
    MeasureOptions options;
    options.argv = std::move(argv);
    return measure(options);
}

std::string touch_command(int mib) {
    return shell_join(std::vector<std::string>{fixture("touch"), std::to_string(mib)});
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::shared_ptr<const Program> program(std::vector<std::string> argv) {
    auto p = std::make_shared<Program>();
    p->argv = std::move(argv);
    return p;
}

ExitStatus exited(int code) {
    ExitStatus status;
    status.code = code;
    return status;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string report_error_of(std::string_view text) {
    try {
        parse_report(text, "BASE.json");
    } catch (const ReportError& error) {
        return error.what();
    }
    return "(no error)";
}

}  // namespace max_rss::test
