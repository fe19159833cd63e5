#include "labs/10_attention_backward/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "common/programs/png_image.h"

namespace mha {
namespace charts {
void loss_curves(const std::string& path, const std::string& title, const std::string& subtitle,
                 const std::string& y_label, const std::vector<Curve>& curves) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  std::size_t steps = 0;
  for (const Curve& c : curves) {
    steps = std::max(steps, c.y.size());
    for (double v : c.y) {
      if (v > 0 && std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  if (steps < 2 || !(hi > 0)) throw std::runtime_error("loss_curves: nothing to draw");
  // Whole decades on the log axis.
  const double d_lo = std::floor(std::log10(lo)), d_hi = std::ceil(std::log10(hi));
  const double decades = std::max(1.0, d_hi - d_lo);

  const int W = 760, H = 460, left = 70, right = 20, top = 56, bottom = 56;
  const int legend_h = 16 * static_cast<int>(curves.size());
  Canvas c(W, H + legend_h);
  const int pw = W - left - right, ph = H - top - bottom;
  c.draw_text(left, 10, title, kBlack, 2);
  c.draw_text(left, 32, subtitle, kGrey);
  auto y_px = [&](double v) {
    const double f = (std::log10(v) - d_lo) / decades;
    return top + ph - static_cast<int>(std::lround(f * ph));
  };
  auto x_px = [&](double i) {
    return left + static_cast<int>(std::lround(i / double(steps - 1) * pw));
  };
  // Grid: a labelled line at each decade, faint ones at 2..9 times it.
  for (double d = d_lo; d <= d_lo + decades + 1e-9; d += 1.0) {
    const double base = std::pow(10.0, d);
    const int y = y_px(base);
    c.draw_line(left, y, left + pw, y, kLightGrey);
    const std::string label = format_number(base);
    c.draw_text(left - 6 - Canvas::text_width(label), y - 3, label, kBlack);
    if (d < d_lo + decades - 1e-9) {
      for (int m = 2; m <= 9; ++m) {
        const int ym = y_px(base * m);
        for (int x = left; x <= left + pw; x += 4) c.set_pixel(x, ym, kLightGrey);
      }
    }
  }
  const double x_step = nice_step(double(steps - 1));
  for (double s = 0; s <= steps - 1 + 1e-9; s += x_step) {
    const int x = x_px(s);
    c.draw_line(x, top + ph, x, top + ph + 4, kGrey);
    const std::string label = format_number(s);
    c.draw_text(x - Canvas::text_width(label) / 2, top + ph + 8, label, kBlack);
  }
  c.draw_rect(left, top, pw + 1, ph + 1, kGrey);
  c.draw_text(left + pw / 2 - Canvas::text_width("step") / 2, top + ph + 24, "step", kBlack);
  c.draw_text_up(16, top + ph / 2 + Canvas::text_width(y_label) / 2, y_label, kBlack);

  for (std::size_t s = 0; s < curves.size(); ++s) {
    const Rgb colour = series_colour(s);
    const auto& ys = curves[s].y;
    int px = -1, py = -1;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      if (!(ys[i] > 0) || !std::isfinite(ys[i])) continue;
      const int cx = x_px(double(i)), cy = y_px(ys[i]);
      if (px >= 0) c.draw_thick_line(px, py, cx, cy, colour, 2);
      px = cx;
      py = cy;
    }
    draw_legend_entry(c, left, H + 16 * static_cast<int>(s) - 6, colour, curves[s].label);
  }
  c.save_png(path);
}

void bar_groups(const std::string& path, const std::string& title, const std::string& subtitle,
                const std::string& x_label, const std::vector<BarGroup>& groups) {
  int label_w = 0, note_w = 0, bars = 0;
  for (const BarGroup& g : groups) {
    for (const Bar& b : g.bars) {
      label_w = std::max(label_w, Canvas::text_width(b.label));
      note_w = std::max(note_w, Canvas::text_width(b.note));
      ++bars;
    }
  }
  if (bars == 0) throw std::runtime_error("bar_groups: nothing to draw");
  const int bar_h = 18, gap = 6, group_head = 30, axis_h = 44, top = 50;
  const int left = label_w + 24, right = note_w + 24, W = std::max(760, left + 420 + right);
  const int pw = W - left - right;
  const int H = top + static_cast<int>(groups.size()) * (group_head + axis_h + 12) +
                bars * (bar_h + gap) + 10;
  Canvas c(W, H);
  c.draw_text(10, 10, title, kBlack, 2);
  c.draw_text(10, 32, subtitle, kGrey);

  int y = top;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const BarGroup& g = groups[gi];
    // Each group has its own scale: the models' losses differ by orders of magnitude.
    double v_min = 0.0, v_max = 0.0;
    for (const Bar& b : g.bars) {
      v_min = std::min(v_min, b.value);
      v_max = std::max(v_max, b.value);
    }
    if (v_max <= v_min) v_max = v_min + 1.0;
    const double step = nice_step(v_max - v_min);
    const double lo = step * std::floor(v_min / step), hi = step * std::ceil(v_max / step);
    auto x_px = [&](double v) {
      return left + static_cast<int>(std::lround((v - lo) / (hi - lo) * pw));
    };
    y += 12;
    c.draw_text(10, y, g.title, kBlack);
    y += group_head - 12;
    const int group_top = y;
    const int axis_y = group_top + static_cast<int>(g.bars.size()) * (bar_h + gap);
    for (double t = lo; t <= hi + step / 2; t += step) {
      const int x = x_px(t);
      c.draw_line(x, group_top, x, axis_y, kLightGrey);
      const std::string label = format_number(std::fabs(t) < step * 1e-6 ? 0.0 : t);
      c.draw_text(x - Canvas::text_width(label) / 2, axis_y + 6, label, kBlack);
    }
    c.draw_text(left + pw / 2 - Canvas::text_width(x_label) / 2, axis_y + 22, x_label, kGrey);
    const Rgb colour = series_colour(gi);
    for (const Bar& b : g.bars) {
      c.draw_text(left - 10 - Canvas::text_width(b.label), y + bar_h / 2 - 3, b.label, kBlack);
      const int x0 = x_px(0.0), x1 = x_px(b.value);
      const int a = std::min(x0, x1), w = std::max(1, std::abs(x1 - x0));
      c.fill_rect(a, y, w, bar_h, colour);
      c.draw_text(std::max(x0, x1) + 6, y + bar_h / 2 - 3, b.note, kBlack);
      y += bar_h + gap;
    }
    c.draw_line(x_px(0.0), group_top, x_px(0.0), axis_y, kGrey);
    y = axis_y + axis_h;
  }
  c.save_png(path);
}

}  // namespace charts
}  // namespace mha
