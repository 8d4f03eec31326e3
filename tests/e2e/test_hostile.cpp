// Issue 12: the program behaves as it does without max_rss, and max_rss never
// hangs. Each case runs the same program with and without max_rss where the
// difference is the point, and waits for events (fixture lines, pipes),
// never for process states or wall-clock limits.
#include "helpers.hpp"

#include <max_rss/procfs/procfs.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace max_rss::test;
using nlohmann::json;

namespace {

// In a child about to exec: SIGHUP and SIGINT ignored, SIGUSR1 blocked (what
// nohup, a shell's background job, or a supervisor hands a program).
void ignore_and_block() {
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &blocked, nullptr);
}

// The lines of /proc/self/status that say what the program inherited.
std::string signal_lines(const std::string& status_text) {
    std::istringstream in(status_text);
    std::string out;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) out += line + "\n";
    return out;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

TEST_CASE("hostile: ignored and blocked signals reach the program as they were", "[hostile]") {
    const std::vector<std::string> show = {"/bin/cat", "/proc/self/status"};
    const Output direct = run_program(show, "", 60, ignore_and_block);
    std::vector<std::string> traced_argv{max_rss_bin(), "-q", "--"};
    traced_argv.insert(traced_argv.end(), show.begin(), show.end());
    const Output traced = run_program(traced_argv, "", 60, ignore_and_block);
    REQUIRE(direct.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    REQUIRE_FALSE(signal_lines(direct.out).empty());
    CHECK(signal_lines(traced.out) == signal_lines(direct.out));

    // Under nohup a program that hangs itself up survives.
    const Output nohup = run_program({max_rss_bin(), "-q", "--", "/bin/sh", "-c", "kill -HUP $$; echo survived"}, "",
                                     60, [] { ::signal(SIGHUP, SIG_IGN); });
    CHECK(nohup.exit_code == 0);
    CHECK(nohup.out == "survived\n");
}

TEST_CASE("hostile: a process-group signal reaches the program once", "[hostile][signals]") {
    const std::string out = temp_path("group.out"), err = temp_path("group.err"), ready = temp_path("group.ready");
    // ebpf stops nobody: the program takes its copy while max_rss looks (it
    // got 2 in 8 of 9 tries before the kernel side counted the root's
    // signals), so several tries of it.
    const bool ebpf = max_rss_ebpf_available();
    if (!ebpf) WARN("skipped for --backend ebpf: it cannot run here");
    for (const char* backend : {"ptrace", "ebpf", "ebpf", "ebpf", "ebpf", "ebpf"}) {
        if (std::string(backend) == "ebpf" && !ebpf) continue;
        INFO(backend);
        std::remove(ready.c_str());
        // max_rss and the program in a process group of their own, as a shell's job.
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::setpgid(0, 0);
            const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(o, 1);
            ::dup2(e, 2);
            const std::string env = "FX_READY_FILE=" + ready;
            ::putenv(const_cast<char*>(env.c_str()));
            const std::string counter = fixture("count_signals");
            ::execl(max_rss_bin(), max_rss_bin(), "-q", "--backend", backend, "--", counter.c_str(),
                    static_cast<char*>(nullptr));
            ::_exit(121);
        }
        ::setpgid(pid, pid);
        REQUIRE(wait_for_line(ready, "ready"));
        REQUIRE(::kill(-pid, SIGINT) == 0);  // kill -INT -PGID: the program and max_rss both get it
        // Then SIGTERM to max_rss alone: passed on after SIGINT was dealt with;
        // the program prints how many SIGINTs it got and exits.
        REQUIRE(::kill(pid, SIGTERM) == 0);
        CHECK(wait_exit_code(pid, 120) == 0);
        CHECK(read_text_file(out) == "SIGINT 1\n");
    }
    for (const auto& p : {out, err, ready}) std::remove(p.c_str());
}

