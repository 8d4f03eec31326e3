#include "seccomp_filter.hpp"

#include <linux/audit.h>
#include <linux/falloc.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cstddef>
#include <optional>

namespace max_rss::ptrace_backend {
namespace {

constexpr uint32_t kCloneUntraced = 0x00800000;  // CLONE_UNTRACED (a 32-bit flag)
constexpr uint32_t kMadvPageout = 21;              // MADV_PAGEOUT (Linux 5.4)
constexpr uint32_t kMadvDontneedLocked = 24;       // MADV_DONTNEED_LOCKED (Linux 5.18)
constexpr uint32_t kMadvGuardInstall = 102;        // MADV_GUARD_INSTALL (Linux 6.13): zaps the range
constexpr uint32_t kShmRemap = 040000;             // SHM_REMAP: shmat over a mapping, which it replaces
// fallocate modes that drop a range's page cache (truncate_pagecache_range),
// and with it every mapping's pages there: PUNCH_HOLE, COLLAPSE_RANGE,
// ZERO_RANGE, INSERT_RANGE (from its offset on) and WRITE_ZEROES (Linux 6.17,
// 0x80). Plain allocation (0, KEEP_SIZE) and UNSHARE_RANGE keep the pages.
constexpr uint32_t kFallocDropsPages = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE |
                                       FALLOC_FL_INSERT_RANGE | 0x80;

// One rule: stop (SECCOMP_RET_TRACE | tag) at syscall nr when every test on
// the low 32 bits of an argument holds (JEQ value, or JSET mask); ALLOW is
// the default.
struct Test {
    // Equals, AnyBit: on the argument's low 32 bits. NotZero: the whole
    // 64-bit argument is not 0 (value unused).
    enum class Op { Equals, AnyBit, NotZero } op;
    unsigned arg;
    uint32_t value;
};
struct Rule {
    uint32_t nr;
    StopTag tag;
    std::vector<Test> tests;
};

unsigned arg_low_offset(unsigned arg) {
    return static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * arg);  // little-endian: low word first
}
unsigned arg_high_offset(unsigned arg) { return arg_low_offset(arg) + 4; }

sock_filter stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(code, k, jt, jf); }

}  // namespace

