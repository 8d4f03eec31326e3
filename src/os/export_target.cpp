#include <max_rss/os/export_target.hpp>

#include <max_rss/os/standard_fds.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <utility>

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace max_rss {
namespace {

[[noreturn]] void fail(std::string_view action, const std::string& path, int error) {
    throw std::runtime_error(fmt::format("cannot {} export file '{}': {}", action, path, std::strerror(error)));
}

// A minimal output buffer over a file descriptor, so large exports are written
// in 16 KiB pieces instead of being built whole in memory first (a bigger
// buffer is only more of max_rss's own memory, on its stack).
class FdBuf : public std::streambuf {
public:
    explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
    int error() const { return error_; }

protected:
    int_type overflow(int_type ch) override {
        if (!flush_buffer()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return flush_buffer() ? 0 : -1; }

private:
    bool flush_buffer() {
        const char* p = pbase();
        while (p < pptr()) {
            const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
            if (n < 0) {
                if (errno == EINTR) continue;
                error_ = errno;
                return false;
            }
            p += n;
        }
        setp(buf_, buf_ + sizeof buf_);
        return true;
    }
    int fd_;
    int error_ = 0;
    char buf_[16384];
};

// Runs produce into fd; 0, or the errno of the first failed write.
int produce_into(int fd, const std::function<void(std::ostream&)>& produce) {
    FdBuf buf(fd);
    std::ostream out(&buf);
    produce(out);
    out.flush();
    return buf.error();
}

// The directory part of path, for open() and access(): "." for a bare name.
std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// open(O_TMPFILE) failed because the kernel or file system lacks it, not
// because the directory is unusable (old kernels say EISDIR).
bool no_tmpfile_support(int error) { return error == EOPNOTSUPP || error == EISDIR || error == EINVAL; }

// Where a symbolic link chain that ends in nothing points: the final name.
// Where the symbolic link path points (relative targets made whole); none
// if path is not a link.
std::optional<std::string> link_target(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return std::nullopt;
    std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096), '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n <= 0) return std::nullopt;
    target.resize(static_cast<size_t>(n));
    return target.front() == '/' ? target : directory_of(path) + "/" + target;
}

std::string follow_links(std::string path) {
    for (int hops = 0; hops < 40; ++hops) {
        auto next = link_target(path);
        if (!next) break;
        path = std::move(*next);
    }
    return path;
}

// path with its directory made canonical: how two spellings of a file that
// does not exist yet ("a", "./a", "sub/../a") are told to be the same.
std::string resolve_new_file(const std::string& path) {
    const std::string final_path = follow_links(path);
    char* directory = ::realpath(directory_of(final_path).c_str(), nullptr);
    if (directory == nullptr) return final_path;
    std::string resolved = directory;
    std::free(directory);
    return (resolved == "/" ? "" : resolved) + "/" + base_name_of(final_path);
}

bool is_null_device(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3); }

[[noreturn]] void fail_stdout(int error, int fd = STDOUT_FILENO) {
    throw std::runtime_error(fmt::format("cannot write export to {}: {}", fd == STDERR_FILENO ? "stderr" : "stdout",
                                         std::strerror(error)));
}

// The standard descriptor (1 or 2) that path names through /dev/stdout,
// /dev/fd/N or /proc/self/fd/N, at any hop of its links; -1 if none. Such a
// descriptor closed when max_rss started holds /dev/null for max_rss's own
// sake: a report written there would be lost, where `-o -` is refused.
int standard_fd_named(std::string path) {
    const std::string own_fds = fmt::format("/proc/{}/fd/", ::getpid());
    for (int hops = 0; hops < 40; ++hops) {
        for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
            const std::string n = std::to_string(fd);
            if (path == "/dev/fd/" + n || path == "/proc/self/fd/" + n || path == "/proc/thread-self/fd/" + n ||
                path == own_fds + n)
                return fd;
        }
        auto next = link_target(path);
        if (!next) break;
        path = std::move(*next);
    }
    return -1;
}

