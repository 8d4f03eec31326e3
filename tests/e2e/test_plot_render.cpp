// The plot page rendered by a real browser: headless Chromium screenshots it,
// and the PNG must have the window's size and clearly more in it than a blank
// page screenshotted the same way.
#include "temp_dir.hpp"

#include <max_rss/report/plot.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>
#include "units.hpp"

namespace fs = std::filesystem;
using namespace max_rss;

namespace {

constexpr const char* CHROMIUM = "/usr/bin/chromium";
constexpr int WIDTH = 1200, HEIGHT = 800;

std::shared_ptr<const Program> render_program(std::vector<std::string> argv) {
    auto p = std::make_shared<Program>();
    p->argv = std::move(argv);
    p->exe = "/usr/bin/" + p->argv[0];
    return p;
}

Process render_process(pid_t pid, pid_t ppid, std::shared_ptr<const Program> prog, uint64_t peak) {
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    p.serial = static_cast<uint64_t>(pid);
    p.peak_rss_bytes = peak;
    Image img;
    img.program = std::move(prog);
    img.peak_rss_bytes = peak;
    img.measured = true;
    p.images.push_back(img);
    p.exit.code = 0;
    return p;
}

// A build-like run: make, three compilers overlapping in time, a linker at
// the end, and a dozen tiny shells; sampled every 10 ms for 3 s.
RunResult build_like_run() {
    RunResult r;
    r.command = {"make", "-j4", "CFLAGS=-O2 -g", "<all> & 'more'"};
    r.wall_seconds = 3.02;
    r.ru_maxrss_bytes = 420 * MiB;
    r.exit.code = 0;
    r.processes.push_back(render_process(4000, 0, render_program({"make", "-j4"}), 6 * MiB));
    r.processes.push_back(render_process(4001, 4000, render_program({"cc1plus", "-O2", "parser.cpp"}), 420 * MiB));
    r.processes.push_back(render_process(4002, 4000, render_program({"cc1plus", "-O2", "lexer.cpp"}), 260 * MiB));
    r.processes.push_back(render_process(4003, 4000, render_program({"cc1plus", "-O2", "main.cpp"}), 180 * MiB));
    r.processes.push_back(render_process(4004, 4000, render_program({"ld", "-o", "app", "parser.o", "lexer.o"}), 300 * MiB));
    for (pid_t i = 0; i < 12; ++i)
        r.processes.push_back(render_process(4010 + i, 4000, render_program({"sh", "-c", "echo done"}), 2 * MiB));
    r.peak.tree_bytes = 800 * MiB;
    r.peak.method = PeakMethod::LowerBound;
    r.peak.largest_process_bytes = 420 * MiB;
    r.peak.largest_pid = 4001;
    r.timeline.interval_ns = 10'000'000;

    auto bump = [](double t, double start, double end, double peak) {
        if (t < start || t > end) return 0.0;
        double x = (t - start) / (end - start);
        return peak * std::min(1.0, 1.6 * x) * (x > 0.9 ? (1 - x) * 10 : 1);
    };
    for (int i = 0; i <= 300; ++i) {
        double t = i * 0.01;
        TimelinePoint pt;
        pt.t_ns = static_cast<int64_t>(i) * 10'000'000;
        std::vector<std::pair<uint32_t, double>> parts = {
            {0, 6.0 * MiB},
            {1, bump(t, 0.1, 2.0, 410.0 * MiB)},
            {2, bump(t, 0.15, 1.4, 255.0 * MiB)},
            {3, bump(t, 0.8, 2.2, 175.0 * MiB)},
            {4, bump(t, 2.2, 2.95, 290.0 * MiB)},
        };
        double shells = 0;
        for (int k = 0; k < 12; ++k) shells += bump(t, 0.05 + 0.22 * k, 0.2 + 0.22 * k, 2.0 * MiB);
        uint64_t total = static_cast<uint64_t>(shells);
        for (const auto& [index, bytes] : parts) {
            if (bytes <= 0) continue;
            pt.top.emplace_back(index, static_cast<uint64_t>(bytes));
            total += static_cast<uint64_t>(bytes);
        }
        pt.total_bytes = total;
        r.timeline.points.push_back(pt);
    }
    return r;
}

std::string read_binary(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

uint32_t be32(const std::string& s, size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
           (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

using max_rss::test::TempDir;

// Screenshots html_path with headless Chromium into png_path; returns its
// exit status. Chromium's own chatter goes to log_path.
int screenshot(const fs::path& html_path, const fs::path& png_path, const fs::path& profile,
               const fs::path& log_path) {
    std::string cmd = std::string("timeout 90 ") + CHROMIUM +
                      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                      " --disable-background-networking --disable-component-update --disable-sync"
                      " --hide-scrollbars --user-data-dir='" +
                      profile.string() + "' --window-size=" + std::to_string(WIDTH) + "," + std::to_string(HEIGHT) +
                      " --screenshot='" + png_path.string() + "' 'file://" + html_path.string() + "' >'" +
                      log_path.string() + "' 2>&1";
    return std::system(cmd.c_str());
}

struct Png {
    std::string bytes;
    uint32_t width = 0, height = 0;
};

Png render(const TempDir& dir, const std::string& name, const std::string& html) {
    const fs::path html_path = dir.path / (name + ".html");
    const fs::path png_path = dir.path / (name + ".png");
    const fs::path log_path = dir.path / (name + ".log");
    {
        std::ofstream out(html_path, std::ios::binary);
        out << html;
        REQUIRE(out.good());
    }
    const int status = screenshot(html_path, png_path, dir.path / (name + "-profile"), log_path);
    INFO("chromium log:\n" << read_binary(log_path));
    REQUIRE(status == 0);
    REQUIRE(fs::exists(png_path));
    Png png;
    png.bytes = read_binary(png_path);
    // Signature, then the IHDR chunk: length, "IHDR", width, height.
    REQUIRE(png.bytes.size() > 33);
    REQUIRE(png.bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    REQUIRE(png.bytes.compare(12, 4, "IHDR") == 0);
    png.width = be32(png.bytes, 16);
    png.height = be32(png.bytes, 20);
    if (const char* keep = std::getenv("MAX_RSS_KEEP_PLOT")) {
        // For looking at the picture: MAX_RSS_KEEP_PLOT=/some/dir
        std::error_code ignored;
        fs::copy_file(png_path, fs::path(keep) / (name + ".png"), fs::copy_options::overwrite_existing, ignored);
        fs::copy_file(html_path, fs::path(keep) / (name + ".html"), fs::copy_options::overwrite_existing, ignored);
    }
    return png;
}

void require_chromium() {
    if (::access(CHROMIUM, X_OK) != 0)
        FAIL(CHROMIUM << " is not installed: the plot rendering test needs it "
                         "(apt-get install -y chromium)");
}

}  // namespace

TEST_CASE("plot: headless Chromium renders the timeline page", "[plot_render]") {
    require_chromium();
    TempDir dir;
    const Png blank = render(dir, "blank", "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>");
    const Png plot = render(dir, "timeline", render_plot_html(build_like_run()));

    CHECK(blank.width == WIDTH);
    CHECK(blank.height == HEIGHT);
    CHECK(plot.width == WIDTH);
    CHECK(plot.height == HEIGHT);
    // A blank page compresses to a few KB; areas, text and lines to far more.
    INFO("blank page PNG: " << blank.bytes.size() << " bytes, plot PNG: " << plot.bytes.size() << " bytes");
    CHECK(plot.bytes.size() > 5 * blank.bytes.size());
    CHECK(plot.bytes.size() > 20000);
}

TEST_CASE("plot: headless Chromium renders the too-short bar chart", "[plot_render]") {
    require_chromium();
    RunResult r = build_like_run();
    r.timeline.points.resize(1);
    TempDir dir;
    const Png blank = render(dir, "blank", "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>");
    const Png bars = render(dir, "bars", render_plot_html(r));
    CHECK(bars.width == WIDTH);
    CHECK(bars.height == HEIGHT);
    INFO("blank page PNG: " << blank.bytes.size() << " bytes, bars PNG: " << bars.bytes.size() << " bytes");
    CHECK(bars.bytes.size() > 5 * blank.bytes.size());
    CHECK(bars.bytes.size() > 15000);
}
