#include <max_rss/procfs.hpp>
#include <max_rss/sampler.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace max_rss {
namespace {

int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

uint64_t private_bytes(const SampledProcess& p, const StatmSample& s) {
    switch (p.origin) {
        case ImageOrigin::SharedMm: return 0;
        case ImageOrigin::Fork: {
            const uint64_t unshared = s.resident_bytes > s.shared_bytes ? s.resident_bytes - s.shared_bytes : 0;
            const uint64_t inherited = p.inherited.resident_bytes > p.inherited.shared_bytes
                                           ? p.inherited.resident_bytes - p.inherited.shared_bytes
                                           : 0;
            return unshared > inherited ? unshared - inherited : 0;
        }
        case ImageOrigin::Exec:
            return s.resident_bytes > s.shared_bytes ? s.resident_bytes - s.shared_bytes : 0;
    }
    return 0;
}

SnapshotTotal sum_snapshot(const std::vector<std::pair<SampledProcess, StatmSample>>& samples, size_t top_n) {
    SnapshotTotal t;
    uint64_t largest_shared = 0;
    std::vector<std::pair<uint32_t, uint64_t>> contributions;
    contributions.reserve(samples.size());
    for (const auto& [proc, statm] : samples) {
        const uint64_t own = private_bytes(proc, statm);
        t.total_bytes += own;
        // File-backed and shmem pages are mostly the same pages in several
        // processes (libraries, MAP_SHARED): counted once, as the largest set.
        if (proc.origin != ImageOrigin::SharedMm) largest_shared = std::max(largest_shared, statm.shared_bytes);
        if (own > 0) contributions.emplace_back(proc.index, own);
    }
    t.total_bytes += largest_shared;
    const size_t n = std::min(top_n, contributions.size());
    std::partial_sort(contributions.begin(), contributions.begin() + static_cast<std::ptrdiff_t>(n),
                      contributions.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    contributions.resize(n);
    t.top = std::move(contributions);
    return t;
}

void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points) {
    auto& pts = timeline.points;
    if (max_points >= 2 && pts.size() >= max_points) {
        std::vector<TimelinePoint> merged;
        merged.reserve(max_points / 2 + 1);
        for (size_t i = 0; i + 1 < pts.size(); i += 2)
            merged.push_back(pts[i].total_bytes >= pts[i + 1].total_bytes ? std::move(pts[i]) : std::move(pts[i + 1]));
        if (pts.size() % 2) merged.push_back(std::move(pts.back()));
        pts = std::move(merged);
    }
    pts.push_back(std::move(point));
}

Sampler::Sampler(int64_t interval_ns, int64_t start_ns, size_t max_points)
    : interval_ns_(interval_ns), start_ns_(start_ns), max_points_(max_points) {
    timeline_.interval_ns = interval_ns;
}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
    if (interval_ns_ > 0 && !thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void Sampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Sampler::add(pid_t pid, SampledProcess process) {
    std::lock_guard lock(mutex_);
    live_[pid] = process;
}

void Sampler::set_origin(pid_t pid, ImageOrigin origin, StatmSample inherited) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(pid);
    if (it == live_.end()) return;
    it->second.origin = origin;
    it->second.inherited = inherited;
}

void Sampler::remove(pid_t pid) {
    std::lock_guard lock(mutex_);
    live_.erase(pid);
}

void Sampler::snapshot_now(int64_t min_gap_ns) {
    const int64_t now = monotonic_ns();
    if (now - last_snapshot_ns_.load(std::memory_order_relaxed) < min_gap_ns) return;
    snapshot_locked_copy();
}

void Sampler::snapshot_locked_copy() {
    std::lock_guard one_at_a_time(snapshot_mutex_);
    std::vector<std::pair<pid_t, SampledProcess>> live;
    {
        std::lock_guard lock(mutex_);
        live.assign(live_.begin(), live_.end());
    }
    if (live.empty()) return;
    // /proc is read without the lock: the tracer is never held up by it.
    std::vector<std::pair<SampledProcess, StatmSample>> samples;
    samples.reserve(live.size());
    const int64_t t = monotonic_ns();
    for (const auto& [pid, proc] : live) {
        if (auto s = procfs::read_statm(pid)) samples.emplace_back(proc, *s);
    }
    last_snapshot_ns_.store(t, std::memory_order_relaxed);
    SnapshotTotal total = sum_snapshot(samples);
    std::lock_guard lock(mutex_);
    peak_bytes_ = std::max(peak_bytes_, total.total_bytes);
    append_bounded(timeline_, TimelinePoint{t - start_ns_, total.total_bytes, std::move(total.top)}, max_points_);
}

uint64_t Sampler::peak_bytes() const {
    std::lock_guard lock(mutex_);
    return peak_bytes_;
}

Timeline Sampler::take_timeline() {
    std::lock_guard lock(mutex_);
    return std::move(timeline_);
}

void Sampler::run() {
    std::unique_lock lock(mutex_);
    auto next = std::chrono::steady_clock::now();
    while (!stopping_) {
        next += std::chrono::nanoseconds(interval_ns_);
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now;  // fell behind (a huge tree): do not burst
        if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
        lock.unlock();
        snapshot_locked_copy();
        lock.lock();
    }
}

}  // namespace max_rss
