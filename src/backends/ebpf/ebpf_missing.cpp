// Built instead of the eBPF backend when its build tools were missing
// (src/backends/ebpf/ebpf.cmake): --backend ebpf says so before anything runs.
#include <max_rss/backends/backend.hpp>
#include <max_rss/errors.hpp>
#include <max_rss/exit_codes.hpp>

namespace max_rss {

namespace {

[[noreturn]] void refuse() {
    throw LaunchError(std::string("--backend ebpf cannot run here: this max_rss was built without it (missing: ") +
                          MAX_RSS_EBPF_MISSING + "); scripts/setup.sh installs clang, libbpf-dev and bpftool, then "
                          "rebuild, or use --backend ptrace",
                      exit_code::internal_error);
}

}  // namespace

std::unique_ptr<Backend> make_ebpf_backend(KeptBackends*) { refuse(); }
void prepare_ebpf_backend(KeptBackends&) { refuse(); }

}  // namespace max_rss
