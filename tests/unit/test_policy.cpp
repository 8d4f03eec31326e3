// The measurement policy on its own: image peaks and when a reading is worth it.
#include <max_rss/engine/policy.hpp>

#include <unistd.h>

#include <catch2/catch.hpp>
#include "units.hpp"

using namespace max_rss;
using namespace max_rss::policy;

namespace {
}  // namespace

TEST_CASE("policy: an exec'd image's peak is its VmHWM", "[policy]") {
    CHECK(image_peak_bytes(ImageOrigin::Exec, 120 * MiB, 0, 0) == 120 * MiB);
    // Inherited and private figures do not apply to an exec'd image.
    CHECK(image_peak_bytes(ImageOrigin::Exec, 120 * MiB, 300 * MiB, 500 * MiB) == 120 * MiB);
}

TEST_CASE("policy: a forked image is charged what it added, or its private pages if more", "[policy]") {
    // Inherited 300 MiB from its parent, peaked at 350: it added 50.
    CHECK(image_peak_bytes(ImageOrigin::Fork, 350 * MiB, 300 * MiB, 0) == 50 * MiB);
    // It rewrote 100 MiB of what it inherited (copy-on-write): VmHWM did not
    // move, its private pages at the stop did.
    CHECK(image_peak_bytes(ImageOrigin::Fork, 300 * MiB, 300 * MiB, 100 * MiB) == 100 * MiB);
    // It unmapped what it inherited: VmHWM below the inheritance is no growth.
    CHECK(image_peak_bytes(ImageOrigin::Fork, 200 * MiB, 300 * MiB, 0) == 0);
}

TEST_CASE("policy: a shared-mm image owns nothing", "[policy]") {
    CHECK(image_peak_bytes(ImageOrigin::SharedMm, 300 * MiB, 0, 300 * MiB) == 0);
}

TEST_CASE("policy: smaps_rollup at exit from 1 MiB for fork images, 4 MiB for exec'd ones", "[policy]") {
    CHECK(wants_smaps_at_exit(ImageOrigin::Fork, 1 * MiB));
    CHECK_FALSE(wants_smaps_at_exit(ImageOrigin::Fork, 1 * MiB - 4 * KiB));
    CHECK(wants_smaps_at_exit(ImageOrigin::Exec, 4 * MiB));
    CHECK_FALSE(wants_smaps_at_exit(ImageOrigin::Exec, 4 * MiB - 4 * KiB));
    CHECK_FALSE(wants_smaps_at_exit(ImageOrigin::Exec, 2 * MiB));
    // Unknown RSS: read it rather than lose the breakdown.
    CHECK(wants_smaps_at_exit(ImageOrigin::Exec, std::nullopt));
    // Nothing of its own to break down.
    CHECK_FALSE(wants_smaps_at_exit(ImageOrigin::SharedMm, 100 * MiB));
}

TEST_CASE("policy: release-point snapshots fit a free allowance plus a share of the run", "[policy]") {
    // The first 200 ms of snapshot time are free: a short run is measured at
    // every release point whatever it costs.
    CHECK(snapshot_affordable(0, 0, kSnapshotAllowanceNs));
    CHECK_FALSE(snapshot_affordable(0, 0, kSnapshotAllowanceNs + 1));
    // Then a fifth of the run's time: after 10 s, 2.2 s in all.
    const int64_t s = 1'000'000'000;
    CHECK(snapshot_affordable(2 * s, 10 * s, kSnapshotAllowanceNs));
    CHECK_FALSE(snapshot_affordable(2 * s, 10 * s, kSnapshotAllowanceNs + 1));
}

TEST_CASE("policy: a VmHWM reset is a VmHWM more than 1 MiB below what a snapshot saw", "[policy]") {
    CHECK_FALSE(hwm_was_reset(100 * MiB, 0));            // nothing sampled
    CHECK_FALSE(hwm_was_reset(100 * MiB, 100 * MiB + 512 * KiB));  // per-CPU slack
    CHECK_FALSE(hwm_was_reset(100 * MiB, 101 * MiB));
    CHECK(hwm_was_reset(10 * MiB, 200 * MiB));
}

TEST_CASE("policy: a fall unseen is a VmHWM above every size known of the image, past the counters' slack",
          "[policy]") {
    // The slack is at least 1 MiB (more on machines with many CPUs).
    CHECK_FALSE(fell_unseen(100 * MiB, 100 * MiB));
    CHECK_FALSE(fell_unseen(100 * MiB, 99 * MiB + 512 * KiB));
    CHECK_FALSE(fell_unseen(50 * MiB, 100 * MiB));  // a reset VmHWM, or a size read after a rise
    if (::sysconf(_SC_NPROCESSORS_CONF) <= 8) CHECK(fell_unseen(100 * MiB, 98 * MiB));
    CHECK(fell_unseen(1024 * MiB, 2 * MiB));  // 1 GiB held, then gone where no one stopped
}

TEST_CASE("policy: a fall between two readings is one past both readings' slack", "[policy]") {
    CHECK_FALSE(fell_between_reads(100 * MiB, 100 * MiB));
    CHECK_FALSE(fell_between_reads(100 * MiB, 99 * MiB + 512 * KiB));
    CHECK_FALSE(fell_between_reads(50 * MiB, 100 * MiB));  // it grew
    CHECK_FALSE(fell_between_reads(0, 100 * MiB));         // the first reading
    if (::sysconf(_SC_NPROCESSORS_CONF) <= 4) CHECK(fell_between_reads(100 * MiB, 98 * MiB));
    CHECK(fell_between_reads(1024 * MiB, 2 * MiB));
}

TEST_CASE("policy: a high-water mark rose after a reading only past both readings' slack", "[policy]") {
    CHECK_FALSE(rose_after(43 * MiB, 43 * MiB));
    // Measured: an ASan-built max_rss's fork read 42.37 MiB before its exec,
    // and the program's ru_maxrss, that same mark, came back 0.39 MiB higher.
    CHECK_FALSE(rose_after(43 * MiB + 400 * KiB, 43 * MiB));
    CHECK_FALSE(rose_after(3 * MiB, 12 * MiB));  // the program stayed below the copy
    if (::sysconf(_SC_NPROCESSORS_CONF) <= 4) CHECK(rose_after(14 * MiB, 12 * MiB));
    CHECK(rose_after(1024 * MiB, 12 * MiB));
}

TEST_CASE("policy: snapshots keep to a tenth of the time", "[policy]") {
    CHECK(snapshot_gap_ns(0, 0) == 0);
    CHECK(snapshot_gap_ns(0, 1'200'000) == 12'000'000);        // a 1.2 ms snapshot: none for 12 ms
    CHECK(snapshot_gap_ns(20'000'000, 1'000'000) == 20'000'000);  // the asked-for gap wins when larger
}
