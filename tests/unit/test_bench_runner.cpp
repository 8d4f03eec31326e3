// The bench loop on a fake executor, and command splitting.
#include <max_rss/bench/runner.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <string>
#include <vector>
#include "units.hpp"
#include "../e2e/helpers.hpp"

using namespace max_rss;

using max_rss::test::exited;

namespace {

using Words = std::vector<std::string>;

// Records what ran; each measured run returns the next scripted exit.
class FakeExecutor : public BenchExecutor {
public:
    std::vector<std::string> log;         // "measure CMD" / "prepare CMD"
    std::vector<ExitStatus> exits;        // for measured runs, in order; then exit 0
    ExitStatus prepare_exit;              // for every prepare
    std::vector<std::string> warnings;    // returned with every run
    std::optional<int> interrupt_after;   // interruption() once this many runs happened
    size_t measured = 0;

    MeasuredRun measure(const std::vector<std::string>& argv) override {
        log.push_back("measure " + argv.back());
        MeasuredRun run;
        run.exit = measured < exits.size() ? exits[measured] : ExitStatus{0, {}, false};
        ++measured;
        run.run.peak_bytes = measured * MiB;
        run.run.exit_code = run.exit.shell_code();
        run.run.wall_seconds = 0.25;
        run.warnings = warnings;
        return run;
    }
    ExitStatus run_unmeasured(const std::vector<std::string>& argv) override {
        log.push_back("prepare " + argv.back());
        return prepare_exit;
    }
    [[nodiscard]] std::optional<int> interruption() const override {
        if (interrupt_after && measured >= static_cast<size_t>(*interrupt_after)) return SIGINT;
        return std::nullopt;
    }
};

BenchCommand command(std::string text, std::string prepare = {}) {
    BenchCommand c;
    c.command = text;
    c.argv = {"/bin/sh", "-c", text};
    if (!prepare.empty()) {
        c.prepare = prepare;
        c.prepare_argv = {"/bin/sh", "-c", prepare};
    }
    return c;
}

ExitStatus killed(int sig) {
    ExitStatus status;
    status.signal = sig;
    return status;
}

}  // namespace

TEST_CASE("bench loop: warmup runs, then measured runs, each after the prepare command", "[bench]") {
    FakeExecutor fake;
    BenchSettings settings;
    settings.warmup = 1;
    settings.runs = 2;
    std::vector<std::string> progress;
    const BenchOutcome outcome =
        run_benchmark(command("work", "reset"), settings, fake, [&progress](const BenchProgress& p) {
            progress.push_back(std::string(p.warmup ? "warmup " : "run ") + std::to_string(p.done) + "/" +
                               std::to_string(p.total) + " " + std::to_string(p.runs_finished) + "/" +
                               std::to_string(p.runs_planned));
        });
    CHECK(fake.log == Words{"prepare reset", "measure work", "prepare reset", "measure work", "prepare reset",
                        "measure work"});
    CHECK(progress == Words{"warmup 0/1 0/3", "run 0/2 1/3", "run 1/2 2/3", "run 2/2 3/3"});
    // The warmup run (1 MiB) is not recorded.
    REQUIRE(outcome.result.runs.size() == 2);
    CHECK(outcome.result.runs[0].peak_bytes == 2 * MiB);
    CHECK(outcome.result.runs[1].peak_bytes == 3 * MiB);
    CHECK(outcome.result.command == "work");
    CHECK(outcome.failed_runs == 0);
}

TEST_CASE("bench loop: a failing run stops it with the run's exit code", "[bench]") {
    FakeExecutor fake;
    fake.exits = {exited(0), exited(3)};
    BenchSettings settings;
    settings.runs = 5;
    try {
        run_benchmark(command("flaky"), settings, fake);
        FAIL("no BenchAborted");
    } catch (const BenchAborted& e) {
        CHECK(e.exit_code == 3);
        CHECK(std::string(e.what()) ==
              "'flaky' exited with code 3 (use -i/--ignore-failure to go on regardless, --show-output to see its "
              "output)");
    }
    CHECK(fake.measured == 2);
}