TEST_CASE("hostile: SIGUSR1 sent to max_rss is passed to the program, and ends nothing", "[hostile][signals]") {
    // Its default action would kill max_rss, the tree with it, and the report.
    const std::string out = temp_path("usr1.out"), err = temp_path("usr1.err"), ready = temp_path("usr1.ready");
    const std::string report = temp_path("usr1.json");
    for (const char* backend : {"ptrace", "ebpf", "sample"}) {
        if (std::string(backend) == "ebpf" && !max_rss_ebpf_available()) {
            WARN("skipped for --backend ebpf: it cannot run here");
            continue;
        }
        INFO(backend);
        std::remove(ready.c_str());
        std::remove(report.c_str());
        const pid_t pid = spawn_max_rss({"-q", "--backend", backend, "-o", report, "--", fixture("count_signals")},
                                        out, err, {"FX_READY_FILE=" + ready});
        REQUIRE(wait_for_line(ready, "ready"));
        // Both pending at once reach the program in signal order: USR1 first.
        REQUIRE(::kill(pid, SIGUSR1) == 0);
        REQUIRE(::kill(pid, SIGTERM) == 0);
        CHECK(wait_exit_code(pid, 120) == 0);
        CHECK(read_text_file(out) == "SIGINT 0\nSIGUSR1 1\n");
        CHECK(json::parse(read_text_file(report))["exit"]["code"] == 0);
    }
    for (const auto& p : {out, err, ready, report}) std::remove(p.c_str());
}

TEST_CASE("hostile: a process SIGKILLed while it forks never hangs max_rss", "[hostile]") {
    // 40 rounds of a worker forking as fast as it can while another process
    // SIGKILLs it: some of its children are created without the fork ever
    // being reported. max_rss must take them in and end.
    const std::string report = temp_path("fork_killed.json");
    const Output out = run_max_rss({"-q", "-o", report, "--", fixture("fork_killed"), "40"}, "", 900);
    CHECK(out.exit_code == 0);
    const json r = json::parse(read_text_file(report));
    CHECK(r["exit"]["code"] == 0);
    CHECK(r["process_count"].get<long>() > 40);
    std::remove(report.c_str());
}

TEST_CASE("hostile: an orphan sees getppid() change as it does without max_rss", "[hostile]") {
    const std::string direct_file = temp_path("ppid.direct"), traced_file = temp_path("ppid.traced");
    std::remove(direct_file.c_str());
    std::remove(traced_file.c_str());
    REQUIRE(run_program({fixture("daemon_ppid"), direct_file}).exit_code == 0);
    const std::string direct = wait_for_line_starting(direct_file, "ppid ");
    REQUIRE_FALSE(direct.empty());
    // max_rss waits for the daemon, so its line is there when max_rss returns.
    const Output traced = run_max_rss({"-q", "--", fixture("daemon_ppid"), traced_file});
    CHECK(traced.exit_code == 0);
    CHECK(read_text_file(traced_file) == direct + "\n");
    for (const auto& p : {direct_file, traced_file}) std::remove(p.c_str());
}

TEST_CASE("hostile: ^C ends the run when the command has ended and what it started still runs", "[hostile][signals]") {
    // In a terminal (a pty): the command starts a daemon in a session of its
    // own and exits. ^C then reaches max_rss alone (the daemon is in no
    // foreground group): max_rss passes it on, kills what still runs, reports.
    const std::string started = temp_path("ctrl_c.started"), report = temp_path("ctrl_c.json");
    std::remove(started.c_str());
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const std::string script = "setsid sh -c 'echo $$ > " + started + "; trap \"\" INT; exec sleep 600' & exit 0";
        ::execl(max_rss_bin(), max_rss_bin(), "-q", "-o", report.c_str(), "--", "/bin/sh", "-c", script.c_str(),
                static_cast<char*>(nullptr));
        ::_exit(121);
    }
    const std::string daemon_line = wait_for_line_starting(started, "");
    REQUIRE_FALSE(daemon_line.empty());
    const pid_t daemon = static_cast<pid_t>(std::stol(daemon_line));
    // The command (sh) has ended once max_rss reaped it: max_rss has no child
    // left (the daemon was reparented away, as without max_rss).
    REQUIRE(wait_until([&] { return children_of(pid).empty(); }));
    const char ctrl_c = '\x03';
    REQUIRE(::write(master, &ctrl_c, 1) == 1);
    // Drain the terminal so nothing blocks on it, until max_rss is done.
    int status = 0;
    REQUIRE(wait_until([&] {
        char buf[256];
        ::fcntl(master, F_SETFL, O_NONBLOCK);
        while (::read(master, buf, sizeof buf) > 0) {
        }
        return ::waitpid(pid, &status, WNOHANG) == pid;
    }, 300));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // the command's own status
    CHECK(wait_until([&] { return !alive(daemon) || process_state(daemon) == 'Z'; }));
    const json r = json::parse(read_text_file(report));
    bool said = false;
    for (const auto& w : r["warnings"]) said |= w.get<std::string>().find("interrupted after the command ended") == 0;
    CHECK(said);
    ::close(master);
    for (const auto& p : {started, report}) std::remove(p.c_str());
}

