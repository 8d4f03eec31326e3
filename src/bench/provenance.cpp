#include <max_rss/bench/provenance.hpp>

#include <fmt/format.h>

#include <sys/utsname.h>
#include <unistd.h>

namespace max_rss {

std::string iso8601_utc(std::time_t seconds) {
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

Provenance machine_provenance() {
    Provenance provenance;
    provenance.max_rss_version = MAX_RSS_VERSION;
    provenance.date = iso8601_utc(std::time(nullptr));
    struct utsname names {};
    if (::uname(&names) == 0) {
        provenance.kernel = fmt::format("{} {}", names.sysname, names.release);
        provenance.machine = names.machine;
    }
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    provenance.cpu_count = cpus > 0 ? static_cast<unsigned>(cpus) : 0;
    return provenance;
}

std::string describe_provenance(const Provenance& p) {
    const std::string runs = p.runs != 0 ? fmt::format("{} run{}", p.runs, p.runs == 1 ? "" : "s")
                                         : fmt::format("{} to {} runs", p.min_runs, p.max_runs);
    return fmt::format("max_rss {}, {}, {} {}, {} CPU{}, {}, {} warmup, {}", p.max_rss_version, p.date, p.kernel,
                       p.machine, p.cpu_count, p.cpu_count == 1 ? "" : "s", runs, p.warmup, p.backend);
}

}  // namespace max_rss