// What max_rss printed through stdio on fd must come before what is written
// to fd directly.
void flush_stdio(int fd) { std::fflush(fd == STDOUT_FILENO ? stdout : stderr); }

}  // namespace

ExportTarget::ExportTarget(std::string path) : path_(std::move(path)) {
    struct stat target {};
    if (path_ == "-") {
        if (standard_fd_was_closed(STDOUT_FILENO) || ::fstat(STDOUT_FILENO, &target) != 0) fail_stdout(EBADF);
        kind_ = Kind::Descriptor;
        fd_ = STDOUT_FILENO;
    } else {
        if (path_.empty()) fail("create", path_, ENOENT);
        if (const int fd = standard_fd_named(path_); fd >= 0 && standard_fd_was_closed(fd)) fail_stdout(EBADF, fd);
        exists_ = ::stat(path_.c_str(), &target) == 0;
        if (!exists_ && errno != ENOENT) fail("create", path_, errno);  // ENOTDIR, EACCES, ELOOP...
        if (exists_ && S_ISDIR(target.st_mode)) fail("create", path_, EISDIR);
        // The same open file as our stdout or stderr: write to that descriptor,
        // whatever the path's spelling.
        for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
            struct stat standard {};
            if (exists_ && !standard_fd_was_closed(fd) && ::fstat(fd, &standard) == 0 &&
                standard.st_dev == target.st_dev && standard.st_ino == target.st_ino) {
                kind_ = Kind::Descriptor;
                fd_ = fd;
                break;
            }
        }
        struct stat link {};
        const bool is_link = ::lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
        if (kind_ == Kind::Descriptor) {
            // Nothing to check: the descriptor is open for writing, or the
            // write will say why not.
        } else if (!is_link && (!exists_ || S_ISREG(target.st_mode))) {
            kind_ = Kind::Replace;
            // The rename would replace a file we may not write (the
            // directory's permission is enough for it): refused, as a
            // shell's `>` would be.
            if (exists_ && ::access(path_.c_str(), W_OK) != 0) fail("create", path_, errno);
            // Can a file be created beside it? An anonymous one says so
            // without leaving a name anyone could see.
            const std::string directory = directory_of(path_);
            int probe = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
            if (probe < 0 && no_tmpfile_support(errno)) {
                // No anonymous files here (/proc, some FUSE and network file
                // systems): the write will name one, so the check does too.
                // (access() said yes to root where nothing can be created.)
                std::string name;
                probe = open_named_temp(name);
                if (probe >= 0) ::unlink(name.c_str());
            }
            if (probe < 0 && exists_) {
                // The file is there: what fails is the new one beside it.
                throw std::runtime_error(fmt::format("cannot replace export file '{}': no file can be made in {}: {}",
                                                     path_, directory, std::strerror(errno)));
            }
            if (probe < 0) fail("create", path_, errno);
            ::close(probe);
        } else {
            kind_ = Kind::WriteThrough;
            const std::string checked = exists_ ? path_ : directory_of(follow_links(path_));
            if (::access(checked.c_str(), exists_ ? W_OK : W_OK | X_OK) != 0) fail("create", path_, errno);
        }
        whole_file_ = kind_ != Kind::Descriptor && (!exists_ || S_ISREG(target.st_mode));
    }
    if (exists_ || kind_ == Kind::Descriptor) {
        exists_ = true;
        dev_ = target.st_dev;
        ino_ = target.st_ino;
        null_device_ = is_null_device(target);
    } else {
        resolved_path_ = resolve_new_file(path_);
    }
}

bool ExportTarget::same_destination(const ExportTarget& other) const {
    if (null_device_ || other.null_device_) return false;
    if (kind_ == Kind::Descriptor && other.kind_ == Kind::Descriptor && fd_ == other.fd_) return true;
    if (exists_ != other.exists_) return false;
    return exists_ ? dev_ == other.dev_ && ino_ == other.ino_ : resolved_path_ == other.resolved_path_;
}

