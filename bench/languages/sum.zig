// Builds a slice of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
// For Zig 0.11 and later: stdout is std.io.getStdOut() up to 0.14 and
// std.fs.File.stdout() from 0.15 on; the branch not taken is never compiled.
const std = @import("std");

pub fn main() !void {
    const n = 1_000_000;
    const allocator = std.heap.page_allocator;
    const values = try allocator.alloc(i64, n);
    defer allocator.free(values);
    for (values, 0..) |*value, i| {
        const x: i64 = @intCast(i);
        value.* = @mod(x * x, 1000);
    }
    // Keeps the optimizer from fusing the loops and dropping the slice.
    std.mem.doNotOptimizeAway(values.ptr);
    var sum: i64 = 0;
    for (values) |value| sum += value;
    var buffer: [32]u8 = undefined;
    try writeStdout(try std.fmt.bufPrint(&buffer, "{d}\n", .{sum}));
}

fn writeStdout(bytes: []const u8) !void {
    if (comptime @hasDecl(std.fs.File, "stdout")) {
        try std.fs.File.stdout().writeAll(bytes);
    } else {
        try std.io.getStdOut().writeAll(bytes);
    }
}
