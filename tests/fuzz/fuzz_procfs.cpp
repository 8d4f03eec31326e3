// libFuzzer target for the /proc parsers (procfs.hpp). Built by
// tests/fuzz/CMakeLists.txt with clang's -fsanitize=fuzzer,address,undefined
// (option MAX_RSS_FUZZ). Besides "no crash, no UB", every input is checked
// against what the parsers promise, and a broken promise aborts:
//   - a figure that comes out was written in the text: some line with that
//     field's key holds its digits (kB figures: bytes / 1024; statm: bytes /
//     page size), so a parser never invents a number;
//   - kB figures are whole KiB; statm figures whole pages;
//   - a rollup only comes out of text with a "[rollup]" line;
//   - parse_cmdline's arguments joined with NULs give the text back, less one
//     final NUL;
//   - parse_stat_state's letter is the one between the spaces after the last ')'.
// Run: fuzz_procfs -max_total_time=60 NEW_INPUTS_DIR tests/data/proc   (seeds read recursively)
#include <max_rss/procfs/procfs.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

using namespace max_rss;

namespace {

constexpr uint64_t kPage = 4096;

[[noreturn]] void broken(const char* promise, std::string_view field) {
    std::fprintf(stderr, "fuzz_procfs: broken promise: %s (%.*s)\n", promise, static_cast<int>(field.size()),
                 field.data());
    std::abort();
}

// Does some "KEY:value" line of text have digits (the decimal of number) in its value?
bool written(std::string_view text, std::string_view key, uint64_t number) {
    const std::string digits = std::to_string(number);
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const size_t colon = line.find(':');
        if (colon == std::string_view::npos || line.substr(0, colon) != key) continue;
        if (line.substr(colon + 1).find(digits) != std::string_view::npos) return true;
    }
    return false;
}

void check_kb(std::string_view text, std::string_view key, const std::optional<uint64_t>& bytes) {
    if (!bytes) return;
    if (*bytes % 1024 != 0) broken("kB figure is not whole KiB", key);
    if (!written(text, key, *bytes / 1024)) broken("figure not written in the text", key);
}

template <typename T>
void check_plain(std::string_view text, std::string_view key, const std::optional<T>& value) {
    if (!value) return;
    if (*value < 0) broken("negative id or count", key);
    if (!written(text, key, static_cast<uint64_t>(*value))) broken("figure not written in the text", key);
}

void check_status(std::string_view text) {
    const procfs::Status s = procfs::parse_status(text);
    check_plain(text, "Tgid", s.tgid);
    check_plain(text, "PPid", s.ppid);
    check_plain(text, "Threads", s.threads);
    check_kb(text, "VmHWM", s.hwm_bytes);
    check_kb(text, "VmRSS", s.rss_bytes);
    check_kb(text, "RssAnon", s.rss_anon_bytes);
    check_kb(text, "RssFile", s.rss_file_bytes);
    check_kb(text, "RssShmem", s.rss_shmem_bytes);
    check_kb(text, "VmSwap", s.swap_bytes);
}

void check_smaps_rollup(std::string_view text) {
    const auto r = procfs::parse_smaps_rollup(text);
    if (!r) return;
    if (text.find("[rollup]") == std::string_view::npos) broken("rollup without a [rollup] line", "");
    check_kb(text, "Rss", r->rss_bytes);
    check_kb(text, "Pss", r->pss_bytes);
    check_kb(text, "Pss_Anon", r->pss_anon_bytes);
    check_kb(text, "Pss_File", r->pss_file_bytes);
    check_kb(text, "Pss_Shmem", r->pss_shmem_bytes);
    check_kb(text, "Shared_Clean", r->shared_clean_bytes);
    check_kb(text, "Shared_Dirty", r->shared_dirty_bytes);
    check_kb(text, "Private_Clean", r->private_clean_bytes);
    check_kb(text, "Private_Dirty", r->private_dirty_bytes);
    check_kb(text, "Anonymous", r->anonymous_bytes);
    check_kb(text, "Swap", r->swap_bytes);
    check_kb(text, "SwapPss", r->swap_pss_bytes);
}

void check_statm(std::string_view text) {
    const auto s = procfs::parse_statm(text, kPage);
    if (!s) return;
    if (s->resident_bytes % kPage != 0 || s->shared_bytes % kPage != 0) broken("statm figure is not whole pages", "");
    if (text.find(std::to_string(s->resident_bytes / kPage)) == std::string_view::npos ||
        text.find(std::to_string(s->shared_bytes / kPage)) == std::string_view::npos)
        broken("figure not written in the text", "statm");
}

void check_cmdline(std::string_view text) {
    const auto args = procfs::parse_cmdline(text);
    std::string joined;
    for (size_t i = 0; i < args.size(); ++i) {
        if (i) joined += '\0';
        joined += args[i];
    }
    std::string_view expected = text;
    if (!expected.empty() && expected.back() == '\0') expected.remove_suffix(1);
    if (joined != expected) broken("cmdline does not round-trip", "");
}

void check_kb_value(std::string_view text) {
    const auto bytes = procfs::parse_kb_value(text);
    if (!bytes) return;
    if (*bytes % 1024 != 0) broken("kB figure is not whole KiB", "parse_kb_value");
    if (text.find(std::to_string(*bytes / 1024)) == std::string_view::npos)
        broken("figure not written in the text", "parse_kb_value");
}

}  // namespace

// A state comes out only as the letter between the spaces after the last ')'.
void check_stat_state(std::string_view text) {
    const std::optional<char> state = procfs::parse_stat_state(text);
    if (!state) return;
    const size_t close = text.rfind(')');
    if (close == std::string_view::npos || text.substr(close, 4) != std::string{')', ' ', *state, ' '})
        broken("stat state not after the command", text.substr(0, 64));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_status(text);
    check_smaps_rollup(text);
    check_statm(text);
    check_cmdline(text);
    check_kb_value(text);
    check_stat_state(text);
    return 0;
}
