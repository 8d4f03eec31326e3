// Byte sizes and percentages as users type them and as max_rss prints them.
// Pure functions: no I/O, no locale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace max_rss {

// Parses a size such as "512MiB", "1.5GiB", "300MB", "4096KiB", "100M", "12B"
// or "123" into bytes. Surrounding spaces and tabs are ignored, and so are
// spaces between the number and the unit ("100.0 MiB" parses, so every
// format_bytes() output round-trips). Units are case-insensitive:
//   (none), B                   bytes
//   K, M, G, T, P, E            binary: 1024^n, like KiB (as sort -S, GNU du)
//   KiB, MiB, GiB, TiB, PiB, EiB  binary: 1024^n
//   Ki, Mi, Gi, Ti, Pi, Ei      binary: 1024^n (Kubernetes' quantities)
//   KB, MB, GB, TB, PB, EB      decimal: 1000^n (SI)
// The number is decimal digits with an optional fraction ("1.5", never ".5",
// "1." or "1e3"); a fraction is rounded to the nearest byte, and is rejected
// for plain bytes ("1.5B"). Returns nullopt for anything else: empty text, a
// sign, an unknown unit, trailing garbage, or a size above UINT64_MAX.
std::optional<uint64_t> parse_size(std::string_view text);

// Formats bytes for humans with binary units and one decimal: "512 B",
// "4.0 KiB", "100.0 MiB", "1.5 GiB". Below 1 KiB the exact count is shown.
// The unit is the largest one that keeps the rounded value below 1024, so
// 1048575 bytes prints "1.0 MiB", not "1024.0 KiB".
std::string format_bytes(uint64_t bytes);

// A binary unit ("B", "KiB", ... "EiB") and its size, chosen once for a group
// of figures (a table, an axis) so that they read alike.
struct ByteUnit {
    std::string_view name;
    double bytes = 1;
};
// The unit format_bytes() picks for bytes.
ByteUnit unit_for_bytes(double bytes);
// bytes in unit, as format_bytes() writes it: "512 B", "100.0 MiB".
std::string format_in_unit(double bytes, ByteUnit unit);

// Parses a threshold such as "5%", "5" or "0.5%" into a fraction (0.05, 0.05,
// 0.005): a bare number is a percentage too. Digits with an optional fraction,
// an optional '%' (spaces allowed before it and around the whole); nullopt for
// empty text, a sign, exponents, "inf"/"nan" or garbage. 0 and values above
// 100% are accepted.
std::optional<double> parse_percent(std::string_view text);

}  // namespace max_rss
