#include <max_rss/procfs.hpp>
#include <max_rss/sampler.hpp>

#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

namespace max_rss {
namespace {

int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The private part as statm shows it (no copy-on-write copies: see the header).
uint64_t private_from_statm(const SampledProcess& p, const StatmSample& s) {
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

}  // namespace

uint64_t private_bytes(const SampledProcess& p, const StatmSample& s) {
    return std::max(p.private_floor_bytes, private_from_statm(p, s));
}

void SnapshotSum::add(const SampledProcess& process, const StatmSample& sample) {
    const uint64_t own = private_bytes(process, sample);
    private_total_bytes_ += own;
    // File-backed and shmem pages are mostly the same pages in several
    // processes (libraries, MAP_SHARED): counted once, as the largest set.
    if (process.origin != ImageOrigin::SharedMm)
        largest_shared_bytes_ = std::max(largest_shared_bytes_, sample.shared_bytes);
    if (own == 0 || top_n_ == 0) return;
    auto smaller = [](const auto& a, const auto& b) { return a.second > b.second; };  // min-heap
    if (top_.size() < top_n_) {
        top_.emplace_back(process.index, own);
        std::push_heap(top_.begin(), top_.end(), smaller);
    } else if (own > top_.front().second) {
        std::pop_heap(top_.begin(), top_.end(), smaller);
        top_.back() = {process.index, own};
        std::push_heap(top_.begin(), top_.end(), smaller);
    }
}

SnapshotTotal SnapshotSum::finish() && {
    SnapshotTotal t;
    t.total_bytes = private_total_bytes_ + largest_shared_bytes_;
    std::sort(top_.begin(), top_.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    // One point per snapshot is kept: a vector of exactly its size.
    t.top.assign(top_.begin(), top_.end());
    return t;
}

SnapshotTotal sum_snapshot(const std::vector<std::pair<SampledProcess, StatmSample>>& samples, size_t top_n) {
    SnapshotSum sum(top_n);
    for (const auto& [proc, statm] : samples) sum.add(proc, statm);
    return std::move(sum).finish();
}

void append_bounded(Timeline& timeline, TimelinePoint point, size_t max_points) {
    auto& pts = timeline.points;
    if (max_points >= 2 && pts.size() >= max_points) {
        // In place: a second array here would be a spike in max_rss's own memory.
        // (Never a self-move: a vector moved onto itself may end up empty.)
        size_t kept = 0;
        auto keep = [&](size_t from) {
            if (from != kept) pts[kept] = std::move(pts[from]);
            ++kept;
        };
        for (size_t i = 0; i + 1 < pts.size(); i += 2)
            keep(pts[i].total_bytes >= pts[i + 1].total_bytes ? i : i + 1);
        if (pts.size() % 2) keep(pts.size() - 1);
        pts.resize(kept);
    }
    pts.push_back(std::move(point));
}

namespace {
volatile sig_atomic_t g_sample_due = 0;
void on_alarm(int) { g_sample_due = 1; }
}  // namespace

Sampler::Sampler(int64_t interval_ns, int64_t start_ns, size_t max_points)
    : interval_ns_(interval_ns), start_ns_(start_ns), max_points_(max_points) {
    timeline_.interval_ns = interval_ns;
}

Sampler::~Sampler() { stop(); }

bool Sampler::due() {
    if (!g_sample_due) return false;
    g_sample_due = 0;
    return true;
}

void Sampler::start() {
    if (interval_ns_ <= 0 || armed_) return;
    struct sigaction sa {};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the tracer's wait4 must return EINTR
    ::sigaction(SIGALRM, &sa, &saved_alarm_);
    itimerval timer{};
    timer.it_interval.tv_sec = interval_ns_ / 1'000'000'000;
    timer.it_interval.tv_usec = (interval_ns_ % 1'000'000'000) / 1000;
    if (timer.it_interval.tv_sec == 0 && timer.it_interval.tv_usec == 0) timer.it_interval.tv_usec = 1;
    timer.it_value = timer.it_interval;
    ::setitimer(ITIMER_REAL, &timer, nullptr);
    armed_ = true;
}

void Sampler::stop() {
    if (!armed_) return;
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
    ::sigaction(SIGALRM, &saved_alarm_, nullptr);
    g_sample_due = 0;
    armed_ = false;
}

void Sampler::add(pid_t pid, SampledProcess process) { live_[pid] = process; }

void Sampler::set_origin(pid_t pid, ImageOrigin origin, StatmSample inherited) {
    auto it = live_.find(pid);
    if (it == live_.end()) return;
    it->second.origin = origin;
    it->second.inherited = inherited;
    it->second.max_resident_bytes = 0;  // a new image (exec) starts afresh
}

uint64_t Sampler::max_resident_bytes(pid_t pid) const {
    auto it = live_.find(pid);
    return it == live_.end() ? 0 : it->second.max_resident_bytes;
}

void Sampler::remove(pid_t pid) { live_.erase(pid); }

void Sampler::snapshot(int64_t min_gap_ns, std::optional<std::pair<pid_t, uint64_t>> floor) {
    const int64_t t = monotonic_ns();
    // A snapshot costs ~1.5 us a live process (12 ms at 10,000). Keep its
    // share of the tracer's time under ~10% whatever the tree's width.
    const int64_t gap = std::max(min_gap_ns, 10 * last_duration_ns_);
    if (live_.empty() || (gap > 0 && t - last_snapshot_ns_ < gap)) return;
    last_snapshot_ns_ = t;
    SnapshotSum sum;
    for (auto& [pid, proc] : live_) {
        if (auto s = procfs::read_statm(pid)) {
            proc.max_resident_bytes = std::max(proc.max_resident_bytes, s->resident_bytes);
            if (floor && floor->first == pid) {
                SampledProcess floored = proc;
                floored.private_floor_bytes = floor->second;
                sum.add(floored, *s);
            } else {
                sum.add(proc, *s);
            }
        }
    }
    SnapshotTotal total = std::move(sum).finish();
    last_duration_ns_ = monotonic_ns() - t;
    peak_bytes_ = std::max(peak_bytes_, total.total_bytes);
    append_bounded(timeline_, TimelinePoint{t - start_ns_, total.total_bytes, std::move(total.top)}, max_points_);
}

}  // namespace max_rss