SeccompFilter::SeccompFilter(Part part) {
    const auto arch_off = static_cast<unsigned>(offsetof(seccomp_data, arch));
    const auto nr_off = static_cast<unsigned>(offsetof(seccomp_data, nr));
    const uint32_t trace = SECCOMP_RET_TRACE;
#if defined(__x86_64__)
    using Op = Test::Op;
    const std::vector<Rule> launch_rules = {
        {__NR_execve, StopTag::Exec, {}},
        {__NR_execveat, StopTag::Exec, {}},
        {__NR_clone, StopTag::Untraced, {{Op::AnyBit, 0, kCloneUntraced}}},
        {__NR_clone3, StopTag::Clone3, {}},
        {__NR_prctl, StopTag::Strict, {{Op::Equals, 0, PR_SET_SECCOMP}, {Op::Equals, 1, SECCOMP_MODE_STRICT}}},
        {__NR_seccomp, StopTag::Strict, {{Op::Equals, 0, SECCOMP_SET_MODE_STRICT}}},
        {__NR_ptrace, StopTag::Ptrace, {{Op::Equals, 0, PTRACE_TRACEME}}},
        {__NR_ptrace, StopTag::Ptrace, {{Op::Equals, 0, PTRACE_ATTACH}}},
        {__NR_ptrace, StopTag::Ptrace, {{Op::Equals, 0, PTRACE_SEIZE}}},
    };
    const std::vector<Rule> release_rules = {
        // Where resident memory can fall (see the header).
        {__NR_munmap, StopTag::Release, {}},
        {__NR_mremap, StopTag::Release, {}},
        {__NR_shmdt, StopTag::Release, {}},
        {__NR_ftruncate, StopTag::ReleaseShared, {}},
        {__NR_truncate, StopTag::ReleaseShared, {}},
        {__NR_shmat, StopTag::Release, {{Op::AnyBit, 2, kShmRemap}}},
        {__NR_process_madvise, StopTag::ReleaseShared, {}},
        // Reaps a SIGKILLed process's address space at once, before that
        // process reaches its exit stop (where its pages would be read).
        {__NR_process_mrelease, StopTag::ReleaseShared, {}},
        {__NR_madvise, StopTag::Release, {{Op::Equals, 2, MADV_DONTNEED}}},
        {__NR_madvise, StopTag::ReleaseShared, {{Op::Equals, 2, MADV_REMOVE}}},
        {__NR_madvise, StopTag::Release, {{Op::Equals, 2, kMadvPageout}}},
        {__NR_madvise, StopTag::Release, {{Op::Equals, 2, kMadvDontneedLocked}}},
        {__NR_madvise, StopTag::Release, {{Op::Equals, 2, kMadvGuardInstall}}},
        {__NR_mmap, StopTag::Release, {{Op::AnyBit, 3, MAP_FIXED}, {Op::AnyBit, 3, MAP_ANONYMOUS}}},
        {__NR_fallocate, StopTag::ReleaseShared, {{Op::AnyBit, 1, kFallocDropsPages}}},
        // brk(0) only asks where the break is (every glibc program does, at
        // its start): no stop.
        {__NR_brk, StopTag::Brk, {{Op::NotZero, 0, 0}}},
    };
    std::vector<Rule> rules;
    if (part != Part::Release) rules = launch_rules;
    if (part != Part::Launch) rules.insert(rules.end(), release_rules.begin(), release_rules.end());
    // Native x86-64: the rules below. i386 compat: only execve/execveat (11,
    // 358) stop, in the launch filter; nothing else is looked at for 32-bit
    // programs.
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
    if (part == Part::Release) {
        code_ = {
            stmt(BPF_LD | BPF_W | BPF_ABS, arch_off),                // [0]
            jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),  // [1] native: to [3]
            stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                 // [2]
        };
    }
#else
    (void)part;
    const std::vector<Rule> rules = {{__NR_execve, StopTag::Exec, {}}, {__NR_execveat, StopTag::Exec, {}}};
    code_.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arch_off));  // unused, keeps the layout simple
#endif
    // Each rule is a block that falls through to the next one when it does
    // not match:  LD nr; JEQ nr ? 0 : next; [LD arg; test ? 0 : next]...; RET TRACE|tag
    for (const Rule& rule : rules) {
        std::vector<sock_filter> block;
        block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, nr_off));
        block.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, rule.nr, 0, 0));  // jf patched below
        std::vector<size_t> to_next{1};     // jf: the test failed, to the next rule
        std::vector<size_t> true_to_next;   // jt: the test failed, to the next rule
        for (const Test& test : rule.tests) {
            if (test.op == Test::Op::NotZero) {
                // low != 0 ? holds (past the high word's test) : (high != 0 ? holds : next rule)
                block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low_offset(test.arg)));
                block.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
                block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_high_offset(test.arg)));
                block.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0));
                true_to_next.push_back(block.size() - 1);
                continue;
            }
            block.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg_low_offset(test.arg)));
            const uint16_t op = test.op == Test::Op::Equals ? BPF_JEQ : BPF_JSET;
            block.push_back(jump(BPF_JMP | op | BPF_K, test.value, 0, 0));
            to_next.push_back(block.size() - 1);
        }
        block.push_back(stmt(BPF_RET | BPF_K, trace | static_cast<uint32_t>(rule.tag)));
        for (size_t at : to_next) block[at].jf = static_cast<uint8_t>(block.size() - at - 1);
        for (size_t at : true_to_next) block[at].jt = static_cast<uint8_t>(block.size() - at - 1);
        code_.insert(code_.end(), block.begin(), block.end());
    }
    code_.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    prog_.len = static_cast<unsigned short>(code_.size());
    prog_.filter = code_.data();
}

}  // namespace max_rss::ptrace_backend
