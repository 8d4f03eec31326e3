// Drawing helpers for the SVG charts of report/ (plot.cpp): text made safe
// for HTML, axes with round ticks, label extents without a browser. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace max_rss {

// Text made safe inside HTML or SVG content and quoted attribute values:
// & < > " ' become entities, other control characters '?', and bytes that are
// not UTF-8 U+FFFD (the page is UTF-8).
std::string html_escape(std::string_view text);

namespace svg {

// A coordinate for SVG: one decimal is finer than a pixel.
std::string px(double v);

// An axis from 0 to top with ticks at multiples of step.
struct Ticks {
    double step = 1;
    double top = 1;  // where the axis ends
    int decimals = 0;
    std::vector<double> values;
};

// Ticks at 1, 2, 2.5 or 5 times a power of ten, about target_count of them.
// With round_up the axis ends at the first tick at or above max_value (room
// above the data, as little as the steps allow); without, it ends at
// max_value itself (time axes fill the width).
Ticks nice_ticks(double max_value, int target_count, bool round_up = true);

// A time in seconds with three significant digits, never in exponent form.
std::string seconds_label(double s);
std::string tick_label(double value, int decimals);

// Label placement without a browser: text extents estimated from the
// character count (DejaVu Sans and Liberation Sans average ~0.6 em).
inline constexpr double kLabelFontPx = 12.5;
double text_width(std::string_view text, double font_px);

struct Box {
    double x0, x1, y0, y1;  // extent
    double anchor_x, baseline;
    bool end_anchored;

    [[nodiscard]] bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
    [[nodiscard]] Box moved_to_baseline(double b) const {
        Box m = *this;
        m.y0 += b - baseline;
        m.y1 += b - baseline;
        m.baseline = b;
        return m;
    }
};

Box label_box(double anchor_x, double baseline, bool end_anchored, double width);

}  // namespace svg
}  // namespace max_rss
