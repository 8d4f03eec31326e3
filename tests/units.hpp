// Byte units for the tests, in one place: every test file once defined its own,
// which collided when the test binary is compiled in unity batches.
#pragma once

#include <cstdint>

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;
