// The max_rss binary end to end: exit codes, pass-through of the program's
// stdin/stdout/exit status/signals, the report file, signal forwarding.
#include "helpers.hpp"

#include <max_rss/util/text.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <thread>

using namespace max_rss::test;
using max_rss::display_width;
using nlohmann::json;

namespace {
size_t newline_count(const std::string& s) {
    size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}
}  // namespace

TEST_CASE("the program's exit code is max_rss's exit code", "[cli]") {
    CHECK(run_max_rss({"-q", "--", fixture("exit_code"), "0"}).exit_code == 0);
    CHECK(run_max_rss({"-q", "--", fixture("exit_code"), "7"}).exit_code == 7);
    CHECK(run_max_rss({"-q", "--", fixture("exit_code"), "255"}).exit_code == 255);
}

TEST_CASE("a program killed by signal N gives 128+N", "[cli]") {
    CHECK(run_max_rss({"-q", "--", fixture("exit_code"), "signal", "15"}).exit_code == 143);
    auto out = run_max_rss({"-q", "-o", "-", "--", fixture("self_kill"), "100"});
    CHECK(out.exit_code == 137);
    auto report = json::parse(out.out);
    CHECK(report["exit"]["signal"] == 9);
    CHECK(report["exit"]["code"].is_null());
    const double peak_mib = report["peak"]["tree_bytes"].get<double>() / MiB;
    CHECK(peak_mib >= 100);
    CHECK(peak_mib <= 102.5);
}

TEST_CASE("a command that is not found exits 127 with one line", "[cli]") {
    auto out = run_max_rss({"--", "max-rss-no-such-command-xyz", "a"});
    CHECK(out.exit_code == 127);
    CHECK(out.err == "max_rss: max-rss-no-such-command-xyz: command not found\n");
    CHECK(out.out.empty());
    // An empty name is no command either (it read "max_rss: : Permission
    // denied", 126: execvp tried it as a PATH directory).
    const Output empty = run_max_rss({"--", ""});
    CHECK(empty.exit_code == 127);
    CHECK(empty.err == "max_rss: '': command not found\n");
}

TEST_CASE("a script whose interpreter is missing exits 127 saying so, not 'command not found'", "[cli]") {
    const std::string script = temp_path("no_interpreter.sh");
    {
        std::ofstream out(script);
        out << "#!/max-rss-no-such-interpreter\n";
    }
    REQUIRE(::chmod(script.c_str(), 0755) == 0);
    for (const char* backend : {"ptrace", "sample"}) {
        INFO(backend);
        auto out = run_max_rss({"--backend", backend, "--", script});
        CHECK(out.exit_code == 127);
        CHECK(out.err == "max_rss: " + script +
                             ": cannot execute: required file not found (its #! interpreter or its ELF loader)\n");
    }
    std::remove(script.c_str());
}

TEST_CASE("a command that is not executable exits 126 with one line", "[cli]") {
    const std::string path = std::string(MAX_RSS_TEST_DATA_DIR) + "/proc/statm_touch50.txt";
    auto out = run_max_rss({"--", path});
    CHECK(out.exit_code == 126);
    CHECK(out.err == "max_rss: " + path + ": Permission denied\n");
    auto directory = run_max_rss({"--", "/tmp"});
    CHECK(directory.exit_code == 126);
    CHECK(directory.err == "max_rss: /tmp: Is a directory\n");
}