TEST_CASE("hostile: one SIGTERM to max_rss stops a shell and the program the shell runs", "[hostile][signals]") {
    // The shell the command is (bench's /bin/sh -c, or the user's) forks the
    // program: the signal max_rss passes on kills the shell, and the program
    // ran on to its end (600 s here) before the fix. Now what outlives the
    // command gets the same signal, once.
    std::vector<std::vector<std::string>> modes = {{"-q", "--"}, {"bench", "--runs", "2", "--style", "none"}};
    if (max_rss_ebpf_available()) modes.push_back({"-q", "--backend", "ebpf", "--"});
    for (const auto& mode : modes) {
        const std::string o = temp_path("shell_term.out"), e = temp_path("shell_term.err"),
                          ready = temp_path("shell_term.ready");
        std::remove(ready.c_str());
        const std::string program = "sh -c 'echo $$ > " + ready + "; exec sleep 600'; echo after";
        std::vector<std::string> args = mode;
        if (mode.front() == "bench") args.push_back(program);
        else args.insert(args.end(), {"/bin/sh", "-c", program});
        INFO(args.front() << " " << args[1] << " " << args[2]);
        const pid_t pid = spawn_max_rss(args, o, e);
        const std::string line = wait_for_line_starting(ready, "");
        REQUIRE_FALSE(line.empty());
        const pid_t sleeper = static_cast<pid_t>(std::stol(line));
        REQUIRE(wait_until([&] { return max_rss::procfs::read_exe(sleeper).find("sleep") != std::string::npos; }));
        REQUIRE(::kill(pid, SIGTERM) == 0);
        CHECK(wait_exit_code(pid, 120) == 128 + SIGTERM);
        CHECK(wait_until([&] { return !alive(sleeper) || process_state(sleeper) == 'Z'; }));
        CHECK(read_text_file(o).find("after") == std::string::npos);
        for (const auto& p : {o, e, ready}) std::remove(p.c_str());
    }
}

TEST_CASE("hostile: CLONE_UNTRACED children are traced, measured, and killed with max_rss", "[hostile]") {
    for (const std::string how : {"clone", "clone3"}) {
        INFO(how);
        // Without the fix the child inherited the exec filter without a tracer:
        // its exec failed with ENOSYS (exit 38) and it was not in the report.
        const std::string report = temp_path("untraced.json");
        const Output out = run_max_rss({"-q", "-o", report, "--", fixture("untraced_clone"), how, "20", "/bin/true"});
        CHECK(out.exit_code == 0);
        const json r = json::parse(read_text_file(report));
        REQUIRE(r["processes"].size() == 2);
        const auto& child = r["processes"][1];
        CHECK(child["images"].size() == 2);  // the fork image, then /bin/true
        CHECK(child["peak_rss_bytes"].get<double>() / MiB >= 19.5);
        std::remove(report.c_str());

        // And a SIGKILL of max_rss takes it along, as any traced process.
        const std::string o = temp_path("untraced.out"), e = temp_path("untraced.err"), ready = temp_path("untraced.ready");
        std::remove(ready.c_str());
        const pid_t pid = spawn_max_rss({"-q", "--", fixture("untraced_clone"), how, "1", "/bin/sleep", "600"}, o, e,
                                        {"FX_READY_FILE=" + ready});
        const std::string line = wait_for_line_starting(ready, "child ");
        REQUIRE_FALSE(line.empty());
        const pid_t child_pid = static_cast<pid_t>(std::stol(line.substr(6)));
        // It says "child" just before its exec: wait for the exec to show.
        REQUIRE(wait_until([&] { return max_rss::procfs::read_exe(child_pid).find("sleep") != std::string::npos; }));
        REQUIRE(::kill(pid, SIGKILL) == 0);
        CHECK(wait_exit_code(pid, 60) == 137);
        CHECK(wait_until([&] { return !alive(child_pid) || process_state(child_pid) == 'Z'; }));
        for (const auto& p : {o, e, ready}) std::remove(p.c_str());
    }
}

