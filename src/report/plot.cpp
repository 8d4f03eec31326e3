#include <max_rss/report/console.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/report/labels.hpp>
#include <max_rss/report/plot.hpp>
#include <max_rss/report/plot_bands.hpp>
#include <max_rss/report/svg.hpp>
#include <max_rss/util/duration.hpp>
#include <max_rss/report/words.hpp>
#include <max_rss/util/size.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {


namespace {

std::string command_text(const std::vector<std::string>& argv) {
    return argv.empty() ? "(no command)" : shell_join(argv);
}

constexpr double KiB = 1024.0;
constexpr double MiB = 1024.0 * KiB;
constexpr double GiB = 1024.0 * MiB;
constexpr double TiB = 1024.0 * GiB;

// Okabe & Ito's palette, distinguishable with every common colour-vision
// deficiency; grey is kept for "other".
constexpr const char* PALETTE[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                   "#56B4E9", "#D55E00", "#F0E442"};
constexpr size_t MAX_BANDS = std::size(PALETTE);
constexpr const char* OTHER_COLOUR = "#B8B8B8";
constexpr const char* REST_COLOUR = "#E4E4E4";

// The page is laid out for a 1200 px wide window; the SVG scales down below that.
constexpr double SVG_W = 1160;
constexpr double SVG_H = 600;
constexpr double PLOT_X0 = 84, PLOT_X1 = 800;  // plot area, left to right
constexpr double PLOT_Y0 = 40, PLOT_Y1 = 540;  // plot area, top to bottom
constexpr double LEGEND_X = 832;
constexpr size_t MAX_BARS = 20;  // the too-short fallback lists this many processes

constexpr std::string_view STYLE = R"(
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif;
       margin: 16px 20px; color: #222; background: #fff; }
h1 { font-size: 17px; font-weight: normal; margin: 0 0 6px 0; overflow-wrap: anywhere; }
h1 code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-weight: bold; }
figure { margin: 0; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font-size: 12px; fill: #333; }
svg .axis-label { font-size: 13px; fill: #222; }
svg .legend-title { font-size: 13px; font-weight: bold; fill: #222; }
svg .legend-name { font-size: 13px; fill: #222; }
svg .legend-detail { font-size: 11.5px; fill: #555; }
svg .mark { font-size: 12.5px; fill: #111; paint-order: stroke; stroke: #fff; stroke-width: 4px;
            stroke-linejoin: round; }
svg .note { font-size: 14px; fill: #222; }
figcaption { font-size: 13.5px; line-height: 1.5; margin-top: 4px; color: #333; }
figcaption ul { margin: 2px 0 0 0; padding-left: 20px; color: #8a4b00; }
)";








std::string svg_open(double height, const std::string& label) {
    return fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "role=\"img\" aria-label=\"{2}\">\n",
        svg::px(SVG_W), svg::px(height), html_escape(label));
}

// The time axis at the bottom of the plot area, with vertical grid lines.
std::string x_axis(const svg::Ticks& ticks, double plot_x0, double plot_x1, double plot_y0, double plot_y1,
                   const std::string& label) {
    std::string s = "<g class=\"x-axis\">\n";
    auto x_of = [&](double v) { return plot_x0 + (plot_x1 - plot_x0) * v / ticks.top; };
    for (double v : ticks.values) {
        double x = x_of(v);
        s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e6e6e6\"/>\n", svg::px(x),
                         svg::px(plot_y0), svg::px(plot_y1));
        s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", svg::px(x),
                         svg::px(plot_y1), svg::px(plot_y1 + 5));
        s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", svg::px(x), svg::px(plot_y1 + 19),
                         svg::tick_label(v, ticks.decimals));
    }
    s += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#444\"/>\n", svg::px(plot_x0),
                     svg::px(plot_x1), svg::px(plot_y1));
    s += fmt::format("<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     svg::px((plot_x0 + plot_x1) / 2), svg::px(plot_y1 + 40), html_escape(label));
    return s + "</g>\n";
}

// The memory axis at the left of the plot area, with horizontal grid lines.
std::string y_axis(const svg::Ticks& ticks, const ByteUnit& unit) {
    std::string s = "<g class=\"y-axis\">\n";
    for (double v : ticks.values) {
        double y = PLOT_Y1 - (PLOT_Y1 - PLOT_Y0) * v / ticks.top;
        s += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#e6e6e6\"/>\n", svg::px(PLOT_X0),
                         svg::px(PLOT_X1), svg::px(y));
        s += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#444\"/>\n", svg::px(PLOT_X0 - 5),
                         svg::px(PLOT_X0), svg::px(y));
        s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", svg::px(PLOT_X0 - 8), svg::px(y + 4),
                         svg::tick_label(v, ticks.decimals));
    }
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", svg::px(PLOT_X0),
                     svg::px(PLOT_Y0), svg::px(PLOT_Y1));
    double cy = (PLOT_Y0 + PLOT_Y1) / 2;
    s += fmt::format(
        "<text class=\"axis-label\" x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">"
        "memory ({1})</text>\n",
        svg::px(cy), unit.name);
    return s + "</g>\n";
}

