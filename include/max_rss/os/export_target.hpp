// Where an output goes, and how it is written so that nothing is ever lost
// or replaced by what it was not.
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace max_rss {

// Where an output goes (a run's report or plot, a bench export): a file path,
// or "-" for stdout. Construct it at start-up, so that a bad path fails
// before any work; nothing is created or opened until the first write.
//
// How each destination is written, so that none is ever replaced by a file
// it was not:
//  - "-", or a path that is the same open file as max_rss's stdout or stderr
//    (/dev/stdout, /proc/self/fd/1, a link to either, the file stdout was
//    redirected to): written to that descriptor at its offset, after the
//    program's own output, as a shell's `>&1` would.
//  - a regular file, or a name that does not exist yet: replaced atomically
//    on every write, so a reader never sees half a file. The bytes go to an
//    anonymous file (O_TMPFILE) in the same directory, which gets a name
//    (.NAME.max_rss-PID-N.tmp) only for the moment between linkat(2) and
//    rename(2): the program never sees it, and a SIGKILL of max_rss leaves
//    nothing behind. Where the file system has no O_TMPFILE, that named file
//    exists for the whole write. A new file gets mode 0666 minus the umask; a
//    replaced one keeps its mode, and its owner and group where max_rss may
//    give them (root). A file max_rss may not write is refused up front,
//    though its directory would let the rename replace it.
//  - anything else is opened (following links) and written through: a
//    symbolic link (it stays a link; a regular file it points to is truncated
//    and rewritten in place, not atomically; a missing one is created), a
//    device (/dev/null, /dev/full, a terminal), a FIFO (the open waits for a
//    reader), a socket.
// A write to a pipe nobody reads fails with EPIPE only where SIGPIPE is
// caught or ignored (catch_sigpipe() in standard_fds.hpp); else it kills.
class ExportTarget {
public:
    // Checks, creating nothing that anyone could see, that the destination can
    // be written: a directory is refused, a new or regular file's directory is
    // probed with an O_TMPFILE open (access(2) where there is no O_TMPFILE),
    // anything else with access(W_OK). Throws std::runtime_error, one line:
    //   cannot create export file 'PATH': <strerror>
    //   cannot replace export file 'PATH': no file can be made in DIR: <strerror>
    //   cannot write export to stdout: Bad file descriptor   ("-" while stdout was closed)
    explicit ExportTarget(std::string path);

    [[nodiscard]] const std::string& path() const { return path_; }
    // The destination is max_rss's stdout ("-" or the same open file).
    [[nodiscard]] bool is_stdout() const { return kind_ == Kind::Descriptor && fd_ == 1; }

    // Both write to the same place, so one would clobber or interleave with
    // the other: the same standard descriptor, the same device and inode, or,
    // for files that do not exist yet, the same path once its directory is
    // resolved ("a" and "./a"). The null device never counts: it keeps nothing.
    [[nodiscard]] bool same_destination(const ExportTarget& other) const;

    // Replaces the whole file with bytes; writes them through or to the
    // descriptor otherwise. Throws std::runtime_error, one line:
    //   cannot write export file 'PATH': <strerror>
    //   cannot write export to stdout: <strerror>   (for "-")
    void write(std::string_view bytes);

    // Like write(), but produce writes the bytes to a stream that goes to the
    // file in pieces, so a large report is never whole in memory.
    void write_stream(const std::function<void(std::ostream&)>& produce);

    // The results so far, after each command: like write() where the
    // destination holds a whole file (a regular file, replaced or written
    // through); nothing for a descriptor, a device or a FIFO, which get only
    // the final write().
    void write_intermediate(std::string_view bytes);

private:
    enum class Kind {
        Descriptor,    // max_rss's stdout or stderr
        Replace,       // a regular file or a new name: atomic replacement
        WriteThrough,  // opened and written through
    };
    void write_replacing(const std::function<void(std::ostream&)>& produce);
    void write_through(const std::function<void(std::ostream&)>& produce);
    void write_descriptor(const std::function<void(std::ostream&)>& produce);
    [[noreturn]] void fail_write(int error) const;
    // A new temporary file beside path_ (O_EXCL, mode 0666 minus the umask),
    // its name in name_out; -1 with errno on failure.
    int open_named_temp(std::string& name_out);
    std::string next_temp_name();  // .NAME.max_rss-PID-SERIAL.tmp beside path_

    std::string path_;
    Kind kind_ = Kind::Replace;
    int fd_ = -1;               // Kind::Descriptor: 1 or 2
    bool whole_file_ = false;   // write_intermediate() rewrites it
    // Where the bytes land, for same_destination().
    bool exists_ = false;       // dev_ and ino_ are set
    bool null_device_ = false;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    std::string resolved_path_;  // when !exists_
    unsigned temp_serial_ = 0;
};

// An output and the option that named it ("-o", "--export-csv"), for messages.
struct NamedExportTarget {
    std::string_view option;
    const ExportTarget* target;
};

// Throws std::runtime_error with one line when two of targets write to the
// same place (ExportTarget::same_destination), naming the first such pair:
//   -o and --plot write to the same file 'PATH'    (PATH as the second gave it)
//   -o and --plot both write to stdout             (when one of them is "-")
void check_distinct_destinations(std::span<const NamedExportTarget> targets);

}  // namespace max_rss