TEST_CASE("hostile: a program's own seccomp filter gets what it gets without max_rss", "[hostile]") {
    const Output direct = run_program({fixture("own_seccomp"), "trace"});
    REQUIRE(direct.exit_code == 0);
    CHECK(direct.out == "getppid: ENOSYS\n");
    const Output traced = run_max_rss({"-q", "--", fixture("own_seccomp"), "trace"});
    CHECK(traced.exit_code == 0);
    CHECK(traced.out == direct.out);
}

TEST_CASE("hostile: a stop signal that comes while the release filter is installed is not lost", "[hostile]") {
    // vfork_stop's parent gets SIGSTOP while it waits in vfork: it is taken
    // the moment max_rss makes it run seccomp(2). Its child waits for the
    // parent to be stopped, then continues it; a lost stop fails the run.
    const Output direct = run_program({fixture("vfork_stop")});
    REQUIRE(direct.exit_code == 0);
    const std::string report = temp_path("vfork_stop.json");
    const Output traced = run_max_rss({"-q", "-o", report, "--", fixture("vfork_stop")});
    CHECK(traced.exit_code == 0);
    CHECK(traced.err.find("never stopped") == std::string::npos);
    const json r = json::parse(read_text_file(report));
    CHECK(r["peak"]["method"] == "exact");
    CHECK(r["warnings"].empty());
    std::remove(report.c_str());
}

TEST_CASE("hostile: a first vfork child that waits on a child of its own before its exec does not hang",
          "[hostile]") {
    // While the release filter goes into the parent (which waits for the
    // vfork child's exec), nothing the child waits for may be held.
    const std::string report = temp_path("vfork_grandchild.json");
    const Output traced = run_max_rss({"-q", "-o", report, "--", fixture("vfork_grandchild")}, "", 120);
    CHECK(traced.exit_code == 0);
    const json r = json::parse(read_text_file(report));
    CHECK(r["process_count"] == 3);
    CHECK(r["peak"]["method"] == "exact");
    std::remove(report.c_str());
}

TEST_CASE("hostile: a sandbox that forbids further seccomp filters: the tree peak is a stated lower bound",
          "[hostile]") {
    // The release filter comes at the tree's first fork, through seccomp(2);
    // this program's own filter fails that call. It runs as without max_rss,
    // and the report does not call its peak exact.
    const Output direct = run_program({fixture("own_seccomp"), "deny"});
    REQUIRE(direct.exit_code == 0);
    REQUIRE(direct.out == "seccomp denied\n");
    const std::string report = temp_path("own_seccomp_deny.json");
    const Output traced = run_max_rss({"-o", report, "--", fixture("own_seccomp"), "deny"});
    CHECK(traced.exit_code == 0);
    CHECK(traced.out == direct.out);
    CHECK(traced.err.find("could not install the release-point filter") != std::string::npos);
    CHECK(traced.err.find("it has seccomp filters of its own") != std::string::npos);
    const json r = json::parse(read_text_file(report));
    CHECK(r["peak"]["method"] == "lower-bound");
    CHECK(r["peak"]["inexact_reason"] == "no-release-points");
    std::remove(report.c_str());
}

