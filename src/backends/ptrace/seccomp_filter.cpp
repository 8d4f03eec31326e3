#include "seccomp_filter.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cstddef>
#include <optional>

namespace max_rss::ptrace_backend {
namespace {

constexpr uint32_t kCloneUntraced = 0x00800000;  // CLONE_UNTRACED (a 32-bit flag)

// One rule: stop (SECCOMP_RET_TRACE | tag) at syscall nr when the low 32 bits
// of argument arg match (JEQ value, or JSET mask); ALLOW is the default.
struct Rule {
    uint32_t nr;
    StopTag tag;
    enum class Test { None, Equals, AnyBit } test = Test::None;
    unsigned arg = 0;
    uint32_t value = 0;
    // A second equality on another argument (prctl(PR_SET_SECCOMP, STRICT)).
    std::optional<std::pair<unsigned, uint32_t>> also_equals;
};

Rule stop_at(uint32_t nr, StopTag tag) {
    Rule r{};
    r.nr = nr;
    r.tag = tag;
    return r;
}

Rule stop_if(uint32_t nr, StopTag tag, Rule::Test test, unsigned arg, uint32_t value) {
    Rule r = stop_at(nr, tag);
    r.test = test;
    r.arg = arg;
    r.value = value;
    return r;
}

unsigned arg_low_offset(unsigned arg) {
    return static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * arg);  // little-endian: low word first
}

sock_filter stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(code, k, jt, jf); }

}  // namespace

SeccompFilter::SeccompFilter() {
    const auto arch_off = static_cast<unsigned>(offsetof(seccomp_data, arch));
    const auto nr_off = static_cast<unsigned>(offsetof(seccomp_data, nr));
    const uint32_t trace = SECCOMP_RET_TRACE;
#if defined(__x86_64__)
    Rule strict_prctl = stop_if(__NR_prctl, StopTag::Strict, Rule::Test::Equals, 0, PR_SET_SECCOMP);
    strict_prctl.also_equals = std::pair<unsigned, uint32_t>{1, SECCOMP_MODE_STRICT};
    const std::vector<Rule> rules = {
        stop_at(__NR_execve, StopTag::Exec),
        stop_at(__NR_execveat, StopTag::Exec),
        stop_if(__NR_clone, StopTag::Untraced, Rule::Test::AnyBit, 0, kCloneUntraced),
        stop_at(__NR_clone3, StopTag::Clone3),
        strict_prctl,
        stop_if(__NR_seccomp, StopTag::Strict, Rule::Test::Equals, 0, SECCOMP_SET_MODE_STRICT),
        stop_if(__NR_ptrace, StopTag::Ptrace, Rule::Test::Equals, 0, PTRACE_TRACEME),
        stop_if(__NR_ptrace, StopTag::Ptrace, Rule::Test::Equals, 0, PTRACE_ATTACH),
        stop_if(__NR_ptrace, StopTag::Ptrace, Rule::Test::Equals, 0, PTRACE_SEIZE),
    };
    // Native x86-64: the rules below. i386 compat: only execve/execveat (11,
    // 358) stop; nothing else is looked at for 32-bit programs.
    code_ = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arch_off),                // [0]
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 6, 0),  // [1] native: to [8]
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 3),    // [2] else: allow
        stmt(BPF_LD | BPF_W | BPF_ABS, nr_off),                  // [3]
        jump(BPF_JMP | BPF_JEQ | BPF_K, 11, 2, 0),                // [4] i386 execve: to [7]
        jump(BPF_JMP | BPF_JEQ | BPF_K, 358, 1, 0),               // [5] i386 execveat: to [7]
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                 // [6]
        stmt(BPF_RET | BPF_K, trace | static_cast<uint32_t>(StopTag::Exec)),  // [7]
    };
#else
    const std::vector<Rule> rules = {stop_at(__NR_execve, StopTag::Exec), stop_at(__NR_execveat, StopTag::Exec)};
    code_.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arch_off));  // unused, keeps the layout simple
#endif
    // Each rule is a block that falls through to the next one when it does
    // not match:  LD nr; JEQ nr ? 0 : next; [LD arg; test ? 0 : next]...; RET TRACE|tag
    for (const Rule& rule : rules) {
        std::vector<sock_filter> block;
        block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, nr_off));
        block.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, rule.nr, 0, 0));  // jf patched below
        std::vector<size_t> to_next{1};
        if (rule.test != Rule::Test::None) {
            block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low_offset(rule.arg)));
            const uint16_t op = rule.test == Rule::Test::Equals ? BPF_JEQ : BPF_JSET;
            block.push_back(jump(BPF_JMP | op | BPF_K, rule.value, 0, 0));
            to_next.push_back(block.size() - 1);
        }
        if (rule.also_equals) {
            block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low_offset(rule.also_equals->first)));
            block.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, rule.also_equals->second, 0, 0));
            to_next.push_back(block.size() - 1);
        }
        block.push_back(stmt(BPF_RET | BPF_K, trace | static_cast<uint32_t>(rule.tag)));
        for (size_t at : to_next) block[at].jf = static_cast<uint8_t>(block.size() - at - 1);
        code_.insert(code_.end(), block.begin(), block.end());
    }
    code_.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    prog_.len = static_cast<unsigned short>(code_.size());
    prog_.filter = code_.data();
}

}  // namespace max_rss::ptrace_backend