TEST_CASE("usage errors exit 2 and run nothing", "[cli]") {
    const std::string marker = temp_path("marker");
    std::remove(marker.c_str());
    const std::vector<std::string> cmd{"--", "/bin/sh", "-c", "echo ran > " + marker};

    SECTION("no command") {
        auto out = run_max_rss({"-q"});
        CHECK(out.exit_code == 2);
        CHECK(out.err.find("max_rss: no COMMAND given") == 0);
    }
    SECTION("unknown option") {
        auto out = run_max_rss({"--bogus", "--", "/bin/true"});
        CHECK(out.exit_code == 2);
        CHECK(out.err.find("max_rss: ") == 0);
    }
    SECTION("a budget that is not a size") {
        std::vector<std::string> args{"--budget", "lots"};
        args.insert(args.end(), cmd.begin(), cmd.end());
        auto out = run_max_rss(args);
        CHECK(out.exit_code == 2);
        CHECK(out.err == "max_rss: --budget: 'lots' is not a size (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
    }
    SECTION("a report path that cannot be written is refused before the program starts") {
        std::vector<std::string> args{"-o", "/nonexistent-dir/report.json"};
        args.insert(args.end(), cmd.begin(), cmd.end());
        auto out = run_max_rss(args);
        CHECK(out.exit_code == 2);
        CHECK(out.err.find("/nonexistent-dir/report.json") != std::string::npos);
        CHECK(newline_count(out.err) == 1);
    }
    CHECK_FALSE(file_exists(marker));
}

TEST_CASE("help and version", "[cli]") {
    auto help = run_max_rss({"--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--output") != std::string::npos);
    CHECK(help.out.find("Exit status") != std::string::npos);
    // Every backend the option accepts is described in the help.
    for (const char* backend : {"ptrace (default", "ebpf (", "sample ("}) CHECK(help.out.find(backend) != std::string::npos);
    auto version = run_max_rss({"--version"});
    CHECK(version.exit_code == 0);
    CHECK(version.out == "max_rss " MAX_RSS_VERSION "\n");
}

TEST_CASE("options after COMMAND belong to COMMAND", "[cli]") {
    // Without "--", the first word that is not an option starts COMMAND.
    auto out = run_max_rss({"-q", "/bin/echo", "-q", "--", "-o"});
    CHECK(out.exit_code == 0);
    CHECK(out.out == "-q -- -o\n");
}

TEST_CASE("200000 lines of stdout pass through untouched", "[cli]") {
    auto out = run_max_rss({"-q", "--", fixture("print_lines"), "200000"});
    CHECK(out.exit_code == 0);
    CHECK(newline_count(out.out) == 200000);
    CHECK(out.out.rfind("line 200000\n") == out.out.size() - 12);
    CHECK(out.err.empty());  // -q: nothing of max_rss's own
}

TEST_CASE("stdin passes through untouched", "[cli]") {
    std::string text;
    for (int i = 0; i < 20000; ++i) text += "input line " + std::to_string(i) + "\n";
    auto out = run_max_rss({"-q", "--", fixture("echo_stdin")}, text);
    CHECK(out.exit_code == 0);
    CHECK(out.out == text);
}

TEST_CASE("the summary on stderr shows the tree peak and ru_maxrss", "[cli]") {
    auto out = run_max_rss({"--", fixture("touch"), "50"});
    CHECK(out.exit_code == 0);
    CHECK(out.out.empty());
    CHECK(out.err.find("peak of the whole tree (1 process, 1 image)") != std::string::npos);
    CHECK(out.err.find("ru_maxrss:") != std::string::npos);
    CHECK(out.err.find("51.") != std::string::npos);  // 50 MiB + ~1.2 MiB baseline
}

TEST_CASE("the JSON report follows the documented schema", "[cli]") {
    const std::string path = temp_path("report.json");
    auto out = run_max_rss({"-q", "-o", path, "--", fixture("fork_exec"), "100", fixture("touch"), "10"});
    REQUIRE(out.exit_code == 0);
    auto r = json::parse(read_text_file(path));
    std::remove(path.c_str());
    CHECK(r["schema_version"] == 1);
    CHECK(r["kind"] == "run");
    CHECK(r["command"][0] == fixture("fork_exec"));
    CHECK(r["exit"]["code"] == 0);
    CHECK(r["wall_seconds"].get<double>() > 0);
    CHECK(r["peak"]["method"].is_string());
    CHECK(r["ru_maxrss_bytes"].get<double>() / MiB > 100);
    REQUIRE(r["processes"].size() == 2);
    CHECK(r["process_count"] == 2);
    const auto& child = r["processes"][1];
    CHECK(child["ppid"] == r["processes"][0]["pid"]);
    REQUIRE(child["images"].size() == 2);
    CHECK(child["images"][0]["origin"] == "fork");
    CHECK(child["images"][1]["origin"] == "exec");
    CHECK(child["images"][1]["argv"] == json::array({fixture("touch"), "10"}));
    const double child_peak_mib = child["images"][1]["peak_rss_bytes"].get<double>() / MiB;
    CHECK(child_peak_mib >= 10);
    CHECK(child_peak_mib <= 12.5);
    CHECK(child["ru_maxrss_bytes"].get<double>() / MiB > 100);  // the inherited figure
    for (const char* key : {"pid", "ppid", "threads", "peak_rss_bytes", "ru_maxrss_bytes", "exit", "images",
                            "at_exit"})
        CHECK(child.contains(key));
}

TEST_CASE("budget: a run over it fails with exit 3", "[cli]") {
    auto over = run_max_rss({"--budget", "50MiB", "--", fixture("touch"), "100"});
    CHECK(over.exit_code == 3);
    CHECK(over.err.find("max_rss: over budget: peak 101.") != std::string::npos);
    auto under = run_max_rss({"-q", "--budget", "1GiB", "--", fixture("touch"), "100"});
    CHECK(under.exit_code == 0);
    CHECK(under.err.empty());
}

TEST_CASE("SIGTERM, SIGINT, SIGHUP, SIGQUIT to max_rss reach the program and the report is still written",
          "[cli][signals]") {
    const int sig = GENERATE(SIGTERM, SIGINT, SIGHUP, SIGQUIT);
    INFO("signal " << sig);
    const std::string report = temp_path("sig.json");
    const std::string out = temp_path("sig.out"), err = temp_path("sig.err"), ready = temp_path("sig.ready");
    std::remove(ready.c_str());
    pid_t pid = spawn_max_rss({"-q", "-o", report, "--", fixture("touch"), "20", "600000"}, out, err,
                              {"FX_READY_FILE=" + ready});
    // Wait until the program has touched its memory (it says so), then signal max_rss.
    REQUIRE(wait_for_line(ready, "touched"));
    REQUIRE(::kill(pid, sig) == 0);
    CHECK(wait_exit_code(pid, 60) == 128 + sig);
    auto r = json::parse(read_text_file(report));
    CHECK(r["exit"]["signal"] == sig);
    CHECK(r["peak"]["tree_bytes"].get<double>() / MiB >= 20);
    for (const auto& p : {report, out, err, ready}) std::remove(p.c_str());
}

TEST_CASE("SIGKILL of max_rss leaves no traced process behind", "[cli][signals]") {
    check_sigkill_ends_tree({"-q"});
}

TEST_CASE("a program that stops itself stays stopped until SIGCONT", "[cli][signals]") {
    const std::string out = temp_path("stop.out"), err = temp_path("stop.err"), ready = temp_path("stop.ready");
    std::remove(ready.c_str());
    pid_t pid = spawn_max_rss({"-q", "--", fixture("self_stop")}, out, err, {"FX_READY_FILE=" + ready});
    // The fixture says "stopping" just before raise(SIGSTOP); from then on its
    // state can only become stopped ('T', or 't' while max_rss holds it in
    // PTRACE_LISTEN), and nothing but our SIGCONT may wake it.
    REQUIRE(wait_for_line(ready, "stopping"));
    const auto kids = children_of(pid);
    REQUIRE(kids.size() == 1);
    const pid_t child = kids[0];
    REQUIRE(wait_until([&] { char s = process_state(child); return s == 't' || s == 'T'; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    const char state = process_state(child);
    CHECK((state == 'T' || state == 't'));  // still stopped: max_rss did not resume it
    REQUIRE(::kill(child, SIGCONT) == 0);
    CHECK(wait_exit_code(pid, 60) == 0);
    double stopped_seconds = 0;
    REQUIRE(std::sscanf(read_text_file(out).c_str(), "stopped %lf", &stopped_seconds) == 1);
    CHECK(stopped_seconds >= 0.35);  // resumed by max_rss it would be ~0.000 (clocks differ by ms)
    for (const auto& p : {out, err, ready}) std::remove(p.c_str());
}

TEST_CASE("signals a program sends itself arrive exactly once", "[cli][signals]") {
    auto out = run_max_rss({"-q", "--", fixture("trap_signal"), "1000"});
    CHECK(out.exit_code == 0);
    CHECK(out.out == "got 1000\n");
}

TEST_CASE("tree option prints the process tree with peaks", "[cli][concurrent]") {
    auto out = run_max_rss({"-q", "--tree", "--", fixture("children_touch"), "concurrent", "3", "20"});
    CHECK(out.exit_code == 0);
    // The root, its 3 alike children in one line, the key that says so.
    CHECK(newline_count(out.err) == 3);
    CHECK(out.err.find("└─ ×3 ") != std::string::npos);
    CHECK(out.err.find("20.") != std::string::npos);
    CHECK(out.err.find("\nkey: ×N: N alike siblings in one line") != std::string::npos);
}

TEST_CASE("tree options: depth and minimum hide what they say, and imply --tree", "[cli]") {
    auto out = run_max_rss({"-q", "--tree-depth", "0", "--", fixture("children_touch"), "concurrent", "3", "20"});
    CHECK(out.exit_code == 0);
    CHECK(out.err.find("(3 processes deeper than --tree-depth 0 not shown)\n") != std::string::npos);
    out = run_max_rss({"-q", "--tree-min", "10MiB", "--", fixture("children_touch"), "concurrent", "3", "20"});
    CHECK(out.err.find("└─ ×3 ") != std::string::npos);
    CHECK(out.err.find("not shown") == std::string::npos);
    CHECK(run_max_rss({"--tree-min", "10", "--", "true"}).err ==
          "max_rss: --tree-min: '10' has no unit (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
}

TEST_CASE("tree lines fit $COLUMNS unless --wide", "[cli]") {
    const std::string long_arg(300, 'x');
    const auto columns_60 = [] { ::setenv("COLUMNS", "60", 1); };
    auto out = run_program({max_rss_bin(), "-q", "--tree", "--", "/bin/sh", "-c", "true " + long_arg}, "", 60, columns_60);
    const std::string first = out.err.substr(0, out.err.find('\n'));
    CHECK(display_width(first) == 60);
    CHECK(first.substr(first.size() - 3) == "…");
    out = run_program({max_rss_bin(), "-q", "--wide", "--", "/bin/sh", "-c", "true " + long_arg}, "", 60, columns_60);
    CHECK(out.err.find(long_arg) != std::string::npos);
}

TEST_CASE("the report on stdout (-o -): what the program printed there is said to be mixed with it", "[cli]") {
    // Not with -q: a pipe cannot tell whether the program wrote to it.
    auto out = run_max_rss({"-q", "-o", "-", "--", "/bin/sh", "-c", "echo hello"});
    CHECK(out.err.empty());
    out = run_max_rss({"-o", "-", "--", "/bin/sh", "-c", "echo hello"});
    CHECK(out.err.find("max_rss: -o: the output goes to stdout, which COMMAND also writes to") != std::string::npos);
    // A file shows whether the program wrote: said even with -q, and only then.
    const std::string file = temp_path("mixed.out");
    const std::string run = std::string(max_rss_bin()) + " -q -o - -- /bin/sh -c ";
    out = run_program({"/bin/sh", "-c", run + "'echo hello' > " + file});
    CHECK(out.err == "max_rss: -o: COMMAND wrote 6 bytes to stdout, where the output goes too: they are mixed (write "
                     "the output to a file instead, or redirect COMMAND's stdout)\n");
    out = run_program({"/bin/sh", "-c", run + "'echo hello >&2' > " + file});
    CHECK(out.err == "hello\n");
    // Appended to (>>) a file that already holds a report: the count is what
    // COMMAND wrote, not the file's size before (it said 1688 for 4).
    out = run_program({"/bin/sh", "-c", run + "'echo hi2' >> " + file});
    CHECK(out.err == "max_rss: -o: COMMAND wrote 4 bytes to stdout, where the output goes too: they are mixed (write "
                     "the output to a file instead, or redirect COMMAND's stdout)\n");
    std::remove(file.c_str());
}

TEST_CASE("plot option writes an HTML page with the timeline", "[cli][concurrent]") {
    const std::string path = temp_path("plot.html");
    auto out = run_max_rss({"-q", "--interval", "5ms", "--plot", path, "--", fixture("touch"), "30", "200"});
    CHECK(out.exit_code == 0);
    const std::string html = read_text_file(path);
    std::remove(path.c_str());
    CHECK(html.find("<svg") != std::string::npos);
    CHECK(html.find("tree peak") != std::string::npos);
    CHECK(html.find("touch 30 200") != std::string::npos);
}

TEST_CASE("cgroup option reports the cgroup peak or says why not", "[cli][concurrent]") {
    auto out = run_max_rss({"-q", "-o", "-", "--cgroup", "--", fixture("touch"), "100"});
    CHECK(out.exit_code == 0);
    auto r = json::parse(out.out);
    if (r["peak"]["cgroup_bytes"].is_null()) {
        // No usable memory cgroup here: a warning must say why.
        REQUIRE(r["warnings"].size() >= 1);
        CHECK(r["warnings"][0].get<std::string>().rfind("--cgroup: ", 0) == 0);
    } else {
        const double cg = r["peak"]["cgroup_bytes"].get<double>() / MiB;
        CHECK(cg >= 99);
        CHECK(cg <= 120);
    }
}

TEST_CASE("interval option must be a duration", "[cli]") {
    auto out = run_max_rss({"--interval", "soon", "--", "/bin/true"});
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: --interval: 'soon' is not a duration (try 20ms, 0.1s, 500us; 0 = only at exits)\n");
}

TEST_CASE("with ptrace refused a 100 MiB program still gets a correct degraded peak", "[cli][degraded]") {
    // Under strace -f, max_rss's own PTRACE_SEIZE of its child fails with EPERM.
    REQUIRE(file_exists("/usr/bin/strace"));  // installed by scripts/setup.sh --test
    auto out = run_program({"/usr/bin/strace", "-f", "-o", "/dev/null", max_rss_bin(), "-q", "-o", "-", "--",
                            fixture("touch"), "100"});
    CHECK(out.exit_code == 0);
    // One clear line that says why, and nothing else of max_rss's with -q.
    CHECK(newline_count(out.err) == 1);
    CHECK(out.err.rfind("max_rss: warning: cannot trace (", 0) == 0);
    auto r = json::parse(out.out);
    CHECK(r["degraded"] == true);
    CHECK(r["degraded_reason"].get<std::string>().rfind("PTRACE_SEIZE: Operation not permitted", 0) == 0);
    CHECK(r["peak"]["method"] == "degraded-sampling");
    const double peak_mib = r["peak"]["tree_bytes"].get<double>() / MiB;
    CHECK(peak_mib >= 100);
    CHECK(peak_mib <= 102.5);
    CHECK(r["exit"]["code"] == 0);
}

TEST_CASE("with ptrace refused the program's exit status and a missing command are still right",
          "[cli][degraded]") {
    auto code = run_program({"/usr/bin/strace", "-f", "-o", "/dev/null", max_rss_bin(), "-q", "--",
                             fixture("exit_code"), "signal", "15"});
    CHECK(code.exit_code == 143);
    auto missing = run_program({"/usr/bin/strace", "-f", "-o", "/dev/null", max_rss_bin(), "-q", "--",
                                "max-rss-no-such-command-xyz"});
    CHECK(missing.exit_code == 127);
    CHECK(missing.err.find("max_rss: max-rss-no-such-command-xyz: command not found\n") != std::string::npos);
}

TEST_CASE("usage: sizes and durations need a unit; Kubernetes' Mi and Gi are sizes", "[cli][usage]") {
    const Output bare_size = run_max_rss({"--budget", "512", "--", "/bin/true"});
    CHECK(bare_size.exit_code == 2);
    CHECK(bare_size.err == "max_rss: --budget: '512' has no unit (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
    const Output bare_duration = run_max_rss({"--interval", "0.5", "--", "/bin/true"});
    CHECK(bare_duration.exit_code == 2);
    CHECK(bare_duration.err ==
          "max_rss: --interval: '0.5' has no unit (try 20ms, 0.1s, 500us; 0 = only at exits)\n");
    // 0 needs none: it is 0 in every unit (snapshots only at exits).
    CHECK(run_max_rss({"-q", "--interval", "0", "--", "/bin/true"}).exit_code == 0);
    const Output kubernetes = run_max_rss({"-q", "--budget", "1Gi", "--", fixture("touch"), "20"});
    CHECK(kubernetes.exit_code == 0);
    CHECK(kubernetes.err.empty());
    const Output bench_bare = run_max_rss({"bench", "--budget", "5", "/bin/true"});
    CHECK(bench_bare.exit_code == 2);
    CHECK(bench_bare.err == "max_rss: bench: --budget: '5' has no unit (try 512MiB, 1.5GiB, 300MB, 512Mi)\n");
}

TEST_CASE("usage: --interval below 1ms is refused before anything runs", "[cli][usage]") {
    const Output out = run_max_rss({"--interval", "1ns", "--", "/bin/true"});
    CHECK(out.exit_code == 2);
    CHECK(out.err == "max_rss: --interval: '1ns' is below the minimum (try 1 ms or more, or 0 = only at exits)\n");
    CHECK(run_max_rss({"-q", "--interval", "1ms", "--", "/bin/true"}).exit_code == 0);
}

TEST_CASE("usage: a mistyped subcommand is not run as a program", "[cli][usage]") {
    const Output out = run_max_rss({"bnech", "true"});
    CHECK(out.exit_code == 2);
    CHECK(out.err ==
          "max_rss: 'bnech' is neither a program in PATH nor a subcommand: did you mean 'max_rss bench'? (try "
          "'max_rss -- ./bnech' for a program of that name)\n");
    const Output compare = run_max_rss({"comapre", "a.json", "b.json"});
    CHECK(compare.exit_code == 2);
    CHECK(compare.err.find("did you mean 'max_rss compare'?") != std::string::npos);
    // A program that exists is run, whatever its name looks like.
    CHECK(run_max_rss({"-q", "true"}).exit_code == 0);
}

TEST_CASE("usage: errors point at the help of their own subcommand", "[cli][usage]") {
    CHECK(run_max_rss({"--frob", "--", "true"}).err == "max_rss: unknown option '--frob' (see 'max_rss --help')\n");
    CHECK(run_max_rss({"bench", "--frob", "true"}).err ==
          "max_rss: bench: unknown option '--frob' (see 'max_rss bench --help')\n");
    CHECK(run_max_rss({"compare", "--frob", "a", "b"}).err ==
          "max_rss: compare: unknown option '--frob' (see 'max_rss compare --help')\n");
    CHECK(run_max_rss({"compare", "a"}).err ==
          "max_rss: compare: needs two reports, BASE and NEW (see 'max_rss compare --help')\n");
    CHECK(run_max_rss({"bench", "--runs", "0", "true"}).err ==
          "max_rss: bench: --runs: '0' is not a whole number from 1 to 1000000\n");
}

TEST_CASE("usage: an option given twice or without its value is said in plain words", "[cli][usage]") {
    // CLI11's own words were "At Most 1 required but received 2" and "1
    // required TEXT:DURATION missing".
    const Output twice = run_max_rss({"-o", "a.json", "-o", "b.json", "--", "true"});
    CHECK(twice.exit_code == 2);
    CHECK(twice.err == "max_rss: --output: given 2 times (give it once) (see 'max_rss --help')\n");
    const Output no_value = run_max_rss({"--interval"});
    CHECK(no_value.exit_code == 2);
    CHECK(no_value.err == "max_rss: --interval: its DURATION is missing (see 'max_rss --help')\n");
    CHECK(run_max_rss({"-o"}).err == "max_rss: --output: a value is missing (see 'max_rss --help')\n");
    CHECK(run_max_rss({"bench", "-r", "1", "-r", "2", "true"}).err ==
          "max_rss: bench: --runs: given 2 times (give it once) (see 'max_rss bench --help')\n");
    CHECK(run_max_rss({"compare", "--threshold"}).err ==
          "max_rss: compare: --threshold: its PCT is missing (see 'max_rss compare --help')\n");
}

TEST_CASE("backend option: sample measures without ptrace, says so, and is not degraded", "[cli][backend]") {
    const Output out = run_max_rss({"-q", "--backend", "sample", "-o", "-", "--", fixture("touch"), "100", "200"});
    CHECK(out.exit_code == 0);
    CHECK(out.err.empty());
    const json r = json::parse(out.out);
    CHECK(r["backend"] == "sample");
    CHECK(r["degraded"] == false);
    const double peak_mib = r["peak"]["tree_bytes"].get<double>() / MiB;
    CHECK(peak_mib >= 100);
    CHECK(peak_mib <= 102.5);
    const Output bad = run_max_rss({"--backend", "gdb", "--", "true"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err == "max_rss: --backend: 'gdb' is not a backend (try ptrace, sample, ebpf)\n");
}

TEST_CASE("backend option: sample does not count the copy of max_rss the program was before its exec",
          "[cli][backend][degraded]") {
    // Until its exec the program is a fork of max_rss, and wait4's ru_maxrss
    // keeps that copy's high-water mark. Twelve 120 KB arguments, held by
    // max_rss in several copies, make the copy ~12 MiB; the program itself
    // (sh exec'ing touch 1) never holds more than ~3 MiB.
    std::vector<std::string> args{"-q", "-o", "-", "--backend", "ptrace", "--",
                                  "sh", "-c", "exec \"$0\" 1 300", fixture("touch")};
    args.insert(args.end(), 12, std::string(120'000, 'x'));
    const Output traced = run_max_rss(args);
    REQUIRE(traced.exit_code == 0);
    const json exact = json::parse(traced.out);
    const double true_mib = exact["peak"]["tree_bytes"].get<double>() / MiB;
    // What makes this test mean something: the copy is well above the program.
    REQUIRE(exact["ru_maxrss_bytes"].get<double>() / MiB > true_mib + 4);
    args[4] = "sample";
    const Output sampled = run_max_rss(args);
    REQUIRE(sampled.exit_code == 0);
    const json lower = json::parse(sampled.out);
    CHECK(lower["peak"]["method"] == "lower-bound");
    // A lower bound: not above the exact figure, give or take two runs'
    // readings of the kernel's approximate counters (1 MiB), far below the copy.
    CHECK(lower["peak"]["tree_bytes"].get<double>() / MiB <= true_mib + 1);
    // The same when sampling is the fallback of a refused ptrace (under strace).
    REQUIRE(file_exists("/usr/bin/strace"));
    std::vector<std::string> strace_args{"/usr/bin/strace", "-f", "-o", "/dev/null", max_rss_bin()};
    strace_args.insert(strace_args.end(), args.begin(), args.end());
    strace_args.erase(strace_args.begin() + 8, strace_args.begin() + 10);  // --backend sample
    const Output degraded = run_program(strace_args);
    REQUIRE(degraded.exit_code == 0);
    const json fallback = json::parse(degraded.out);
    CHECK(fallback["peak"]["method"] == "degraded-sampling");
    CHECK(fallback["peak"]["tree_bytes"].get<double>() / MiB <= true_mib + 1);
}

TEST_CASE("backend option: sample sees a process exec and measures the new image as its own", "[cli][backend]") {
    // The shell execs touch after 0.3 s; touch holds 40 MiB for 2 s, many
    // samples. The exec was never seen: touch's 40 MiB went to the shell's
    // image, and the report named sh as what the process ran.
    const Output sampled = run_max_rss({"-q", "-o", "-", "--backend", "sample", "--interval", "20ms", "--", "sh", "-c",
                                        "sleep 0.3; exec \"$0\" 40 2000", fixture("touch")});
    REQUIRE(sampled.exit_code == 0);
    const json report = json::parse(sampled.out);
    REQUIRE(report["processes"].size() >= 1);
    const json& root = report["processes"][0];
    REQUIRE(root["images"].size() == 2);
    const json& shell = root["images"][0];
    const json& touch = root["images"][1];
    CHECK(shell["argv"][0] == "sh");
    CHECK(touch["argv"][0] == fixture("touch"));
    CHECK(touch["argv"][1] == "40");
    // touch's own figure: 40 MiB and its baseline; the shell's, a few MiB.
    CHECK(touch["peak_rss_bytes"].get<double>() / MiB >= 40);
    CHECK(touch["peak_rss_bytes"].get<double>() / MiB <= 40 + 8);
    CHECK(shell["peak_rss_bytes"].get<double>() / MiB < 8);
    CHECK(shell["end_seconds"].get<double>() == touch["start_seconds"].get<double>());
}

TEST_CASE("backend option: sample gives no upper bound it cannot know and counts what wait4 saw of a missed child",
          "[cli][backend]") {
    // Samples a second apart: the first child (touch 1, held 1.5 s) is seen,
    // so the shell is known to wait for children; touch 100 then runs and
    // ends between two samples, never seen. The high-water marks of what was
    // seen were given as "at most" ~3 MiB for a tree that held 100 MiB, and as
    // the peak; the shell's ru_maxrss, which covers the children it waited
    // for, says 100.
    const Output sampled = run_max_rss({"-q", "-o", "-", "--backend", "sample", "--interval", "1s", "--", "sh", "-c",
                                        "\"$0\" 1 1500; \"$0\" 100; true", fixture("touch")});
    REQUIRE(sampled.exit_code == 0);
    const json report = json::parse(sampled.out);
    CHECK(report["peak"]["method"] == "lower-bound");
    CHECK(report["peak"]["upper_bound_bytes"].is_null());
    // The child's own mark: 100 MiB touched plus its baseline (~1-2 MiB).
    const double tree_mib = report["peak"]["tree_bytes"].get<double>() / MiB;
    CHECK(tree_mib >= 100);
    CHECK(tree_mib <= 100 + 8);
    CHECK(sampled.err.find("at most") == std::string::npos);
    // What makes the first check mean something: no sample read touch 100
    // whole, so only wait4's figure can give the 100 MiB. (A slow machine can
    // have a sample land on it; then this run shows nothing about the floor.)
    if (report["peak"]["largest_process_bytes"].get<double>() / MiB >= 100)
        WARN("a sample read touch 100 whole: the ru_maxrss floor was not needed in this run");
}
