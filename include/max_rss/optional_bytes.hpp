// A byte count that may be "not measured", in 8 bytes instead of the 16 of
// std::optional<uint64_t>. A run keeps one record per process, each with a
// score of such fields: at 10,000 processes the difference is over a megabyte
// of max_rss's own memory. "Not measured" is stored as UINT64_MAX, a size no
// /proc figure can reach (the largest kB count that fits in bytes is below it
// by 1023 bytes).
//
// The interface is the part of std::optional<uint64_t> the code uses, so a
// field changes type without its readers changing.
#pragma once

#include <cstdint>
#include <optional>

namespace max_rss {

class OptionalBytes {
public:
    constexpr OptionalBytes() noexcept = default;
    constexpr OptionalBytes(std::nullopt_t) noexcept {}
    // A value equal to the sentinel cannot be stored: it reads back as unset.
    constexpr OptionalBytes(uint64_t bytes) noexcept : value_(bytes) {}
    constexpr OptionalBytes(const std::optional<uint64_t>& bytes) noexcept
        : value_(bytes ? *bytes : kUnset) {}

    [[nodiscard]] constexpr bool has_value() const noexcept { return value_ != kUnset; }
    constexpr explicit operator bool() const noexcept { return has_value(); }
    // Like std::optional: reading an unset value is the caller's bug.
    [[nodiscard]] constexpr uint64_t operator*() const noexcept { return value_; }
    [[nodiscard]] constexpr uint64_t value_or(uint64_t fallback) const noexcept {
        return has_value() ? value_ : fallback;
    }
    constexpr void reset() noexcept { value_ = kUnset; }
    [[nodiscard]] constexpr std::optional<uint64_t> to_optional() const noexcept {
        return has_value() ? std::optional<uint64_t>(value_) : std::nullopt;
    }
    constexpr operator std::optional<uint64_t>() const noexcept { return to_optional(); }

    friend constexpr bool operator==(const OptionalBytes& a, const OptionalBytes& b) noexcept {
        return a.value_ == b.value_;
    }
    friend constexpr bool operator==(const OptionalBytes& a, uint64_t b) noexcept {
        return a.has_value() && a.value_ == b;
    }

private:
    static constexpr uint64_t kUnset = UINT64_MAX;
    uint64_t value_ = kUnset;
};

static_assert(sizeof(OptionalBytes) == sizeof(uint64_t));

}  // namespace max_rss
