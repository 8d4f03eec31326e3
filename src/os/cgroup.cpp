#include <max_rss/os/cgroup.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace max_rss {
namespace {

bool write_file(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    int saved = errno;
    ::close(fd);
    errno = saved;
    return ok;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::string unique_name() { return "max_rss-" + std::to_string(::getpid()) + "-" + std::to_string(::gettid()); }

}  // namespace

std::optional<MemoryCgroup> MemoryCgroup::create(std::string& why_not) {
    // cgroup v2: a pure v2 mount, or the unified half of a hybrid one, with
    // the memory controller available.
    for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
        auto controllers = procfs::read_file((std::string(root) + "/cgroup.controllers").c_str());
        if (!controllers || controllers->find("memory") == std::string::npos) continue;
        std::string path = std::string(root) + "/" + unique_name();
        if (::mkdir(path.c_str(), 0755) != 0) {
            why_not = "cannot create a cgroup in " + std::string(root) + ": " + std::strerror(errno);
            continue;
        }
        if (!exists(path + "/memory.peak")) {
            ::rmdir(path.c_str());
            why_not = "this kernel's cgroup v2 has no memory.peak (needs Linux 5.19)";
            continue;
        }
        return MemoryCgroup(path, 2);
    }
    // cgroup v1 memory hierarchy.
    const std::string v1 = "/sys/fs/cgroup/memory";
    if (exists(v1 + "/memory.max_usage_in_bytes")) {
        std::string path = v1 + "/" + unique_name();
        if (::mkdir(path.c_str(), 0755) == 0) return MemoryCgroup(path, 1);
        why_not = "cannot create a cgroup in " + v1 + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (why_not.empty()) why_not = "no memory cgroup hierarchy is mounted";
    return std::nullopt;
}

MemoryCgroup::MemoryCgroup(MemoryCgroup&& other) noexcept
    : path_(std::move(other.path_)), version_(other.version_) {
    other.path_.clear();
}

MemoryCgroup::~MemoryCgroup() {
    if (!path_.empty()) ::rmdir(path_.c_str());
}

bool MemoryCgroup::add(pid_t pid, std::string& why_not) const {
    if (write_file(path_ + "/cgroup.procs", std::to_string(pid))) return true;
    why_not = "cannot move the program into " + path_ + ": " + std::strerror(errno);
    return false;
}

std::optional<uint64_t> MemoryCgroup::peak_bytes() const {
    auto text = procfs::read_file((path_ + (version_ == 2 ? "/memory.peak" : "/memory.max_usage_in_bytes")).c_str());
    if (!text) return std::nullopt;
    try {
        return std::stoull(*text);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace max_rss