std::string tree_peak_text(const RunResult& r) {
    std::string s = "tree peak " + format_bytes(r.peak.tree_bytes);
    s += std::string(" (") + peak_method_name(r.peak.method) + ")";
    return s;
}

std::string caption(const RunResult& r, size_t points) {
    const size_t n = r.processes.size();
    std::string s = "<figcaption>";
    s += fmt::format("<b>{}</b>", html_escape(tree_peak_text(r)));
    s += " · ru_maxrss ";
    s += r.ru_maxrss_bytes ? "<b>" + html_escape(format_bytes(*r.ru_maxrss_bytes)) +
                                 "</b> (what GNU time reports: the largest single process waited for)"
                           : std::string("not available");
    s += fmt::format("<br>{} process{}", n, n == 1 ? "" : "es");
    if (r.timeline.interval_ns > 0)
        s += fmt::format(" · sampled every {} ({} point{})", html_escape(format_duration_ns(r.timeline.interval_ns)),
                         points, points == 1 ? "" : "s");
    else
        s += fmt::format(" · no periodic sampling (--interval 0): {} snapshot{} taken as processes exited", points,
                         points == 1 ? "" : "s");
    s += fmt::format(" · wall {:.3f} s", r.wall_seconds);
    if (r.exit.signal || (r.exit.code && *r.exit.code != 0)) s += " · " + describe_exit(r.exit);
    if (r.degraded || !r.warnings.empty()) {
        s += "<ul>";
        if (r.degraded) s += "<li>degraded run: ptrace was unavailable, figures are partial</li>";
        for (const auto& w : r.warnings) s += "<li>" + html_escape(describe(w)) + "</li>";
        s += "</ul>";
    }
    return s + "</figcaption>\n";
}


struct Band {
    std::string name;    // command, already shortened
    std::string detail;  // second legend line
    std::string tooltip;
    const char* colour;
    std::vector<double> bytes;  // per timeline point
};

// The legend's words and colours for each band of plot_bands().
std::vector<Band> bands_of(const RunResult& r, const PlotBands& split) {
    std::vector<const Program*> programs;
    for (const auto& p : r.processes) programs.push_back(main_program(p));
    const ProgramLabels labels(programs);
    std::vector<Band> bands;
    size_t colour = 0;
    for (const PlotBand& b : split.bands) {
        Band band;
        band.bytes.assign(b.bytes.begin(), b.bytes.end());
        const uint64_t most = *std::max_element(b.bytes.begin(), b.bytes.end());
        if (b.kind == PlotBand::Kind::Process) {
            const Process& p = r.processes[b.process];
            band.name = labels.label(main_program(p), 34);
            band.detail = fmt::format("pid {} · peak {}", p.pid, format_bytes(p.peak_rss_bytes));
            band.tooltip = fmt::format("{} (pid {}): peak {}", short_command(main_program(p), 200), p.pid,
                                       format_bytes(p.peak_rss_bytes));
            band.colour = PALETTE[colour++ % MAX_BANDS];
        } else if (b.kind == PlotBand::Kind::OtherProcesses) {
            band.name = fmt::format("{} other process{}", b.processes, b.processes == 1 ? "" : "es");
            band.detail = fmt::format("their own memory, at most {} at once", format_bytes(most));
            band.colour = OTHER_COLOUR;
        } else {
            band.name = split.rest_has_processes ? "shared pages, small processes" : "shared pages, counted once";
            band.detail = fmt::format("libraries, program files; at most {}", format_bytes(most));
            band.colour = REST_COLOUR;
        }
        if (band.tooltip.empty()) band.tooltip = band.name + ": " + band.detail;
        bands.push_back(std::move(band));
    }
    return bands;
}