TEST_CASE("hostile: seccomp strict mode cannot work under ptrace: said in one line, and sample measures it",
          "[hostile]") {
    const Output direct = run_program({fixture("own_seccomp"), "strict"});
    REQUIRE(direct.exit_code == 0);
    REQUIRE(direct.out == "strict ok\n");
    const Output traced = run_max_rss({"-q", "--", fixture("own_seccomp"), "strict"});
    CHECK(traced.exit_code == 1);
    CHECK(traced.out == "strict: Invalid argument\n");
    CHECK(traced.err.find("asks for seccomp strict mode") != std::string::npos);
    CHECK(traced.err.find("--backend sample") != std::string::npos);
    const Output sampled = run_max_rss({"-q", "--backend", "sample", "--", fixture("own_seccomp"), "strict"});
    CHECK(sampled.exit_code == 0);
    CHECK(sampled.out == "strict ok\n");
}

TEST_CASE("hostile: a program that meets ptrace (a debugger, strace) gets one line naming the way out",
          "[hostile]") {
    for (const char* mode : {"traceme", "attach"}) {
        INFO(mode);
        const Output direct = run_program({fixture("ptrace_child"), mode});
        REQUIRE(direct.exit_code == 0);
        const Output traced = run_max_rss({"--", fixture("ptrace_child"), mode});
        CHECK(traced.exit_code == 1);
        CHECK(traced.out == std::string(mode) + ": Operation not permitted\n");
        const std::string request = std::string("ptrace(") + (mode[0] == 't' ? "PTRACE_TRACEME" : "PTRACE_ATTACH") + ")";
        CHECK(traced.err.find(request + ": refused (Operation not permitted)") != std::string::npos);
        CHECK(traced.err.find("--backend sample measures it untouched") != std::string::npos);
        CHECK(traced.err.find("--backend ebpf") != std::string::npos);
        const Output sampled = run_max_rss({"--backend", "sample", "--", fixture("ptrace_child"), mode});
        CHECK(sampled.exit_code == 0);
        CHECK(sampled.out == direct.out);
        CHECK(sampled.err.find("ptrace(") == std::string::npos);
    }
}

TEST_CASE("hostile: bench stops when told to, even when the program handles the signal", "[hostile][bench]") {
    // count_signals exits 0 on SIGTERM: before the fix bench went on with
    // the next runs and exited 0.
    const std::string o = temp_path("bench_int.out"), e = temp_path("bench_int.err"), ready = temp_path("bench_int.ready");
    std::remove(ready.c_str());
    const pid_t pid = spawn_max_rss({"bench", "-N", "--runs", "3", fixture("count_signals")}, o, e,
                                    {"FX_READY_FILE=" + ready});
    REQUIRE(wait_for_line(ready, "ready"));
    REQUIRE(::kill(pid, SIGTERM) == 0);
    CHECK(wait_exit_code(pid, 120) == 128 + SIGTERM);
    CHECK(read_text_file(e).find("max_rss: bench: interrupted by SIGTERM") != std::string::npos);
    // One run started; none after it.
    std::ifstream lines(ready);
    int runs = 0;
    for (std::string line; std::getline(lines, line);) runs += line == "ready";
    CHECK(runs == 1);
    for (const auto& p : {o, e, ready}) std::remove(p.c_str());
}

TEST_CASE("hostile: SIGUSR1 sent to bench between measured runs is passed on and ends nothing",
          "[hostile][bench][signals]") {
    // While a --prepare command runs, no run owns the signals: SIGUSR1's
    // default action killed bench there, and every result so far with it.
    const std::string o = temp_path("bench_usr1.out"), e = temp_path("bench_usr1.err"),
                      ready = temp_path("bench_usr1.ready");
    std::remove(ready.c_str());
    const pid_t pid = spawn_max_rss({"bench", "-N", "--runs", "1", "--show-output", "--prepare",
                                     fixture("count_signals"), "true"},
                                    o, e, {"FX_READY_FILE=" + ready});
    REQUIRE(wait_for_line(ready, "ready"));
    REQUIRE(::kill(pid, SIGUSR1) == 0);
    // Then SIGTERM: the prepare command reports what it got, and bench stops.
    REQUIRE(::kill(pid, SIGTERM) == 0);
    CHECK(wait_exit_code(pid, 120) == 128 + SIGTERM);
    CHECK(read_text_file(o).find("SIGINT 0\nSIGUSR1 1\n") != std::string::npos);
    CHECK(read_text_file(e).find("max_rss: bench: interrupted by SIGTERM") != std::string::npos);
    for (const auto& p : {o, e, ready}) std::remove(p.c_str());
}

