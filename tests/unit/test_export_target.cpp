// ExportTarget's rules for what is not a plain regular file, its checks that
// create nothing, and which targets count as the same destination.
#include <max_rss/os/export_target.hpp>
#include <max_rss/report/export.hpp>

#include "../e2e/helpers.hpp"
#include "../e2e/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using max_rss::ExportTarget;
using max_rss::NamedExportTarget;
using max_rss::test::read_text_file;
using max_rss::test::TempDir;

namespace {

// The message check_distinct_destinations() throws for targets, or "".
std::string clash(const std::vector<NamedExportTarget>& targets) {
    try {
        max_rss::check_distinct_destinations(targets);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("ExportTarget: a new file gets mode 0666 minus the umask", "[export]") {
    TempDir dir;
    const mode_t saved = ::umask(027);
    ExportTarget target(dir / "out.json");
    target.write("{}\n");
    ::umask(saved);
    struct stat st {};
    REQUIRE(::stat((dir / "out.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(dir.entries() == std::vector<std::string>{"out.json"});
}

TEST_CASE("ExportTarget: a replaced file keeps its mode, and its owner where max_rss may keep it", "[export]") {
    TempDir dir;
    const std::string path = dir / "private.json";
    { std::ofstream(path) << "old\n"; }
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    const bool root = ::geteuid() == 0;
    if (root) REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    ExportTarget target(path);
    target.write("{}\n");
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_uid == (root ? 65534u : ::geteuid()));
    CHECK(read_text_file(path) == "{}\n");
    CHECK(dir.entries() == std::vector<std::string>{"private.json"});
}

TEST_CASE("ExportTarget: a file it may not write is refused, though its directory would let a rename replace it",
          "[export]") {
    // As a user who owns the directory and a read-only file in it (root may
    // write any file: the check is made as nobody, in a child).
    TempDir dir;
    const std::string path = dir / "ro.json";
    { std::ofstream(path) << "keep\n"; }
    REQUIRE(::chmod(path.c_str(), 0444) == 0);
    const bool root = ::geteuid() == 0;
    if (root) {
        REQUIRE(::chown(dir.path.c_str(), 65534, 65534) == 0);
        REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    }
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (root && (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)) ::_exit(3);
        try {
            ExportTarget target(path);
            ::_exit(1);  // accepted: it would have replaced the file
        } catch (const std::runtime_error& e) {
            ::_exit(std::string(e.what()) == "cannot create export file '" + path + "': Permission denied" ? 0 : 2);
        }
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(read_text_file(path) == "keep\n");
}

TEST_CASE("ExportTarget: a symlink is written through and rewritten by write_intermediate", "[export]") {
    TempDir dir;
    std::ofstream(dir / "real.csv") << "an old and longer content\n";
    fs::create_symlink("real.csv", dir.path / "link.csv");
    ExportTarget target(dir / "link.csv");
    target.write_intermediate("partial\n");
    CHECK(read_text_file(dir / "real.csv") == "partial\n");
    target.write("final\n");
    CHECK(read_text_file(dir / "real.csv") == "final\n");
    CHECK(fs::is_symlink(dir.path / "link.csv"));
}

TEST_CASE("ExportTarget: a FIFO gets only the final write", "[export]") {
    TempDir dir;
    const std::string fifo = dir / "fifo";
    const int reader = dir.make_fifo_with_reader("fifo");
    ExportTarget target(fifo);
    target.write_intermediate("partial\n");  // no open, no wait for a reader
    target.write("final\n");
    char buffer[64] = {};
    CHECK(::read(reader, buffer, sizeof buffer) == 6);
    CHECK(std::string(buffer) == "final\n");
    ::close(reader);
    CHECK(fs::is_fifo(fifo));
}

TEST_CASE("ExportTarget: a full device fails the write with ENOSPC and stays a device", "[export]") {
    TempDir dir;
    const std::string full = dir / "full";
    if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
        WARN("skipped: cannot make a device node here (" << std::strerror(errno) << ")");
        return;
    }
    ExportTarget target(full);
    target.write_intermediate("not written: a device holds no whole file\n");
    CHECK_THROWS_WITH(target.write("x\n"), "cannot write export file '" + full + "': No space left on device");
    CHECK(fs::is_character_file(full));
}

TEST_CASE("ExportTarget: a file in a directory that is gone fails at the write", "[export]") {
    TempDir dir;
    fs::create_directory(dir.path / "build");
    const std::string path = dir / "build/out.json";
    ExportTarget target(path);
    fs::remove_all(dir.path / "build");
    CHECK_THROWS_WITH(target.write("{}\n"), "cannot write export file '" + path + "': No such file or directory");
}

TEST_CASE("ExportTarget: the same destination, however it is spelled", "[export]") {
    TempDir dir;
    fs::create_directory(dir.path / "sub");
    std::ofstream(dir / "existing") << "x";
    fs::create_symlink("existing", dir.path / "link");
    const ExportTarget a(dir / "a"), a_again(dir / "sub/../a"), b(dir / "b");
    const ExportTarget existing(dir / "existing"), link(dir / "link");
    const ExportTarget null_1("/dev/null"), null_2("/dev/null");
    const ExportTarget out("-");

    CHECK(a.same_destination(a_again));
    CHECK_FALSE(a.same_destination(b));
    CHECK(existing.same_destination(link));
    CHECK_FALSE(existing.same_destination(a));
    CHECK_FALSE(null_1.same_destination(null_2));  // the null device keeps nothing to clobber
    CHECK(out.is_stdout());

    CHECK(clash({{"-o", &a}, {"--plot", &b}}).empty());
    CHECK(clash({{"-o", &a}, {"--plot", &a_again}}) == "-o and --plot write to the same file '" + (dir / "sub/../a") + "'");
    CHECK(clash({{"--export-json", &b}, {"--export-csv", &existing}, {"--export-markdown", &link}}) ==
          "--export-csv and --export-markdown write to the same file '" + (dir / "link") + "'");
    CHECK(clash({{"-o", &out}, {"--plot", &out}}) == "-o and --plot both write to stdout");
    CHECK(clash({{"-o", &null_1}, {"--plot", &null_2}}).empty());
    CHECK(dir.entries() == std::vector<std::string>{"existing", "link", "sub"});  // nothing created
}
