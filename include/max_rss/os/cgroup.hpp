// A memory cgroup of max_rss's own for the traced tree, as a cross-check: its
// peak counter (v2 memory.peak, v1 memory.max_usage_in_bytes) is the exact
// concurrent peak of the tree, but it also counts page cache, tmpfs/shmem and
// kernel memory charged to the tree, so it reads higher than resident memory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace max_rss {

class MemoryCgroup {
public:
    // Creates a fresh cgroup, max_rss-PID-TID, inside the one max_rss runs in
    // (so that its memory limits still hold for the program), in the first
    // memory hierarchy it may use (v2 with the memory controller, else v1).
    // Empty ones left by a max_rss that was SIGKILLed are removed first.
    // nullopt, with why_not set to one line, when there is none we may use
    // (no root, no delegation).
    static std::optional<MemoryCgroup> create(std::string& why_not);

    MemoryCgroup(MemoryCgroup&& other) noexcept;
    MemoryCgroup& operator=(MemoryCgroup&&) = delete;
    MemoryCgroup(const MemoryCgroup&) = delete;
    ~MemoryCgroup();  // removes the (by then empty) cgroup

    // Moves pid (and so every descendant it starts afterwards) into the cgroup.
    bool add(pid_t pid, std::string& why_not) const;
    // The cgroup's peak usage so far.
    [[nodiscard]] std::optional<uint64_t> peak_bytes() const;
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] int version() const { return version_; }

private:
    MemoryCgroup(std::string path, int version) : path_(std::move(path)), version_(version) {}
    std::string path_;
    int version_ = 0;
};

}  // namespace max_rss