TEST_CASE("hostile: a SIGTERM in max_rss's first moment is not lost, run after run", "[hostile][bench][signals]") {
    // No waiting for the program: the signal lands while max_rss starts it.
    // count_signals waits for SIGTERM forever: a lost one would hang here.
    // Lost it was, once in 10-30 tries: before its exec the program is a copy
    // of max_rss with max_rss's handlers (they ran there and kept it), and
    // bench's own handler kept a signal that came before a run took over.
    // So, many tries of each.
    const std::string o = temp_path("early.out"), e = temp_path("early.err");
    for (const bool bench : {false, true}) {
        for (int attempt = 0; attempt < 25; ++attempt) {
            INFO((bench ? "bench" : "run") << ", attempt " << attempt);
            const std::vector<std::string> args =
                bench ? std::vector<std::string>{"bench", "-N", "--runs", "3", fixture("count_signals")}
                      : std::vector<std::string>{"-q", "--", fixture("count_signals")};
            const pid_t pid = spawn_max_rss(args, o, e);
            // Not before the exec: until then the child is a copy of this test
            // binary, whose own handlers would take the signal.
            REQUIRE(wait_until([pid] { return max_rss::procfs::read_exe(pid).ends_with("/max_rss"); }));
            REQUIRE(::kill(pid, SIGTERM) == 0);
            const int code = wait_exit_code(pid, 60);
            // bench stops, interrupted; a run ends as the program does: dead
            // of the signal, or exiting 0 once its handler saw it.
            if (bench) CHECK(code == 128 + SIGTERM);
            else CHECK((code == 128 + SIGTERM || code == 0));
        }
    }
    for (const auto& p : {o, e}) std::remove(p.c_str());
}

TEST_CASE("hostile: --cgroup keeps the program inside max_rss's own memory limit, and leaves nothing behind",
          "[hostile][cgroup]") {
    TestCgroup limited("104857600", "_limited");  // 100 MiB
    if (!limited.ok()) {
        WARN("skipped: cannot make a memory cgroup here (" << limited.why() << ")");
        return;
    }
    const auto in_limited = [&limited] { limited.enter(); };
    // Without --cgroup: touching 200 MiB in a 100 MiB cgroup is an OOM kill.
    const Output plain = run_program({max_rss_bin(), "-q", "--", fixture("touch"), "200"}, "", 120, in_limited);
    CHECK(plain.exit_code == 128 + SIGKILL);
    // With it, the same: the new cgroup is made inside the limited one.
    const Output with_cgroup =
        run_program({max_rss_bin(), "-q", "--cgroup", "--", fixture("touch"), "200"}, "", 120, in_limited);
    CHECK(with_cgroup.exit_code == 128 + SIGKILL);

    // A SIGKILLed max_rss cannot remove its cgroup; the next run does.
    const std::string o = temp_path("cg.out"), e = temp_path("cg.err"), ready = temp_path("cg.ready");
    std::remove(ready.c_str());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        limited.enter();
        const int fo = ::open(o.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int fe = ::open(e.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fo, 1);
        ::dup2(fe, 2);
        const std::string env = "FX_READY_FILE=" + ready;
        ::putenv(const_cast<char*>(env.c_str()));
        const std::string touch = fixture("touch");
        ::execl(max_rss_bin(), max_rss_bin(), "-q", "--cgroup", "--", touch.c_str(), "1", "600000",
                static_cast<char*>(nullptr));
        ::_exit(121);
    }
    REQUIRE(wait_for_line(ready, "touched"));
    const auto leftovers = [&limited] {
        std::vector<std::string> found;
        if (DIR* dir = ::opendir(limited.path().c_str())) {
            while (dirent* entry = ::readdir(dir))
                if (std::string(entry->d_name).rfind("max_rss-", 0) == 0) found.push_back(entry->d_name);
            ::closedir(dir);
        }
        return found;
    };
    CHECK(leftovers().size() == 1);  // the running max_rss's
    REQUIRE(::kill(pid, SIGKILL) == 0);
    CHECK(wait_exit_code(pid, 60) == 137);
    // Its program dies with it (PTRACE_O_EXITKILL); then the cgroup is empty.
    REQUIRE(wait_until([&] { return read_text_file(limited.path() + "/" + leftovers().front() + "/cgroup.procs").empty(); }));
    const Output next = run_program({max_rss_bin(), "-q", "--cgroup", "--", "/bin/true"}, "", 60, in_limited);
    CHECK(next.exit_code == 0);
    CHECK(leftovers().empty());
    for (const auto& p : {o, e, ready}) std::remove(p.c_str());
}