TEST_CASE("bench loop: a failing warmup run stops it too, a crash is named", "[bench]") {
    FakeExecutor fake;
    fake.exits = {killed(SIGSEGV)};
    BenchSettings settings;
    settings.warmup = 2;
    try {
        run_benchmark(command("crash"), settings, fake);
        FAIL("no BenchAborted");
    } catch (const BenchAborted& e) {
        CHECK(e.exit_code == 128 + SIGSEGV);
        CHECK(std::string(e.what()).starts_with("a warmup run of 'crash' was killed by SIGSEGV ("));
    }
}

TEST_CASE("bench loop: --ignore-failure keeps failed runs and counts them", "[bench]") {
    FakeExecutor fake;
    fake.exits = {exited(1), exited(0), killed(SIGKILL)};
    BenchSettings settings;
    settings.runs = 3;
    settings.ignore_failure = true;
    const BenchOutcome outcome = run_benchmark(command("x"), settings, fake);
    REQUIRE(outcome.result.runs.size() == 3);
    CHECK(outcome.result.runs[0].exit_code == 1);
    CHECK(outcome.result.runs[2].exit_code == 128 + SIGKILL);
    CHECK(outcome.failed_runs == 2);
}

TEST_CASE("bench loop: ^C stops it even with --ignore-failure", "[bench]") {
    BenchSettings settings;
    settings.runs = 5;
    settings.ignore_failure = true;
    SECTION("a program that killed itself with SIGINT or SIGTERM failed, nothing more: -i goes on") {
        FakeExecutor fake;
        fake.exits = {exited(0), killed(SIGINT), killed(SIGTERM)};
        const BenchOutcome outcome = run_benchmark(command("x"), settings, fake);
        CHECK(fake.measured == 5);
        CHECK(outcome.failed_runs == 2);
        REQUIRE(outcome.result.runs.size() == 5);
        CHECK(outcome.result.runs[2].exit_code == 128 + SIGTERM);
    }
    SECTION("without -i, it stops the benchmark as a failure, named as one") {
        FakeExecutor fake;
        fake.exits = {killed(SIGTERM)};
        settings.ignore_failure = false;
        try {
            run_benchmark(command("x"), settings, fake);
            FAIL("no BenchAborted");
        } catch (const BenchAborted& e) {
            CHECK(e.exit_code == 128 + SIGTERM);
            CHECK(std::string(e.what()).starts_with("'x' was killed by SIGTERM (use -i/--ignore-failure"));
        }
    }
    SECTION("max_rss itself was signalled") {
        FakeExecutor fake;
        fake.interrupt_after = 1;
        try {
            run_benchmark(command("x"), settings, fake);
            FAIL("no BenchAborted");
        } catch (const BenchAborted& e) {
            CHECK(e.exit_code == 130);
        }
        CHECK(fake.measured == 1);
    }
}

TEST_CASE("bench loop: a failing prepare command always stops it", "[bench]") {
    FakeExecutor fake;
    fake.prepare_exit = exited(2);
    BenchSettings settings;
    settings.ignore_failure = true;
    try {
        run_benchmark(command("x", "make clean"), settings, fake);
        FAIL("no BenchAborted");
    } catch (const BenchAborted& e) {
        CHECK(e.exit_code == 2);
        CHECK(std::string(e.what()) ==
              "the --prepare command 'make clean' exited with code 2 (a failing --prepare always stops the benchmark)");
    }
    CHECK(fake.log == Words{"prepare make clean"});
}

TEST_CASE("bench loop: the tracer's warnings are kept once each", "[bench]") {
    FakeExecutor fake;
    fake.warnings = {"degraded", "pid 7: no stop could be measured"};
    BenchSettings settings;
    settings.runs = 3;
    const BenchOutcome outcome = run_benchmark(command("x"), settings, fake);
    CHECK(outcome.result.warnings == fake.warnings);
}

