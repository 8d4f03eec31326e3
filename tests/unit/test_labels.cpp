// Labels that tell processes apart in little room (tree, summary, plot legend).
#include <max_rss/report/labels.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>
#include "../e2e/helpers.hpp"

using namespace max_rss;

using max_rss::test::program;

namespace {

std::shared_ptr<const Program> cc1(const std::string& file, const std::string& temp) {
    return program({"/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "-imultiarch", "x86_64-linux-gnu", file,
                    "-quiet", "-dumpbase", file, "-O2", "-o", temp});
}

}  // namespace

TEST_CASE("labels: what fits is the whole command, from the program's basename", "[labels]") {
    auto make = program({"/usr/bin/make", "-j2"});
    const ProgramLabels labels({make.get()});
    CHECK(labels.label(make.get(), 34) == "make -j2");
    CHECK(command_line(make.get()) == "make -j2");
    CHECK(program_name(make.get()) == "make");
    CHECK(command_line(nullptr) == "?");
}

TEST_CASE("labels: programs of one name keep the arguments that tell them apart", "[labels]") {
    auto a = cc1("alpha.c", "/tmp/ccA1.s");
    auto b = cc1("beta.c", "/tmp/ccB2.s");
    const ProgramLabels labels({a.get(), b.get()});
    // The common prefix would make both "cc1 -quiet -imultiarch x86_64-l…".
    CHECK(labels.label(a.get(), 34) == "cc1 … alpha.c …/ccA1.s");
    CHECK(labels.label(b.get(), 34) == "cc1 … beta.c …/ccB2.s");
    // Too narrow for "cc1 … alpha.c": the command, cut.
    CHECK(labels.label(a.get(), 12) == "cc1 -quiet…");
    // Room enough for the plain command up to the file name: that, cut.
    CHECK(labels.label(a.get(), 52) == "cc1 -quiet -imultiarch x86_64-linux-gnu alpha.c -qu…");
}

TEST_CASE("labels: a command stays on one line", "[labels]") {
    auto sh = program({"sh", "-c", "sleep 1 &\n\t  wait\r\x07"});
    CHECK(command_line(sh.get()) == "sh -c sleep 1 & wait ?");
    CHECK(ProgramLabels({sh.get()}).label(sh.get(), 16) == "sh -c sleep 1 &…");
}

TEST_CASE("labels: paths shrink to their last component before anything is cut", "[labels]") {
    auto which = program({"bash", "/root/.pyenv/libexec/pyenv-which", "python3"});
    auto hooks = program({"bash", "/root/.pyenv/libexec/pyenv-hooks", "which"});
    const ProgramLabels labels({which.get(), hooks.get()});
    CHECK(labels.label(which.get(), 30) == "bash …/pyenv-which python3");
    CHECK(labels.label(hooks.get(), 30) == "bash …/pyenv-hooks which");
    // Options that hold a path are left alone.
    auto ld = program({"ld", "-plugin-opt=/usr/lib/x/lto-wrapper", "/usr/lib/crt1.o"});
    CHECK(ProgramLabels({ld.get()}).label(ld.get(), 46) == "ld -plugin-opt=/usr/lib/x/lto-wrapper …/crt1.o");
}

TEST_CASE("labels: alike programs and a lone one are cut, never emptied", "[labels]") {
    auto worker = program({"python3", "pool.py", "--workers", "4", "--input", "data.csv"});
    const ProgramLabels labels({worker.get(), worker.get()});
    CHECK(labels.label(worker.get(), 20) == "python3 pool.py --w…");
    CHECK(labels.label(worker.get(), 1) == "…");
    Program empty;
    empty.exe = "/opt/tool";
    CHECK(labels.label(&empty, 20) == "/opt/tool");
}

TEST_CASE("labels: a process is named by its image with the largest peak", "[labels]") {
    Process p;
    Image fork_image, exec_image;
    fork_image.program = program({"sh", "-c", "x"});
    fork_image.peak_rss_bytes = 100;
    exec_image.program = program({"x"});
    exec_image.peak_rss_bytes = 100;  // a tie: the later image, what it became
    p.images = {fork_image, exec_image};
    CHECK(main_program(p) == exec_image.program.get());
    p.images[0].peak_rss_bytes = 200;
    CHECK(main_program(p) == fork_image.program.get());
    CHECK(main_program(Process{}) == nullptr);
}