// The stacked-area chart of the timeline (at least 2 points).
std::string timeline_svg(const RunResult& r) {
    const auto& points = r.timeline.points;
    const size_t n_points = points.size();
    const std::vector<Band> bands = bands_of(r, plot_bands(r, MAX_BANDS));
    std::vector<double> totals(n_points, 0);
    double max_stack = 0;
    size_t peak_point = 0;
    for (size_t i = 0; i < n_points; ++i) {
        double stack = 0;
        for (const auto& band : bands) stack += band.bytes[i];
        totals[i] = static_cast<double>(points[i].total_bytes);
        max_stack = std::max({max_stack, stack, totals[i]});
        if (points[i].total_bytes > points[peak_point].total_bytes) peak_point = i;
    }

    // Scales.
    const double tree_bytes = static_cast<double>(r.peak.tree_bytes);
    const double max_bytes = std::max(max_stack, tree_bytes);
    const ByteUnit unit = unit_for_bytes(max_bytes);
    // Headroom above the highest mark for the labels that sit over it.
    const svg::Ticks y_ticks = svg::nice_ticks(max_bytes * 1.06 / unit.bytes, 6);
    const double t_end_s = std::max(static_cast<double>(points.back().t_ns) / 1e9, r.wall_seconds);
    const svg::Ticks x_ticks = svg::nice_ticks(t_end_s > 0 ? t_end_s : 1e-3, 6, false);
    auto x_of = [&](int64_t t_ns) {
        return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (static_cast<double>(t_ns) / 1e9) / x_ticks.top;
    };
    auto y_of = [&](double bytes) { return PLOT_Y1 - (PLOT_Y1 - PLOT_Y0) * (bytes / unit.bytes) / y_ticks.top; };

    std::string s = svg_open(SVG_H, "memory of the process tree over time");
    s += x_axis(x_ticks, PLOT_X0, PLOT_X1, PLOT_Y0, PLOT_Y1, "time (s)");
    s += y_axis(y_ticks, unit);

    // Stacked areas: each band's polygon runs along its top edge forwards and
    // its bottom edge backwards.
    s += "<g class=\"bands\" stroke=\"#fff\" stroke-width=\"0.6\" stroke-linejoin=\"round\">\n";
    std::vector<double> base(n_points, 0);
    for (const auto& band : bands) {
        std::string poly;
        for (size_t i = 0; i < n_points; ++i)
            poly += svg::px(x_of(points[i].t_ns)) + "," + svg::px(y_of(base[i] + band.bytes[i])) + " ";
        for (size_t i = n_points; i-- > 0;) poly += svg::px(x_of(points[i].t_ns)) + "," + svg::px(y_of(base[i])) + " ";
        poly.pop_back();
        s += fmt::format("<polygon fill=\"{}\" fill-opacity=\"0.9\" points=\"{}\"><title>{}</title></polygon>\n",
                         band.colour, poly, html_escape(band.tooltip));
        for (size_t i = 0; i < n_points; ++i) base[i] += band.bytes[i];
    }
    s += "</g>\n";

    // The sampled total: the top of the stack, unless per-process figures
    // counted shared pages more than once.
    std::string line;
    for (size_t i = 0; i < n_points; ++i) line += svg::px(x_of(points[i].t_ns)) + "," + svg::px(y_of(totals[i])) + " ";
    line.pop_back();
    s += fmt::format(
        "<polyline class=\"total\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.4\" points=\"{}\"/>\n", line);

    // The sampled peak and the headline tree peak, each labelled; the labels
    // are kept apart by estimating their extents.
    const double peak_x = x_of(points[peak_point].t_ns);
    const double peak_y = y_of(totals[peak_point]);
    const bool peak_on_right = peak_x > (PLOT_X0 + PLOT_X1) / 2;
    const double peak_t_s = static_cast<double>(points[peak_point].t_ns) / 1e9;
    const std::string peak_label = fmt::format("sampled peak {} at {} s", format_bytes(points[peak_point].total_bytes),
                                               svg::seconds_label(peak_t_s));
    svg::Box peak_box = svg::label_box(peak_on_right ? peak_x - 10 : peak_x + 10, peak_y + 20, peak_on_right,
                             svg::text_width(peak_label, svg::kLabelFontPx));
    // Below the point unless that would run into the time axis.
    if (peak_box.y1 > PLOT_Y1 - 4) peak_box = peak_box.moved_to_baseline(peak_y - 10);
    if (r.peak.tree_bytes > 0) {
        const double y = y_of(tree_bytes);
        s += fmt::format(
            "<line class=\"tree-peak\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#000\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n",
            svg::px(PLOT_X0), svg::px(PLOT_X1), svg::px(y));
        // Above the line, at the end away from the sampled peak.
        const std::string text = tree_peak_text(r);
        const svg::Box box = svg::label_box(peak_on_right ? PLOT_X0 + 8 : PLOT_X1 - 8, std::max(y - 7, PLOT_Y0 - 10.0),
                                  !peak_on_right, svg::text_width(text, svg::kLabelFontPx));
        if (box.overlaps(peak_box)) {
            // Only when the sampled total reached the headline figure: put the
            // point's label above the point, else clear of the line's label.
            for (double baseline : {peak_y - 10, box.y1 + 6 + svg::kLabelFontPx, box.y0 - 10}) {
                const svg::Box moved = peak_box.moved_to_baseline(baseline);
                if (moved.y0 >= PLOT_Y0 - 20 && moved.y1 <= PLOT_Y1 - 4 && !moved.overlaps(box)) {
                    peak_box = moved;
                    break;
                }
            }
        }
        s += fmt::format("<text class=\"mark\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n", svg::px(box.anchor_x),
                         svg::px(box.baseline), box.end_anchored ? "end" : "start", html_escape(text));
    }
    s += fmt::format("<circle class=\"sampled-peak\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#fff\" stroke=\"#000\" "
                     "stroke-width=\"2\"/>\n",
                     svg::px(peak_x), svg::px(peak_y));
    s += fmt::format("<text class=\"mark\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n", svg::px(peak_box.anchor_x),
                     svg::px(peak_box.baseline), peak_box.end_anchored ? "end" : "start", html_escape(peak_label));

    // Legend, top to bottom in the order the bands are stacked.
    s += "<g class=\"legend\">\n";
    double ly = PLOT_Y0 + 4;
    s += fmt::format("<text class=\"legend-title\" x=\"{}\" y=\"{}\">Processes by sampled peak</text>\n",
                     svg::px(LEGEND_X), svg::px(ly));
    ly += 26;
    for (size_t b = bands.size(); b-- > 0;) {
        const Band& band = bands[b];
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"#666\" "
                         "stroke-width=\"0.5\"/>\n",
                         svg::px(LEGEND_X), svg::px(ly - 11), band.colour);
        s += fmt::format("<text class=\"legend-name\" x=\"{}\" y=\"{}\">{}</text>\n", svg::px(LEGEND_X + 22), svg::px(ly),
                         html_escape(band.name));
        s += fmt::format("<text class=\"legend-detail\" x=\"{}\" y=\"{}\">{}</text>\n", svg::px(LEGEND_X + 22),
                         svg::px(ly + 16), html_escape(band.detail));
        ly += 40;
    }
    ly += 4;
    s += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#000\" stroke-width=\"1.5\" "
                     "stroke-dasharray=\"7 4\"/>\n",
                     svg::px(LEGEND_X - 2), svg::px(LEGEND_X + 16), svg::px(ly - 4));
    s += fmt::format("<text class=\"legend-name\" x=\"{}\" y=\"{}\">tree peak (headline)</text>\n",
                     svg::px(LEGEND_X + 22), svg::px(ly));
    ly += 22;
    s += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#222\" stroke-width=\"1.4\"/>\n",
                     svg::px(LEGEND_X - 2), svg::px(LEGEND_X + 16), svg::px(ly - 4));
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"2\"/>\n",
                     svg::px(LEGEND_X + 7), svg::px(ly - 4));
    s += fmt::format("<text class=\"legend-name\" x=\"{}\" y=\"{}\">sampled total, its peak</text>\n",
                     svg::px(LEGEND_X + 22), svg::px(ly));
    s += "</g>\n";
    return s + "</svg>\n";
}

