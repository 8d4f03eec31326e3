#include <max_rss/report/report.hpp>
#include <max_rss/report/words.hpp>

#include <max_rss/report/json_text.hpp>
#include <max_rss/util/utf8.hpp>

namespace max_rss {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json opt(OptionalBytes v) { return v ? json(*v) : json(nullptr); }

double seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

const char* origin_name(ImageOrigin o) {
    switch (o) {
        case ImageOrigin::Exec: return "exec";
        case ImageOrigin::Fork: return "fork";
        case ImageOrigin::SharedMm: return "shared-mm";
    }
    return "unknown";
}

// Messages for people (warnings): made valid, not carried exactly.
json warnings_to_json(const std::vector<Warning>& warnings) {
    json out = json::array();
    for (const Warning& w : warnings) out.push_back(to_valid_utf8(describe(w)));
    return out;
}

json exit_to_json(const ExitStatus& e) {
    json j{{"code", opt(e.code)}, {"signal", opt(e.signal)}};
    if (e.core_dumped) j["core_dumped"] = true;
    return j;
}

json breakdown_to_json(const MemoryBreakdown& b) {
    // The smaps fields are always present, null when smaps_rollup was not read.
    const SmapsBreakdown none;
    const SmapsBreakdown& s = b.smaps ? *b.smaps : none;
    return json{
        {"hwm_bytes", opt(b.hwm_bytes)},
        {"rss_bytes", opt(b.rss_bytes)},
        {"rss_anon_bytes", opt(b.rss_anon_bytes)},
        {"rss_file_bytes", opt(b.rss_file_bytes)},
        {"rss_shmem_bytes", opt(b.rss_shmem_bytes)},
        {"pss_bytes", opt(s.pss_bytes)},
        {"pss_anon_bytes", opt(s.pss_anon_bytes)},
        {"pss_file_bytes", opt(s.pss_file_bytes)},
        {"pss_shmem_bytes", opt(s.pss_shmem_bytes)},
        {"private_bytes", opt(s.private_bytes)},
        {"shared_bytes", opt(s.shared_bytes)},
        {"anonymous_bytes", opt(s.anonymous_bytes)},
        {"swap_bytes", opt(b.swap_bytes)},
        {"swap_pss_bytes", opt(s.swap_pss_bytes)},
    };
}

json image_to_json(const Image& img) {
    json j = json::object();
    // argv and exe are bytes: valid text, plus argv_base64/exe_base64 when not UTF-8.
    put_texts(j, "argv", img.program ? img.program->argv : std::vector<std::string>{});
    put_text(j, "exe", img.program ? img.program->exe : "");
    j["origin"] = origin_name(img.origin);
    j["peak_rss_bytes"] = img.peak_rss_bytes;
    j["hwm_bytes"] = opt(img.hwm_bytes);
    j["measured"] = img.measured;
    j["start_seconds"] = seconds(img.start_ns);
    j["end_seconds"] = seconds(img.end_ns);
    if (img.inherited_rss_bytes) j["inherited_rss_bytes"] = *img.inherited_rss_bytes;
    return j;
}

json point_to_json(const TimelinePoint& p) {
    json top = json::array();
    for (const auto& [index, bytes] : p.top) top.push_back(json::array({index, bytes}));
    return json{{"t", seconds(p.t_ns)}, {"total_bytes", p.total_bytes}, {"top", std::move(top)}};
}

}  // namespace

nlohmann::ordered_json process_to_json(const Process& p) {
    json images = json::array();
    for (const auto& img : p.images) images.push_back(image_to_json(img));
    json j{
        {"pid", p.pid},
        {"ppid", p.ppid},
        {"serial", p.serial},
        {"threads", p.threads},
        {"peak_rss_bytes", p.peak_rss_bytes},
        {"ru_maxrss_bytes", opt(p.ru_maxrss_bytes)},
        {"exit", exit_to_json(p.exit)},
        {"start_seconds", seconds(p.start_ns)},
        {"end_seconds", seconds(p.end_ns)},
        {"orphaned", p.orphaned},
        {"shares_mm_with", opt(p.shares_mm_with)},
        {"at_exit", breakdown_to_json(p.at_exit)},
        {"images", std::move(images)},
    };
    return j;
}

void write_report_json(std::ostream& out, const RunResult& r) {
    json head{
        {"schema_version", kReportSchemaVersion},
        {"kind", "run"},
        {"tool", {{"name", "max_rss"}, {"version", MAX_RSS_VERSION}}},
    };
    put_texts(head, "command", r.command);
    head["exit"] = exit_to_json(r.exit);
    head["wall_seconds"] = r.wall_seconds;
    head["peak"] = {{"tree_bytes", r.peak.tree_bytes},
                    {"method", peak_method_name(r.peak.method)},
                    {"exact", r.peak.method == PeakMethod::Exact},
                    {"upper_bound_bytes", opt(r.peak.upper_bound_bytes)},
                    {"inexact_reason", r.peak.method == PeakMethod::Exact ? json(nullptr)
                                                                          : json(inexact_reason_name(r.peak.inexact_reason))},
                    {"release_points", r.peak.release_points},
                    {"release_points_skipped", r.peak.release_points_skipped},
                    {"largest_process_bytes", r.peak.largest_process_bytes},
                    {"largest_pid", r.peak.largest_pid},
                    {"sampled_bytes", opt(r.peak.sampled_bytes)},
                    {"overlapping_peaks_bytes", r.peak.overlapping_peaks_bytes},
                    {"cgroup_bytes", opt(r.peak.cgroup_bytes)},
                    {"sum_of_process_peaks_bytes", r.peak.sum_of_process_peaks_bytes}};
    head["ru_maxrss_bytes"] = opt(r.ru_maxrss_bytes);
    head["backend"] = backend_name(r.backend);
    head["degraded"] = r.degraded;
    head["degraded_reason"] = r.degraded ? json(describe(r.degradation)) : json(nullptr);
    head["internal_error"] = r.internal_error ? json(to_valid_utf8(*r.internal_error)) : json(nullptr);
    head["warnings"] = warnings_to_json(r.warnings);
    head["process_count"] = r.processes.size();
    // Dump the head without its closing brace, then stream the timeline and
    // the processes one line each: a DOM of a 2,048-point timeline alone took
    // ~1 MB, the largest part of max_rss's own peak in a 10,000-process run.
    std::string text = head.dump(2);
    text.resize(text.size() - 2);  // drop "\n}"
    out << text << ",\n  \"timeline\": {\n    \"interval_seconds\": "
        << json(seconds(r.timeline.interval_ns)).dump() << ",\n    \"points\": [";
    for (size_t i = 0; i < r.timeline.points.size(); ++i)
        out << (i ? ",\n      " : "\n      ") << point_to_json(r.timeline.points[i]).dump();
    out << (r.timeline.points.empty() ? "]\n  },\n  \"processes\": [" : "\n    ]\n  },\n  \"processes\": [");
    for (size_t i = 0; i < r.processes.size(); ++i) {
        out << (i ? ",\n    " : "\n    ") << process_to_json(r.processes[i]).dump();
    }
    out << (r.processes.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace max_rss
