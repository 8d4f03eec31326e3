// The /proc parsers on damaged text: the hand-made corpus in
// tests/data/proc/garbled/ (see its README.md), plus every truncation point,
// NULs inserted at every position and 2,000 seeded byte flips of each real
// file in tests/data/proc/. The documented contract (procfs.hpp): a field
// whose value is garbled stays absent, never a wrong number. What each check
// can promise depends on where the damage is:
//   - damage inside a value (a non-digit byte in place of any byte after the
//     key's colon, a NUL anywhere, CRLF): every figure that comes out is the
//     true one -- except where a blank replaces a number's first or last
//     digit, which leaves a shorter number in its padding ("   5247 kB"),
//     indistinguishable from a real one;
//   - damage to a key or a line end can make one line pass for another
//     ("SwapPss" split into "Swa" + "Pss"): every figure that comes out is
//     still a number that the original text contains, never an invented one;
//   - a truncation cuts a value that has no unit (Tgid, Threads, statm's
//     fields) into a shorter valid number, which no parser can tell from a
//     real one: only the kB figures are held to the truth there. Likewise a
//     space or newline flipped into statm splits a field and shifts the rest:
//     there only the absence of a crash is checked.
#include <max_rss/procfs/procfs.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include "units.hpp"

using namespace max_rss;