namespace {

// A fork_waiter() that holds pid `wanted` (one that was just freed), by
// asking the kernel for it (root: /proc/sys/kernel/ns_last_pid); -1 when
// another process took it first, every try.
pid_t hold_pid(pid_t wanted) {
    for (int attempt = 0; attempt < 50; ++attempt) {
        if (::kill(wanted, 0) == 0) return -1;  // taken by someone else meanwhile
        std::ofstream last("/proc/sys/kernel/ns_last_pid");
        if (!(last << wanted - 1) || !last.flush()) return -1;
        last.close();
        const pid_t holder = fork_waiter();
        if (holder == wanted) return holder;
        end_child(holder);
    }
    return -1;
}

}  // namespace

TEST_CASE("hostile: sample: a pid reused after its process was reaped gets no signal from max_rss",
          "[hostile][signals]") {
    // pid_max is 32768 on a 2-CPU machine: a fork-heavy tree wraps it within
    // one --interval, and a process sampled once may be reaped by its parent
    // and its pid taken by an unrelated one before the next sample sees it go.
    if (::geteuid() != 0 || ::access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
        WARN("skipped: reusing a chosen pid needs root (/proc/sys/kernel/ns_last_pid)");
        return;
    }
    const std::string out = temp_path("reuse.out"), err = temp_path("reuse.err"), ready = temp_path("reuse.ready");
    const std::string report = temp_path("reuse.json"), fifo = temp_path("reuse.fifo");
    for (const auto& p : {ready, report, fifo}) std::remove(p.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const pid_t max_rss = spawn_max_rss(
        {"-q", "--backend", "sample", "--interval", "1s", "-o", report, "--", fixture("reap_child"), fifo}, out, err,
        {"FX_READY_FILE=" + ready});
    const std::string child_line = wait_for_line_starting(ready, "child ");
    REQUIRE(!child_line.empty());
    const pid_t child = std::stoi(child_line.substr(6));
    // The sampler finds the child at its next sample, within the interval.
    // Nothing tells when it did: the report says afterwards (below), and a
    // run where it did not cannot fail this test, only miss the defect.
    ::usleep(2'500'000);
    {
        std::ofstream release(fifo);
        release << 'x';
    }
    REQUIRE(wait_for_line(ready, "reaped"));
    const pid_t stranger = hold_pid(child);
    // The root is killed by the SIGTERM passed on to it; what the sampler
    // still takes for its child gets that SIGTERM too, once.
    REQUIRE(::kill(max_rss, SIGTERM) == 0);
    CHECK(wait_exit_code(max_rss, 120) == 128 + SIGTERM);
    if (stranger < 0) {
        WARN("not checked: pid " << child << " was taken by another process before this test could take it");
    } else {
        // max_rss has exited: a SIGTERM it sent is pending in the stranger.
        CHECK_FALSE(sigterm_pending(stranger));
        end_child(stranger);
    }
    const json r = json::parse(read_text_file(report));
    bool sampled = false;
    for (const auto& p : r["processes"]) sampled = sampled || p["pid"] == child;
    if (!sampled) WARN("the sampler never saw the child: this run could not have caught the defect");
    for (const auto& p : {out, err, ready, report, fifo}) std::remove(p.c_str());
}
