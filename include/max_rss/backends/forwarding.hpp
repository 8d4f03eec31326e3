// What every backend does with the termination signals max_rss receives.
#pragma once

#include <max_rss/engine/recorder.hpp>
#include <max_rss/os/signals.hpp>

#include <sys/types.h>

#include <vector>

namespace max_rss {

// Passes each signal sent to max_rss itself on to the program: to the root
// while it lives; once the root is gone, to every process of the tree still
// alive (daemons, orphans). Signals from the terminal (^C, ^\) already reached
// the program's whole foreground process group and are not sent again.
// Called only from the backend's loop, with signals blocked: the root cannot
// have been reaped (and its pid reused) behind the loop's back.
void forward_received(const std::vector<os::ReceivedSignal>& received, Recorder& recorder, pid_t root_pid);

}  // namespace max_rss