namespace {

constexpr uint64_t kPage = 4096;

std::string load_corpus(const std::string& relative) {
    std::ifstream in(std::string(MAX_RSS_TEST_DATA_DIR) + "/proc/" + relative, std::ios::binary);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

using Field = std::pair<const char*, std::optional<uint64_t>>;

template <typename T>
std::optional<uint64_t> widen(const std::optional<T>& v) {
    if (!v) return std::nullopt;
    return static_cast<uint64_t>(*v);
}

// Every figure with a unit (bytes from kB) and every one without (ids, counts).
struct Fields {
    std::vector<Field> kb;
    std::vector<Field> plain;
};

Fields fields_of(const procfs::Status& s) {
    return {{{"VmHWM", s.hwm_bytes},
             {"VmRSS", s.rss_bytes},
             {"RssAnon", s.rss_anon_bytes},
             {"RssFile", s.rss_file_bytes},
             {"RssShmem", s.rss_shmem_bytes},
             {"VmSwap", s.swap_bytes}},
            {{"Tgid", widen(s.tgid)}, {"PPid", widen(s.ppid)}, {"Threads", widen(s.threads)}}};
}

Fields fields_of(const std::optional<procfs::SmapsRollup>& r) {
    const procfs::SmapsRollup s = r.value_or(procfs::SmapsRollup{});
    return {{{"Rss", s.rss_bytes},
             {"Pss", s.pss_bytes},
             {"Pss_Anon", s.pss_anon_bytes},
             {"Pss_File", s.pss_file_bytes},
             {"Pss_Shmem", s.pss_shmem_bytes},
             {"Shared_Clean", s.shared_clean_bytes},
             {"Shared_Dirty", s.shared_dirty_bytes},
             {"Private_Clean", s.private_clean_bytes},
             {"Private_Dirty", s.private_dirty_bytes},
             {"Anonymous", s.anonymous_bytes},
             {"Swap", s.swap_bytes},
             {"SwapPss", s.swap_pss_bytes}},
            {}};
}

// statm's figures are pages, not kB: held like plain numbers.
Fields fields_of(const std::optional<procfs::Statm>& s) {
    if (!s) return {{}, {{"resident", std::nullopt}, {"shared", std::nullopt}}};
    return {{}, {{"resident", s->resident_bytes}, {"shared", s->shared_bytes}}};
}

// Every run of digits in text, as a number (when it fits).
std::set<uint64_t> numbers_in(const std::string& text) {
    std::set<uint64_t> out;
    for (size_t i = 0; i < text.size();) {
        if (text[i] < '0' || text[i] > '9') {
            ++i;
            continue;
        }
        uint64_t v = 0;
        bool fits = true;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            const auto digit = static_cast<uint64_t>(text[i] - '0');
            if (v > (UINT64_MAX - digit) / 10) fits = false;
            if (fits) v = v * 10 + digit;
        }
        if (fits) out.insert(v);
    }
    return out;
}

// Every present figure equals the true one (kB figures only when !plain_too).
void check_true(const Fields& got, const Fields& truth, bool plain_too) {
    for (size_t i = 0; i < got.kb.size(); ++i) {
        INFO(got.kb[i].first);
        if (got.kb[i].second) CHECK(got.kb[i].second == truth.kb[i].second);
    }
    if (!plain_too) return;
    for (size_t i = 0; i < got.plain.size(); ++i) {
        INFO(got.plain[i].first);
        if (got.plain[i].second) CHECK(got.plain[i].second == truth.plain[i].second);
    }
}

// Every present figure is a number of the original text (kB scaled to bytes,
// pages to bytes for statm).
void check_from_text(const Fields& got, const std::set<uint64_t>& numbers, uint64_t plain_scale) {
    for (const auto& [name, value] : got.kb) {
        INFO(name);
        if (value) CHECK((*value % KiB == 0 && numbers.count(*value / KiB)));
    }
    for (const auto& [name, value] : got.plain) {
        INFO(name);
        if (value) CHECK((*value % plain_scale == 0 && numbers.count(*value / plain_scale)));
    }
}

// A parser of one kind of /proc file, as Fields.
using Parse = std::function<Fields(std::string_view)>;
const Parse parse_status_fields = [](std::string_view t) { return fields_of(procfs::parse_status(t)); };
const Parse parse_smaps_fields = [](std::string_view t) { return fields_of(procfs::parse_smaps_rollup(t)); };
const Parse parse_statm_fields = [](std::string_view t) { return fields_of(procfs::parse_statm(t, kPage)); };

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Is pos inside a "Key: value" line's value (after the line's first colon,
// before its end)? statm has no keys: all of it counts as value.
bool in_value(const std::string& text, size_t pos, bool keyed) {
    if (text[pos] == '\n') return false;
    if (!keyed) return true;
    const size_t line_start = pos == 0 ? 0 : text.rfind('\n', pos - 1) + 1;  // npos + 1 == 0
    const size_t colon = text.find(':', line_start);
    const size_t line_end = text.find('\n', line_start);
    return colon != std::string::npos && colon < line_end && pos > colon;
}

// All the checks on one real file.
void check_damaged_copies(const std::string& original, const Parse& parse, bool keyed, uint64_t plain_scale) {
    const Fields truth = parse(original);
    const std::set<uint64_t> numbers = numbers_in(original);

    SECTION("every truncation point") {
        // Units make a cut kB value absent; values without one may shrink.
        for (size_t n = 0; n <= original.size(); ++n) {
            INFO("first " << n << " bytes");
            check_true(parse(std::string_view(original).substr(0, n)), truth, false);
        }
    }
    SECTION("a NUL inserted at every position") {
        for (size_t pos = 0; pos <= original.size(); ++pos) {
            INFO("NUL at " << pos);
            std::string text = original;
            text.insert(pos, 1, '\0');
            check_true(parse(text), truth, true);
        }
    }
    SECTION("CRLF line ends") {
        std::string text;
        for (char c : original) text += c == '\n' ? std::string("\r\n") : std::string(1, c);
        const Fields got = parse(text);
        check_true(got, truth, true);
        for (size_t i = 0; i < got.kb.size(); ++i) CHECK(got.kb[i].second == truth.kb[i].second);
    }
    SECTION("2,000 seeded byte flips") {
        std::mt19937 rng(6);  // issue 6: fixed, so a failure names its flip
        const std::string interesting("\0\r\n \t:kB-+x\xff", 12);
        for (int i = 0; i < 2000; ++i) {
            const size_t pos = rng() % original.size();
            char c;
            do {
                c = rng() % 2 ? interesting[rng() % interesting.size()] : static_cast<char>(rng() % 256);
            } while (is_digit(c) || c == original[pos]);
            std::string text = original;
            text[pos] = c;
            INFO("byte " << pos << " '" << original[pos] << "' -> " << static_cast<int>(static_cast<unsigned char>(c)));
            const Fields got = parse(text);
            // A blank in place of a number's first or last digit reads as the
            // padding around a shorter number ("   5247 kB"): no parser can tell.
            // '\r' there is garbage, not padding: see the "CR inside a value" case.
            const bool blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
            if (blank && is_digit(original[pos])) continue;
            if (!keyed && blank) continue;  // a new separator shifts statm's fields
            if (in_value(original, pos, keyed)) check_true(got, truth, true);
            else check_from_text(got, numbers, plain_scale);
        }
    }
}

}  // namespace

// ---------------------------------------------------------------------------
// Derived in memory from the real files

TEST_CASE("parse_status on damaged copies of a real status file", "[procfs][fuzz-corpus]") {
    const std::string original = load_corpus("status_touch50.txt");
    REQUIRE(procfs::parse_status(original).hwm_bytes == 52476 * KiB);
    check_damaged_copies(original, parse_status_fields, true, 1);
}

TEST_CASE("parse_smaps_rollup on damaged copies of a real rollup", "[procfs][fuzz-corpus]") {
    const std::string original = load_corpus("smaps_rollup_touch50.txt");
    REQUIRE(procfs::parse_smaps_rollup(original)->pss_bytes == 51372 * KiB);
    check_damaged_copies(original, parse_smaps_fields, true, 1);
}

