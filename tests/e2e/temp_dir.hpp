// A fresh empty directory for one test, removed with everything in it when
// the test ends, however it ends.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

namespace max_rss::test {

struct TempDir {
    std::filesystem::path path;

    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "max_rss_test_XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() {
        namespace fs = std::filesystem;
        std::error_code ignored;
        // A test may have taken away write permission to see a failure.
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ignored);
        fs::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    // The path of name inside the directory, as a string.
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }

    // Makes a FIFO called name in the directory and returns a reader's
    // descriptor on it, opened first (a non-blocking open for reading does
    // not wait for a writer), so that a writer's open does not block.
    [[nodiscard]] int make_fifo_with_reader(const std::string& name) const {
        const std::string fifo = (path / name).string();
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        REQUIRE(reader >= 0);
        return reader;
    }

    // The names in the directory, sorted.
    [[nodiscard]] std::vector<std::string> entries() const {
        std::vector<std::string> names;
        std::error_code ignored;
        for (const auto& entry : std::filesystem::directory_iterator(path, ignored))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

}  // namespace max_rss::test
