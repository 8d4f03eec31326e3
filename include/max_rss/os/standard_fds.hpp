// What max_rss does to its own standard streams at start-up, before it opens
// any file, so that nothing it writes lands where it should not, while the
// programs it runs still inherit descriptors and SIGPIPE exactly as given.
#pragma once

namespace max_rss {

// Opens /dev/null on each of fds 0, 1 and 2 that is closed. Otherwise the
// first file max_rss opens (a report) would get that number, and its log
// lines (stderr) or `-o -` (stdout) would be written into it. The /dev/null
// descriptors are close-on-exec: the programs max_rss runs see 0, 1 or 2
// closed just as max_rss got them, not /dev/null. Call first thing in main().
void guard_standard_fds();

// True when fd (0, 1 or 2) was closed when guard_standard_fds() ran: what is
// there now is a placeholder, and writing to it would only lose the bytes.
bool standard_fd_was_closed(int fd);

// Makes a write to a pipe nobody reads (`max_rss -o - ... | true`) fail with
// EPIPE, reported like any failed write, instead of killing max_rss with
// SIGPIPE and losing the program's exit status. A handler that does nothing,
// not SIG_IGN: execve resets a caught signal to its default, so the programs
// still start with SIGPIPE's default action; an ignored one would stay
// ignored in them. A SIGPIPE that max_rss got ignored stays ignored.
void catch_sigpipe();

}  // namespace max_rss