TEST_CASE("parse_statm on damaged copies of a real statm", "[procfs][fuzz-corpus]") {
    const std::string original = load_corpus("statm_touch50.txt");
    REQUIRE(procfs::parse_statm(original, kPage)->resident_bytes == 13119 * kPage);
    check_damaged_copies(original, parse_statm_fields, false, kPage);
}

TEST_CASE("parse_cmdline splits any bytes back into exactly what was joined", "[procfs][fuzz-corpus]") {
    // "Each argument ends with a NUL": joining the arguments with NULs gives
    // the text back, less one final NUL.
    auto round_trip = [](const std::string& text) {
        const auto args = procfs::parse_cmdline(text);
        std::string joined;
        for (size_t i = 0; i < args.size(); ++i) joined += (i ? std::string(1, '\0') : std::string()) + args[i];
        const std::string expected = !text.empty() && text.back() == '\0' ? text.substr(0, text.size() - 1) : text;
        CHECK(joined == expected);
        if (text.empty()) CHECK(args.empty());
    };
    std::mt19937 rng(6);
    const std::string cmdline("/usr/bin/prog\0--flag\0\0value with spaces\0", 40);
    for (size_t n = 0; n <= cmdline.size(); ++n) round_trip(cmdline.substr(0, n));
    for (int i = 0; i < 500; ++i) {
        std::string text(rng() % 64, '\0');
        for (char& c : text) c = rng() % 3 ? static_cast<char>(rng() % 256) : '\0';
        round_trip(text);
    }
    for (const char* name : {"garbled/random_bytes.bin", "status_touch50.txt"}) round_trip(load_corpus(name));
}

// ---------------------------------------------------------------------------
// The hand-made corpus: tests/data/proc/garbled/README.md

TEST_CASE("garbled corpus: CRLF files give every true figure", "[procfs][fuzz-corpus]") {
    const Fields status_truth = fields_of(procfs::parse_status(load_corpus("status_touch50.txt")));
    const Fields status = fields_of(procfs::parse_status(load_corpus("garbled/status_crlf.txt")));
    for (size_t i = 0; i < status.kb.size(); ++i) CHECK(status.kb[i].second == status_truth.kb[i].second);
    for (size_t i = 0; i < status.plain.size(); ++i) CHECK(status.plain[i].second == status_truth.plain[i].second);

    const auto smaps = procfs::parse_smaps_rollup(load_corpus("garbled/smaps_rollup_crlf.txt"));
    REQUIRE(smaps);
    CHECK(smaps->rss_bytes == 52476 * KiB);
    CHECK(smaps->pss_bytes == 51372 * KiB);
    CHECK(smaps->swap_pss_bytes == 0u);

    const auto statm = procfs::parse_statm(load_corpus("garbled/statm_crlf.txt"), kPage);
    REQUIRE(statm);
    CHECK(statm->resident_bytes == 13119 * kPage);
    CHECK(statm->shared_bytes == 295 * kPage);
}

TEST_CASE("garbled corpus: numbers at and past the limits of their types", "[procfs][fuzz-corpus]") {
    const auto s = procfs::parse_status(load_corpus("garbled/status_huge_numbers.txt"));
    CHECK_FALSE(s.tgid);                                     // 2^31 does not fit a pid_t
    CHECK(s.ppid == 2147483647);                             // INT_MAX does
    CHECK_FALSE(s.threads);                                  // 2^32 does not fit a uint32_t
    CHECK(s.hwm_bytes == UINT64_C(18014398509481983) * KiB);  // the largest kB count that fits in bytes
    CHECK_FALSE(s.rss_bytes);                                // one more does not
    CHECK_FALSE(s.rss_anon_bytes);                           // nor 26 digits
    CHECK(s.rss_file_bytes == 1180 * KiB);                   // leading zeros are still the number
    CHECK_FALSE(s.rss_shmem_bytes);                          // "-0"
    CHECK_FALSE(s.swap_bytes);                               // "+5"

    CHECK_FALSE(procfs::parse_statm(load_corpus("garbled/statm_huge.txt"), kPage));  // pages * 4096 overflows
    CHECK_FALSE(procfs::parse_statm(load_corpus("garbled/statm_short.txt"), kPage));
    CHECK_FALSE(procfs::parse_statm(load_corpus("garbled/statm_signed.txt"), kPage));
}