// The too-short fallback: one horizontal bar per process (largest first).
std::string bars_svg(const RunResult& r) {
    std::vector<const Process*> procs;
    for (const auto& p : r.processes) procs.push_back(&p);
    std::stable_sort(procs.begin(), procs.end(),
                     [](const Process* a, const Process* b) { return a->peak_rss_bytes > b->peak_rss_bytes; });
    const size_t hidden = procs.size() > MAX_BARS ? procs.size() - MAX_BARS : 0;
    procs.resize(procs.size() - hidden);

    constexpr double label_x = 330, bar_x0 = 342, bar_x1 = 1000, top = 66, pitch = 25;
    const double bars_y1 = top + pitch * static_cast<double>(std::max<size_t>(procs.size(), 1)) + 6;
    const double height = bars_y1 + 56 + (hidden ? 22 : 0);

    double max_bytes = static_cast<double>(r.peak.tree_bytes);
    for (const Process* p : procs) max_bytes = std::max(max_bytes, static_cast<double>(p->peak_rss_bytes));
    const ByteUnit unit = unit_for_bytes(max_bytes);
    const svg::Ticks ticks = svg::nice_ticks(max_bytes / unit.bytes, 7);
    auto x_of = [&](double bytes) { return bar_x0 + (bar_x1 - bar_x0) * (bytes / unit.bytes) / ticks.top; };

    const size_t n_points = r.timeline.points.size();
    std::vector<const Program*> programs;
    for (const Process* p : procs) programs.push_back(main_program(*p));
    const ProgramLabels labels(programs);
    std::string s = svg_open(height, "peak memory of each process");
    s += fmt::format(
        "<text class=\"note\" x=\"20\" y=\"24\">The run was too short to sample memory over time ({} sample{}): "
        "each bar is one process&#39;s own peak.</text>\n",
        n_points, n_points == 1 ? "" : "s");
    if (!procs.empty())
        s += x_axis(ticks, bar_x0, bar_x1, top - 8, bars_y1, fmt::format("peak memory ({})", unit.name));
    else
        s += fmt::format("<text class=\"note\" x=\"{}\" y=\"{}\">no process was recorded</text>\n", svg::px(bar_x0 + 10),
                         svg::px(top + 18));
    double y = top;
    for (size_t i = 0; i < procs.size(); ++i, y += pitch) {
        const Process& p = *procs[i];
        const double w = x_of(static_cast<double>(p.peak_rss_bytes)) - bar_x0;
        s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} (pid {})</text>\n", svg::px(label_x),
                         svg::px(y + 13), html_escape(labels.label(main_program(p), 36)), p.pid);
        s += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"17\" fill=\"{}\"><title>{}</title></rect>\n",
            svg::px(bar_x0), svg::px(y), svg::px(std::max(w, 0.0)), PALETTE[0],
            html_escape(fmt::format("{} (pid {}): peak {}", short_command(main_program(p), 200), p.pid,
                                    format_bytes(p.peak_rss_bytes))));
        s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", svg::px(bar_x0 + w + 6), svg::px(y + 13),
                         html_escape(format_bytes(p.peak_rss_bytes)));
    }
    if (r.peak.tree_bytes > 0) {
        const double x = x_of(static_cast<double>(r.peak.tree_bytes));
        s += fmt::format(
            "<line class=\"tree-peak\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>\n",
            svg::px(x), svg::px(top - 14), svg::px(bars_y1));
        const std::string text = tree_peak_text(r);
        // Ending at the line, unless that would run off the left.
        const bool end = x - svg::text_width(text, svg::kLabelFontPx) > 20;
        s += fmt::format("<text class=\"mark\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n",
                         svg::px(end ? x + 4 : x - 4), svg::px(top - 18), end ? "end" : "start", html_escape(text));
    }
    if (hidden)
        s += fmt::format("<text x=\"{}\" y=\"{}\">… and {} smaller process{} not shown</text>\n", svg::px(bar_x0),
                         svg::px(height - 8), hidden, hidden == 1 ? "" : "es");
    return s + "</svg>\n";
}

}  // namespace

std::string render_plot_html(const RunResult& result) {
    const std::string command = command_text(result.command);
    std::string s;
    s += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    s += "<meta name=\"generator\" content=\"max_rss\">\n";
    s += "<title>max_rss: " + html_escape(command) + "</title>\n";
    s += "<style>";
    s += STYLE;
    s += "</style>\n</head>\n<body>\n";
    s += fmt::format("<h1>Memory of <code title=\"{}\">{}</code></h1>\n", html_escape(command),
                     html_escape(truncate_to_width(command, 110)));
    s += "<figure>\n";
    s += result.timeline.points.size() >= 2 ? timeline_svg(result) : bars_svg(result);
    s += caption(result, result.timeline.points.size());
    s += "</figure>\n</body>\n</html>\n";
    return s;
}

}  // namespace max_rss
