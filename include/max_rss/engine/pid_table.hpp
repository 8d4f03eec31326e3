// A map from pid (or tid) to T for the process table: what is kept about each
// live process and task, which a tree of 10,000 processes alive at once keeps
// 10,000 times over.
//
// std::unordered_map spent 24-32 bytes a key on its own (a node of its own
// from malloc, with its next pointer and the allocator's header, and a bucket
// pointer). Here the keys sit in one open-addressed index of (pid, slot)
// pairs, 8 bytes each, at most 3/4 full, and the values in chunks of about
// 4 KiB that never move: a pointer to a value stays valid until that key is
// erased, as with std::unordered_map, whatever else is inserted or erased
// meanwhile. (std::deque's 512-byte nodes held five 88-byte values in each
// 528-byte allocation: a sixth of a 10,000-process table was waste.)
// Slots freed by erase are reused, and the last erase gives all of it back.
//
// Iteration (range-for over `for (auto& [pid, value] : table)`) visits every
// key once, in no particular order, and must not insert or erase.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace max_rss {

template <class T>
class PidTable {
    struct Entry {
        pid_t pid = 0;  // 0: empty (no task has pid 0)
        uint32_t slot = 0;
    };

public:
    // What iteration yields: the key and a reference to its value.
    template <class V>
    struct Item {
        pid_t first;
        V& second;
    };

    template <class V, class Table>
    class Iterator {
    public:
        Iterator(Table* table, size_t at) : table_(table), at_(at) { skip_empty(); }
        Item<V> operator*() const {
            const Entry& e = table_->index_[at_];
            return {e.pid, table_->slot_value(e.slot)};
        }
        Iterator& operator++() {
            ++at_;
            skip_empty();
            return *this;
        }
        bool operator==(const Iterator& other) const { return at_ == other.at_; }

    private:
        void skip_empty() {
            while (at_ < table_->index_.size() && table_->index_[at_].pid == 0) ++at_;
        }
        Table* table_;
        size_t at_;
    };
    using iterator = Iterator<T, PidTable>;
    using const_iterator = Iterator<const T, const PidTable>;

    [[nodiscard]] size_t size() const { return size_; }
    // Value slots allocated: erased keys' slots are reused, so this is the
    // most keys held at once since the table was last empty.
    [[nodiscard]] size_t slots() const { return slot_count_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }

    [[nodiscard]] T* find(pid_t pid) {
        const size_t at = locate(pid);
        return at == kAbsent ? nullptr : &slot_value(index_[at].slot);
    }
    [[nodiscard]] const T* find(pid_t pid) const { return const_cast<PidTable*>(this)->find(pid); }

    // The value of pid, replaced by value if it was there. pid 0 marks an
    // empty entry and is no task's: a logic error.
    T& assign(pid_t pid, T value) {
        if (pid == 0) throw std::logic_error("PidTable: pid 0 is no task's");
        if (T* existing = find(pid)) return *existing = std::move(value);
        if ((size_ + 1) * 4 > index_.size() * 3) grow();
        uint32_t slot;
        if (!free_slots_.empty()) {
            slot = free_slots_.back();
            free_slots_.pop_back();
        } else {
            slot = static_cast<uint32_t>(slot_count_++);
            if (slot % kPerChunk == 0) chunks_.push_back(std::make_unique<T[]>(kPerChunk));
        }
        slot_value(slot) = std::move(value);
        place(Entry{pid, slot});
        ++size_;
        return slot_value(slot);
    }

    // Removes pid (if there); its slot is reused by a later key.
    void erase(pid_t pid) {
        size_t at = locate(pid);
        if (at == kAbsent) return;
        if (size_ == 1) {
            // The last one (the tree has ended): all of it is given back, for
            // what comes after the run (the tree peak's sweep, the report).
            *this = PidTable{};
            return;
        }
        free_slots_.push_back(index_[at].slot);
        slot_value(index_[at].slot) = T{};  // what the value held is given back now
        --size_;
        // Backward-shift deletion: the keys after the hole that belong at or
        // before it move into it, so that every lookup still stops at the
        // first empty entry.
        const size_t mask = index_.size() - 1;
        for (size_t next = (at + 1) & mask; index_[next].pid != 0; next = (next + 1) & mask) {
            const size_t home = home_of(index_[next].pid);
            // Can the key at next move to at? Yes unless its home lies in (at, next].
            const bool home_between = at <= next ? (home > at && home <= next) : (home > at || home <= next);
            if (home_between) continue;
            index_[at] = index_[next];
            at = next;
        }
        index_[at] = Entry{};
    }

    iterator begin() { return iterator(this, 0); }
    iterator end() { return iterator(this, index_.size()); }
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator(this, index_.size()); }

private:
    static constexpr size_t kAbsent = SIZE_MAX;
    // Values a chunk holds: one allocation of about 4 KiB (at least one value).
    static constexpr size_t kPerChunk = sizeof(T) < 4080 ? 4080 / sizeof(T) : 1;

    [[nodiscard]] T& slot_value(uint32_t slot) { return chunks_[slot / kPerChunk][slot % kPerChunk]; }
    [[nodiscard]] const T& slot_value(uint32_t slot) const { return chunks_[slot / kPerChunk][slot % kPerChunk]; }

    [[nodiscard]] size_t home_of(pid_t pid) const {
        // Fibonacci hashing: consecutive pids land apart, so a run of them
        // does not make one long cluster.
        const uint64_t h = static_cast<uint64_t>(static_cast<uint32_t>(pid)) * 0x9E3779B97F4A7C15ull;
        return static_cast<size_t>(h >> (64 - bits_));
    }

    [[nodiscard]] size_t locate(pid_t pid) const {
        if (index_.empty() || pid == 0) return kAbsent;
        const size_t mask = index_.size() - 1;
        for (size_t at = home_of(pid);; at = (at + 1) & mask) {
            if (index_[at].pid == pid) return at;
            if (index_[at].pid == 0) return kAbsent;
        }
    }

    void place(Entry e) {
        const size_t mask = index_.size() - 1;
        size_t at = home_of(e.pid);
        while (index_[at].pid != 0) at = (at + 1) & mask;
        index_[at] = e;
    }

    void grow() {
        std::vector<Entry> old = std::move(index_);
        bits_ = old.empty() ? 4 : bits_ + 1;
        index_.assign(size_t{1} << bits_, Entry{});
        for (const Entry& e : old)
            if (e.pid != 0) place(e);
    }

    std::vector<Entry> index_;  // a power of two long, at most 3/4 full
    unsigned bits_ = 0;         // log2 of index_.size()
    std::vector<std::unique_ptr<T[]>> chunks_;  // slot s: chunks_[s / kPerChunk][s % kPerChunk]; never moved
    size_t slot_count_ = 0;                     // slots handed out so far
    std::vector<uint32_t> free_slots_;
    size_t size_ = 0;
};

}  // namespace max_rss