TEST_CASE("garbled corpus: a missing or wrong unit leaves the figure absent", "[procfs][fuzz-corpus]") {
    const auto s = procfs::parse_status(load_corpus("garbled/status_missing_units.txt"));
    CHECK_FALSE(s.hwm_bytes);        // no unit
    CHECK_FALSE(s.rss_bytes);        // "KB"
    CHECK_FALSE(s.rss_anon_bytes);   // "kb"
    CHECK_FALSE(s.rss_file_bytes);   // the unit alone
    CHECK(s.rss_shmem_bytes == 0u);  // "0 kB" is a real zero
    CHECK_FALSE(s.swap_bytes);       // "MB"
}

TEST_CASE("garbled corpus: NUL bytes never become part of a number", "[procfs][fuzz-corpus]") {
    const auto s = procfs::parse_status(load_corpus("garbled/status_nuls.txt"));
    CHECK_FALSE(s.tgid);                      // "18\0" "26"
    CHECK_FALSE(s.hwm_bytes);                 // "52476 kB\0"
    CHECK_FALSE(s.rss_bytes);                 // "Vm\0RSS" is not a key
    CHECK(s.rss_anon_bytes == 51296 * KiB);   // untouched line
    CHECK_FALSE(s.rss_file_bytes);            // "k\0B"
    CHECK(s.threads == 1u);

    const auto r = procfs::parse_smaps_rollup(load_corpus("garbled/smaps_rollup_nuls.txt"));
    REQUIRE(r);
    CHECK_FALSE(r->pss_bytes);
    CHECK_FALSE(r->anonymous_bytes);
    CHECK(r->rss_bytes == 52476 * KiB);
    CHECK(r->private_dirty_bytes == 51296 * KiB);

    CHECK_FALSE(procfs::parse_statm(load_corpus("garbled/statm_nuls.txt"), kPage));
}

TEST_CASE("garbled corpus: a CR inside a value is garbage, not padding", "[procfs][fuzz-corpus]") {
    // A CR ends a line in CRLF text; before the unit it can only be damage
    // ("5247\r kB" is a cut "52476 kB"), so the figure must be absent.
    const auto s = procfs::parse_status(load_corpus("garbled/status_cr_inside.txt"));
    CHECK_FALSE(s.hwm_bytes);               // "5247\r kB"
    CHECK(s.rss_bytes == 52476 * KiB);      // "52476 kB\r": a CRLF line end
    CHECK_FALSE(s.rss_anon_bytes);          // "51\r296 kB"
    const auto r = procfs::parse_smaps_rollup(load_corpus("garbled/smaps_rollup_cr_inside.txt"));
    REQUIRE(r);
    CHECK_FALSE(r->pss_bytes);              // "5137\r kB"
    CHECK(r->rss_bytes == 52476 * KiB);
}

TEST_CASE("garbled corpus: a negative id is garbage", "[procfs][fuzz-corpus]") {
    // Found by tests/fuzz/fuzz_procfs: the kernel never prints a sign, and no
    // task has a negative id or thread count.
    const auto s = procfs::parse_status(load_corpus("garbled/status_negative_ids.txt"));
    CHECK_FALSE(s.tgid);     // "-1826"
    CHECK_FALSE(s.ppid);     // "-147483647"
    CHECK_FALSE(s.threads);  // "-1"
    CHECK(s.hwm_bytes == 52476 * KiB);
}

TEST_CASE("garbled corpus: no rollup header, no colon, no structure", "[procfs][fuzz-corpus]") {
    CHECK_FALSE(procfs::parse_smaps_rollup(load_corpus("garbled/smaps_rollup_no_header.txt")));
    CHECK_FALSE(procfs::parse_smaps_rollup(load_corpus("garbled/smaps_rollup_header_only.txt")));

    const auto s = procfs::parse_status(load_corpus("garbled/status_no_colons.txt"));
    CHECK_FALSE(s.hwm_bytes);
    CHECK(s.rss_bytes == 12 * KiB);

    // Random bytes: nothing in them is a field; all that matters is no crash.
    const std::string junk = load_corpus("garbled/random_bytes.bin");
    const Fields status = fields_of(procfs::parse_status(junk));
    for (const auto& f : status.kb) CHECK_FALSE(f.second);
    CHECK_FALSE(procfs::parse_smaps_rollup(junk));
    (void)procfs::parse_statm(junk, kPage);
    (void)procfs::parse_cmdline(junk);
}

TEST_CASE("garbled corpus: cmdline blobs split exactly", "[procfs][fuzz-corpus]") {
    using V = std::vector<std::string>;
    CHECK(procfs::parse_cmdline(load_corpus("garbled/cmdline_empty_args.bin")) == V{"prog", "", "a", ""});
    CHECK(procfs::parse_cmdline(load_corpus("garbled/cmdline_no_final_nul.bin")) == V{"prog", "arg"});
    CHECK(procfs::parse_cmdline(load_corpus("garbled/cmdline_only_nuls.bin")) == V{"", "", ""});
}
