#include <max_rss/report/svg.hpp>
#include <max_rss/util/text.hpp>
#include <max_rss/util/utf8.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace max_rss {

std::string html_escape(std::string_view raw) {
    // The page says charset=utf-8: bytes that are not UTF-8 become U+FFFD.
    const std::string text = to_valid_utf8(raw);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                // Control characters are not allowed in XML and mean nothing in a label.
                if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) out += '?';
                else out += c;
        }
    }
    return out;
}

namespace svg {

std::string px(double v) { return fmt::format("{:.1f}", v); }

Ticks nice_ticks(double max_value, int target_count, bool round_up) {
    if (!(max_value > 0)) max_value = 1;
    const double target = target_count;
    const double k0 = std::floor(std::log10(max_value / target));
    Ticks best;
    double best_n = 0;
    bool found = false;
    for (double k = k0 - 1; k <= k0 + 1; ++k) {
        for (double m : {1.0, 2.0, 2.5, 5.0}) {
            const double step = m * std::pow(10.0, k);
            const double n = round_up ? std::ceil(max_value / step - 1e-9) : std::floor(max_value / step + 1e-9);
            if (n < 2 || n > target * 1.5) continue;
            const double top = round_up ? n * step : max_value;
            // Least wasted room first, then the count nearest the target.
            bool better = !found || top < best.top - 1e-12 ||
                          (std::fabs(top - best.top) <= 1e-12 && std::fabs(n - target) < std::fabs(best_n - target));
            if (!better) continue;
            found = true;
            best.step = step;
            best.top = top;
            best_n = n;
        }
    }
    if (!found) {  // cannot happen for finite positive values; stay safe anyway
        best.step = max_value;
        best.top = max_value;
        best_n = 1;
    }
    for (int d = 0; d <= 12; ++d) {
        double scaled = best.step * std::pow(10.0, d);
        if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) {
            best.decimals = d;
            break;
        }
    }
    for (double i = 0; i <= best_n + 0.5; ++i) best.values.push_back(i * best.step);
    return best;
}

std::string seconds_label(double s) {
    if (s >= 100) return fmt::format("{:.0f}", s);
    if (s <= 0) return "0";
    return fmt::format("{:.3g}", s);
}

std::string tick_label(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }


double text_width(std::string_view text, double font_px) {
    const size_t chars = display_width(text);
    return static_cast<double>(chars) * font_px * 0.6;
}


Box label_box(double anchor_x, double baseline, bool end_anchored, double width) {
    double x0 = end_anchored ? anchor_x - width : anchor_x;
    return Box{x0, x0 + width, baseline - kLabelFontPx, baseline + 4, anchor_x, baseline, end_anchored};
}

}  // namespace svg
}  // namespace max_rss
