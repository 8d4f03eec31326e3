#include <max_rss/backends/backend.hpp>

namespace max_rss {

std::unique_ptr<Backend> make_ptrace_backend();
std::unique_ptr<Backend> make_sample_backend();
// backends/ebpf/, or a refusal when not built
std::unique_ptr<Backend> make_ebpf_backend(KeptBackends* keep);
void prepare_ebpf_backend(KeptBackends& keep);

OptionalBytes ru_maxrss_bytes(const std::optional<rusage>& usage) {
    if (!usage) return {};
    return static_cast<uint64_t>(usage->ru_maxrss) * 1024;
}

std::unique_ptr<Backend> make_backend(BackendKind kind, KeptBackends* keep) {
    switch (kind) {
        case BackendKind::Ptrace: return make_ptrace_backend();
        case BackendKind::Sample: return make_sample_backend();
        case BackendKind::Ebpf: return make_ebpf_backend(keep);
    }
    return make_ptrace_backend();
}

void prepare_backend(BackendKind kind, KeptBackends& keep) {
    if (kind == BackendKind::Ebpf) prepare_ebpf_backend(keep);
}

}  // namespace max_rss
