#include <max_rss/report/plot.hpp>
#include <max_rss/report/plot_bands.hpp>
#include <max_rss/report/svg.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <vector>
#include "units.hpp"
#include "../e2e/helpers.hpp"

using namespace max_rss;

using max_rss::test::program;

namespace {


Process process(pid_t pid, pid_t ppid, std::vector<std::shared_ptr<const Program>> images,
                std::vector<uint64_t> peaks) {
    Process p;
    p.pid = pid;
    p.ppid = ppid;
    for (size_t i = 0; i < images.size(); ++i) {
        Image img;
        img.program = images[i];
        img.origin = i == 0 && ppid != 0 ? ImageOrigin::Fork : ImageOrigin::Exec;
        img.peak_rss_bytes = peaks[i];
        img.measured = true;
        p.images.push_back(img);
        p.peak_rss_bytes = std::max(p.peak_rss_bytes, peaks[i]);
    }
    p.exit.code = 0;
    return p;
}

// A shell whose command needs escaping, running a forked child that execs
// "touch", and two small helpers; sampled 5 times.
RunResult small_run() {
    RunResult r;
    r.command = {"sh", "-c", "echo \"<b>\" & touch 10 > 'out'"};
    r.wall_seconds = 0.5;
    r.ru_maxrss_bytes = 200 * MiB;
    auto sh = program({"sh", "-c", "echo \"<b>\" & touch 10 > 'out'"});
    r.processes.push_back(process(100, 0, {sh}, {2 * MiB}));
    r.processes.push_back(process(101, 100, {sh, program({"/usr/bin/touch", "10"})}, {1 * MiB, 200 * MiB}));
    r.processes.push_back(process(102, 100, {program({"cat"})}, {3 * MiB}));
    r.processes.push_back(process(103, 100, {program({"sed", "s/a/b/"})}, {4 * MiB}));
    r.peak.tree_bytes = 210 * MiB;
    r.peak.method = PeakMethod::LowerBound;
    r.peak.largest_pid = 101;
    r.peak.largest_process_bytes = 200 * MiB;
    r.timeline.interval_ns = 100'000'000;
    const uint64_t totals[] = {2, 60, 205, 120, 9};
    for (int i = 0; i < 5; ++i) {
        TimelinePoint pt;
        pt.t_ns = i * 100'000'000LL;
        pt.total_bytes = totals[i] * MiB;
        pt.top = {{0, 2 * MiB}};
        if (i >= 1 && i <= 3) pt.top.emplace_back(1, (totals[i] - 6) * MiB);
        if (i >= 1) pt.top.emplace_back(2, 3 * MiB);  // sed (index 3) is only ever in "other"
        r.timeline.points.push_back(pt);
    }
    return r;
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// The <svg>…</svg> part of the page.
std::string svg_of(const std::string& html) {
    size_t begin = html.find("<svg");
    size_t end = html.find("</svg>");
    REQUIRE(begin != std::string::npos);
    REQUIRE(end != std::string::npos);
    return html.substr(begin, end + 6 - begin);
}

// Checks that every tag in svg is closed in order (XML nesting), that no
// text contains a raw '<', and that every '&' starts an entity.
void require_well_formed(const std::string& svg) {
    std::vector<std::string> open;
    size_t i = 0;
    while (i < svg.size()) {
        if (svg[i] == '&') {
            static const std::regex entity("^&(amp|lt|gt|quot|#39);");
            std::string rest = svg.substr(i, 8);
            INFO("text near: " << svg.substr(i, 40));
            REQUIRE(std::regex_search(rest, entity));
        }
        if (svg[i] != '<') {
            ++i;
            continue;
        }
        size_t close = svg.find('>', i);
        REQUIRE(close != std::string::npos);
        std::string tag = svg.substr(i + 1, close - i - 1);
        INFO("tag: <" << tag << ">");
        REQUIRE(tag.find('<') == std::string::npos);
        if (tag[0] == '/') {
            REQUIRE(!open.empty());
            CHECK(open.back() == tag.substr(1));
            open.pop_back();
        } else if (tag.back() != '/') {
            open.push_back(tag.substr(0, tag.find_first_of(" \n")));
        }
        i = close + 1;
    }
    CHECK(open.empty());
}

}  // namespace

TEST_CASE("plot: a self-contained page with one well-formed svg", "[plot]") {
    const std::string html = render_plot_html(small_run());
    CHECK(html.rfind("<!DOCTYPE html>\n", 0) == 0);
    CHECK(html.find("</html>") != std::string::npos);
    CHECK(count(html, "<svg") == 1);
    CHECK(count(html, "</svg>") == 1);
    require_well_formed(svg_of(html));
    // Nothing to fetch and nothing to run.
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("href=") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("url(") == std::string::npos);
    CHECK(count(html, "http") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST_CASE("plot: the command is escaped in the title and the heading", "[plot]") {
    const std::string html = render_plot_html(small_run());
    const std::string escaped = "sh -c &#39;echo &quot;&lt;b&gt;&quot; &amp; touch 10 &gt; &#39;\\&#39;&#39;out&#39;\\&#39;&#39;&#39;";
    CHECK(html.find("<title>max_rss: " + escaped + "</title>") != std::string::npos);
    CHECK(count(html, escaped) >= 2);
    CHECK(html.find("<b>\"") == std::string::npos);
    CHECK(html.find("& touch") == std::string::npos);
}

TEST_CASE("plot: legend, peak marks and caption", "[plot]") {
    const std::string html = render_plot_html(small_run());
    // A band per process that was ever among the top ones, largest first;
    // sed never was, so it is part of "other".
    CHECK(count(html, "<polygon") == 4);
    CHECK(html.find(">touch 10</text>") != std::string::npos);
    CHECK(html.find("pid 101 · peak 200.0 MiB") != std::string::npos);
    CHECK(html.find(">cat</text>") != std::string::npos);
    CHECK(html.find("pid 102 · peak 3.0 MiB") != std::string::npos);
    CHECK(html.find("pid 100 · peak 2.0 MiB") != std::string::npos);
    // What no process was given: the shared pages, counted once, in a band of its own.
    CHECK(html.find(">shared pages, counted once</text>") != std::string::npos);
    CHECK(html.find("other process") == std::string::npos);
    CHECK(html.find("sed s/a/b/") == std::string::npos);
    // The band order bottom-up: touch (largest), then cat, then sh.
    CHECK(html.find("touch 10 (pid 101)") < html.find("cat (pid 102)"));
    CHECK(html.find("cat (pid 102)") < html.find("(pid 100)"));

    CHECK(html.find(">tree peak 210.0 MiB (lower-bound)</text>") != std::string::npos);
    CHECK(html.find("stroke-dasharray") != std::string::npos);
    CHECK(html.find(">sampled peak 205.0 MiB at 0.2 s</text>") != std::string::npos);
    CHECK(html.find("memory (MiB)") != std::string::npos);
    CHECK(html.find("time (s)") != std::string::npos);

    CHECK(html.find("<b>tree peak 210.0 MiB (lower-bound)</b>") != std::string::npos);
    CHECK(html.find("ru_maxrss <b>200.0 MiB</b> (what GNU time reports: the largest single process waited for)") !=
          std::string::npos);
    CHECK(html.find("4 processes") != std::string::npos);
    CHECK(html.find("sampled every 100 ms (5 points)") != std::string::npos);
}

TEST_CASE("plot: nice ticks on both axes", "[plot]") {
    const std::string html = render_plot_html(small_run());
    // 0.5 s of run in steps of 0.1 s; 210 MiB * 1.06 (room for the label)
    // rounds up to a 225 MiB axis in steps of 25.
    for (const char* tick : {">0.0</text>", ">0.1</text>", ">0.5</text>"}) CHECK(html.find(tick) != std::string::npos);
    for (const char* tick : {">0</text>", ">25</text>", ">200</text>", ">225</text>"})
        CHECK(html.find(tick) != std::string::npos);
    CHECK(html.find(">250</text>") == std::string::npos);
    CHECK(html.find(">0.6</text>") == std::string::npos);
}

TEST_CASE("plot: at most 7 process bands, the rest as other", "[plot]") {
    RunResult r;
    r.command = {"fan_out"};
    r.peak.tree_bytes = 100 * MiB;
    for (pid_t i = 0; i < 10; ++i)
        r.processes.push_back(process(200 + i, i ? 200 : 0, {program({"w" + std::to_string(i)})}, {(i + 1) * MiB}));
    for (int t = 0; t < 3; ++t) {
        TimelinePoint pt;
        pt.t_ns = t * 1'000'000'000LL;
        pt.total_bytes = 60 * MiB;
        for (uint32_t i = 0; i < 10; ++i) pt.top.emplace_back(i, (i + 1) * MiB);
        pt.top.emplace_back(999, 5 * MiB);  // an index out of range is ignored
        r.timeline.points.push_back(pt);
    }
    const std::string html = render_plot_html(r);
    require_well_formed(svg_of(html));
    CHECK(count(html, "<polygon") == 9);
    CHECK(html.find(">w9</text>") != std::string::npos);
    CHECK(html.find(">w3</text>") != std::string::npos);
    CHECK(html.find(">w2</text>") == std::string::npos);
    // The other processes' own memory (1 + 2 + 3 MiB), apart from the rest of
    // the total: 60 - 55 MiB, where points named as many as they could.
    CHECK(html.find(">3 other processes</text>") != std::string::npos);
    CHECK(html.find("their own memory, at most 6.0 MiB at once") != std::string::npos);
    CHECK(html.find(">shared pages, small processes</text>") != std::string::npos);
    CHECK(html.find("libraries, program files; at most 5.0 MiB") != std::string::npos);
    // Colour-blind-safe palette, greys for the rest.
    for (const char* colour : {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#B8B8B8",
                               "#E4E4E4"})
        CHECK(html.find(colour) != std::string::npos);
}

TEST_CASE("plot: bands add up to each point's total, each process only its own", "[plot]") {
    const RunResult r = small_run();
    const PlotBands split = plot_bands(r, 2);
    // touch and cat get bands; sh (index 0) is another process; the rest is what nobody was given.
    REQUIRE(split.bands.size() == 4);
    CHECK(split.bands[0].process == 1);
    CHECK(split.bands[1].process == 2);
    CHECK(split.bands[2].kind == PlotBand::Kind::OtherProcesses);
    CHECK(split.bands[2].processes == 1);
    CHECK(split.bands[3].kind == PlotBand::Kind::Rest);
    CHECK_FALSE(split.rest_has_processes);
    for (size_t i = 0; i < r.timeline.points.size(); ++i) {
        uint64_t sum = 0;
        for (const auto& band : split.bands) sum += band.bytes[i];
        CHECK(sum == r.timeline.points[i].total_bytes);
    }
    CHECK(split.bands[0].bytes[2] == 199 * MiB);
    CHECK(split.bands[3].bytes[2] == 1 * MiB);
}

TEST_CASE("plot: legend labels keep the argument that tells processes apart", "[plot]") {
    RunResult r = small_run();
    const std::vector<std::string> cc1 = {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet", "-imultiarch",
                                          "x86_64-linux-gnu"};
    for (const char* file : {"alpha.c", "beta.c"}) {
        std::vector<std::string> argv = cc1;
        argv.insert(argv.end(), {file, "-O2"});
        r.processes.push_back(process(static_cast<pid_t>(200 + r.processes.size()), 100, {program(argv)}, {30 * MiB}));
        r.timeline.points[2].top.emplace_back(static_cast<uint32_t>(r.processes.size() - 1), 1 * MiB);
    }
    const std::string html = render_plot_html(r);
    CHECK(html.find(">cc1 … alpha.c</text>") != std::string::npos);
    CHECK(html.find(">cc1 … beta.c</text>") != std::string::npos);
}

TEST_CASE("plot: --interval 0 is said as such", "[plot]") {
    RunResult r = small_run();
    r.timeline.interval_ns = 0;
    const std::string html = render_plot_html(r);
    CHECK(html.find("no periodic sampling (--interval 0): 5 snapshots taken as processes exited") != std::string::npos);
    CHECK(html.find("unknown") == std::string::npos);
}

TEST_CASE("plot: GiB for peaks of a GiB or more", "[plot]") {
    RunResult r = small_run();
    r.peak.tree_bytes = 3 * 1024 * MiB;
    const std::string html = render_plot_html(r);
    CHECK(html.find("memory (GiB)") != std::string::npos);
    CHECK(html.find(">tree peak 3.0 GiB (lower-bound)</text>") != std::string::npos);
}

TEST_CASE("plot: a run too short to sample gets a bar per process", "[plot]") {
    RunResult r = small_run();
    r.timeline.points.resize(1);
    const std::string html = render_plot_html(r);
    require_well_formed(svg_of(html));
    CHECK(html.find("too short to sample") != std::string::npos);
    CHECK(count(html, "<rect") == 4);
    CHECK(count(html, "<polygon") == 0);
    CHECK(html.find(">touch 10 (pid 101)</text>") != std::string::npos);
    CHECK(html.find(">sed s/a/b/ (pid 103)</text>") != std::string::npos);
    CHECK(html.find(">200.0 MiB</text>") != std::string::npos);
    CHECK(html.find(">tree peak 210.0 MiB (lower-bound)</text>") != std::string::npos);
    CHECK(html.find("peak memory (MiB)") != std::string::npos);
    // Largest first.
    CHECK(html.find("touch 10 (pid 101)") < html.find("sed s/a/b/ (pid 103)"));
}

TEST_CASE("plot: an empty result still renders", "[plot]") {
    const std::string html = render_plot_html(RunResult{});
    require_well_formed(svg_of(html));
    CHECK(html.find("no process was recorded") != std::string::npos);
    CHECK(html.find("0 processes") != std::string::npos);
}

TEST_CASE("html_escape", "[plot]") {
    CHECK(html_escape("a<b>&\"c'd") == "a&lt;b&gt;&amp;&quot;c&#39;d");
    CHECK(html_escape("tab\there\x01\x7f") == "tab\there??");
    CHECK(html_escape("ünï → ok") == "ünï → ok");
}