TEST_CASE("split mode (-N) splits a command like a shell, without expansions", "[bench]") {
    CHECK(split_command_words("ls -l  /tmp") == Words{"ls", "-l", "/tmp"});
    CHECK(split_command_words("  \tpadded\n ") == Words{"padded"});
    CHECK(split_command_words("") == Words{});
    CHECK(split_command_words("python3 -c 'print(\"a b\")'") == Words{"python3", "-c", "print(\"a b\")"});
    CHECK(split_command_words("echo \"a 'b' \\\"c\\\" \\$HOME \\x\"") == Words{"echo", "a 'b' \"c\" $HOME \\x"});
    CHECK(split_command_words("a\\ b c\\'d") == Words{"a b", "c'd"});
    CHECK(split_command_words("x '' \"\"") == Words{"x", "", ""});
    CHECK(split_command_words("pre'quoted'post\"x\"") == Words{"prequotedpostx"});
    CHECK(split_command_words("one\\\ntwo") == Words{"onetwo"});
    // Shell syntax is just text.
    CHECK(split_command_words("a|b > c $HOME *") == Words{"a|b", ">", "c", "$HOME", "*"});
    CHECK_THROWS_MATCHES(split_command_words("echo 'open"), std::invalid_argument,
                         Catch::Matchers::Message("unterminated single quote"));
    CHECK_THROWS_MATCHES(split_command_words("echo \"open"), std::invalid_argument,
                         Catch::Matchers::Message("unterminated double quote"));
    CHECK_THROWS_MATCHES(split_command_words("echo \\"), std::invalid_argument,
                         Catch::Matchers::Message("nothing after the final backslash"));
}

TEST_CASE("command_argv: SHELL -c COMMAND, or the split words", "[bench]") {
    CHECK(command_argv("sleep 1 && true", std::string("/bin/sh")) == Words{"/bin/sh", "-c", "sleep 1 && true"});
    CHECK(command_argv("-x", std::string("sh")) == Words{"sh", "-c", "--", "-x"});
    CHECK(command_argv("sleep 1", std::nullopt) == Words{"sleep", "1"});
}


TEST_CASE("bench loop: --setup once before everything, --cleanup once after", "[bench]") {
    FakeExecutor fake;
    BenchSettings settings;
    settings.warmup = 1;
    settings.runs = 2;
    BenchCommand work = command("work", "reset");
    work.setup = {"compile", {"/bin/sh", "-c", "compile"}};
    work.cleanup = {"rm", {"/bin/sh", "-c", "rm"}};
    work.parameters = {{"n", "1"}};
    work.budget_bytes = 5 * MiB;
    const BenchOutcome outcome = run_benchmark(work, settings, fake);
    CHECK(fake.log == Words{"prepare compile", "prepare reset", "measure work", "prepare reset", "measure work",
                        "prepare reset", "measure work", "prepare rm"});
    CHECK(outcome.result.parameters == work.parameters);
    CHECK(outcome.result.budget_bytes == 5 * MiB);

    FakeExecutor failing;
    failing.prepare_exit = exited(2);
    CHECK_THROWS_WITH(run_benchmark(work, settings, failing),
                      "the --setup command 'compile' exited with code 2 (a failing --setup always stops the "
                      "benchmark)");
    CHECK(failing.log == Words{"prepare compile"});
}

TEST_CASE("bench loop: without --runs, the first run's time sets the count", "[bench]") {
    FakeExecutor fake;  // every run takes 0.25 s: 12 fit in 3 s
    BenchSettings settings;
    settings.runs = 0;
    settings.min_runs = 2;
    settings.max_runs = 100;
    CHECK(run_benchmark(command("work"), settings, fake).result.runs.size() == 12);
    settings.max_runs = 4;
    CHECK(run_benchmark(command("work"), settings, fake).result.runs.size() == 4);
}