void check_distinct_destinations(std::span<const NamedExportTarget> targets) {
    for (size_t second = 1; second < targets.size(); ++second) {
        for (size_t first = 0; first < second; ++first) {
            const ExportTarget& a = *targets[first].target;
            const ExportTarget& b = *targets[second].target;
            if (!a.same_destination(b)) continue;
            const auto options = fmt::format("{} and {}", targets[first].option, targets[second].option);
            if (a.path() == "-" || b.path() == "-") throw std::runtime_error(options + " both write to stdout");
            throw std::runtime_error(fmt::format("{} write to the same file '{}'", options, b.path()));
        }
    }
}

void ExportTarget::fail_write(int error) const {
    if (path_ == "-") fail_stdout(error);
    fail("write", path_, error);
}

void ExportTarget::write(std::string_view bytes) {
    write_stream([bytes](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

void ExportTarget::write_stream(const std::function<void(std::ostream&)>& produce) {
    switch (kind_) {
        case Kind::Descriptor: return write_descriptor(produce);
        case Kind::Replace: return write_replacing(produce);
        case Kind::WriteThrough: return write_through(produce);
    }
}

void ExportTarget::write_intermediate(std::string_view bytes) {
    if (whole_file_) write(bytes);
}

void ExportTarget::write_descriptor(const std::function<void(std::ostream&)>& produce) {
    flush_stdio(fd_);
    if (const int error = produce_into(fd_, produce); error != 0) fail_write(error);
}

void ExportTarget::write_through(const std::function<void(std::ostream&)>& produce) {
    // O_TRUNC empties a regular file (a link's target) and means nothing to a
    // device or FIFO; O_CREAT creates what a dangling link points to.
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) fail_write(errno);
    int error = produce_into(fd, produce);
    // close() reports delayed write errors (NFS, quotas).
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error != 0) fail_write(error);
}

std::string ExportTarget::next_temp_name() {
    return fmt::format("{}/.{}.max_rss-{}-{}.tmp", directory_of(path_), base_name_of(path_), ::getpid(),
                       temp_serial_++);
}

int ExportTarget::open_named_temp(std::string& name_out) {
    // O_EXCL with a pid and serial instead of mkstemp, so the mode is 0666
    // minus the umask.
    for (;;) {
        std::string candidate = next_temp_name();
        const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) name_out = std::move(candidate);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
}

void ExportTarget::write_replacing(const std::function<void(std::ostream&)>& produce) {
    const std::string directory = directory_of(path_);
    std::string temp_path;  // the temporary file's name, once it has one
    int fd = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (!no_tmpfile_support(errno)) fail_write(errno);
        // No O_TMPFILE here: a named file from the start.
        fd = open_named_temp(temp_path);
        if (fd < 0) fail_write(errno);
    }
    const auto give_up = [&](int error) {
        ::close(fd);
        if (!temp_path.empty()) ::unlink(temp_path.c_str());
        fail_write(error);
    };
    // The file it replaces keeps its mode, owner and group: a 0600 report
    // stays private. (Only root may give it another owner; else it is the
    // writer's, as any rewrite by rename is.)
    if (struct stat old {}; ::stat(path_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
        if (::fchown(fd, old.st_uid, old.st_gid) != 0 && errno != EPERM) give_up(errno);
        if (::fchmod(fd, old.st_mode & 07777) != 0) give_up(errno);
    }
    if (const int error = produce_into(fd, produce); error != 0) give_up(error);
    // A name for the anonymous file, only for the rename: rename(2) replaces,
    // linkat(2) cannot.
    while (temp_path.empty()) {
        std::string candidate = next_temp_name();
        const std::string self = fmt::format("/proc/self/fd/{}", fd);
        if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, candidate.c_str(), AT_SYMLINK_FOLLOW) == 0) {
            temp_path = std::move(candidate);
        } else if (errno != EEXIST) {
            give_up(errno);
        }
    }
    // close() reports delayed write errors (NFS, quotas): check it before the rename.
    if (::close(fd) != 0 || ::rename(temp_path.c_str(), path_.c_str()) != 0) {
        const int error = errno;
        ::unlink(temp_path.c_str());
        fail_write(error);
    }
}

}  // namespace max_rss
