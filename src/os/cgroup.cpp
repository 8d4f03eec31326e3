#include <max_rss/os/cgroup.hpp>
#include <max_rss/procfs/procfs.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sstream>

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

constexpr std::string_view kPrefix = "max_rss-";

std::string unique_name() {
    return std::string(kPrefix) + std::to_string(::getpid()) + "-" + std::to_string(::gettid());
}

// Removes what earlier runs of max_rss killed with SIGKILL left in parent:
// empty max_rss-PID-TID cgroups whose max_rss is gone.
void remove_stale(const std::string& parent) {
    DIR* dir = ::opendir(parent.c_str());
    if (!dir) return;
    while (dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name.substr(0, kPrefix.size()) != kPrefix) continue;
        const long pid = std::strtol(entry->d_name + kPrefix.size(), nullptr, 10);
        if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))
            ::rmdir((parent + "/" + entry->d_name).c_str());  // fails harmlessly when not empty
    }
    ::closedir(dir);
}

// The path (relative to its hierarchy's root) of the cgroup this process is
// in: the "0::PATH" line of /proc/self/cgroup for v2, the line whose
// controllers include "memory" for v1.
std::optional<std::string> own_cgroup_path(int version) {
    const auto text = procfs::read_file("/proc/self/cgroup");
    if (!text) return std::nullopt;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
        const size_t first = line.find(':');
        const size_t second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string id = line.substr(0, first);
        const std::string controllers = line.substr(first + 1, second - first - 1);
        if (version == 2 && id == "0" && controllers.empty()) return line.substr(second + 1);
        if (version == 1) {
            std::istringstream names(controllers);
            for (std::string name; std::getline(names, name, ',');)
                if (name == "memory") return line.substr(second + 1);
        }
    }
    return std::nullopt;
}

std::string joined(const std::string& root, const std::string& path) {
    return path == "/" || path.empty() ? root : root + path;
}

}  // namespace

std::optional<MemoryCgroup> MemoryCgroup::create(std::string& why_not) {
    // cgroup v2: a pure v2 mount, or the unified half of a hybrid one, with
    // the memory controller available.
    for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
        auto controllers = procfs::read_file((std::string(root) + "/cgroup.controllers").c_str());
        if (!controllers || controllers->find("memory") == std::string::npos) continue;
        const auto own = own_cgroup_path(2);
        if (!own) continue;
        // Under max_rss's own cgroup, so that its limits still hold.
        const std::string parent = joined(root, *own);
        const auto subtree = procfs::read_file((parent + "/cgroup.subtree_control").c_str());
        if (!subtree || subtree->find("memory") == std::string::npos) {
            if (!write_file(parent + "/cgroup.subtree_control", "+memory")) {
                why_not = "cgroup v2: " + parent + " does not give its children the memory controller (" +
                          std::strerror(errno) +
                          "); run max_rss in a cgroup that delegates it (systemd-run --user --scope -p "
                          "Delegate=yes max_rss ...)";
                continue;
            }
        }
        remove_stale(parent);
        std::string path = parent + "/" + unique_name();
        if (::mkdir(path.c_str(), 0755) != 0) {
            why_not = "cannot create a cgroup in " + parent + ": " + std::strerror(errno);
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
        const auto own = own_cgroup_path(1);
        const std::string parent = joined(v1, own.value_or("/"));
        remove_stale(parent);
        std::string path = parent + "/" + unique_name();
        if (::mkdir(path.c_str(), 0755) == 0) return MemoryCgroup(path, 1);
        why_not = "cannot create a cgroup in " + parent + ": " + std::strerror(errno);
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
