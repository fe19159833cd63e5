// Draws the two benchmark charts of docs/PERFORMANCE.md as PNG images, with
// common/programs/png_image.h (no plotting library). `./lab bench` runs it on CSV
// files it extracts from Google Benchmark's JSON:
//
//   plot lines TITLE XLABEL YLABEL IN.csv OUT.png
//       IN.csv rows: series,x,y      one line per series, x drawn as evenly
//                                    spaced categories in file order
//   plot bars TITLE XLABEL IN.csv OUT.png
//       IN.csv rows: label,value,note   one horizontal bar per row, the note
//                                       written after the bar
//
// Lines starting with '#' are ignored. Exits 1 with a message on bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/programs/png_image.h"

namespace mha {
namespace {

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  if (rows.empty()) throw std::runtime_error(path + " has no data rows");
  return rows;
}

void draw_filled_square(Canvas& c, int x, int y, int half, Rgb colour) {
  c.fill_rect(x - half, y - half, 2 * half + 1, 2 * half + 1, colour);
}

void plot_lines(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                const std::string& in, const std::string& out) {
  // series -> [(x label, y)] in file order; x categories in first-seen order.
  std::vector<std::string> series_order, xs;
  std::map<std::string, std::vector<std::pair<std::string, double>>> series;
  double y_max = 0;
  for (const auto& row : read_csv(in)) {
    if (row.size() < 3) throw std::runtime_error("lines: want series,x,y in " + in);
    if (!series.count(row[0])) series_order.push_back(row[0]);
    if (std::find(xs.begin(), xs.end(), row[1]) == xs.end()) xs.push_back(row[1]);
    const double y = std::stod(row[2]);
    series[row[0]].push_back({row[1], y});
    y_max = std::max(y_max, y);
  }
  const int W = 720, H = 440, left = 70, right = 20, top = 40, bottom = 60;
  const int legend_h = 14 * static_cast<int>(series_order.size());
  Canvas c(W, H + legend_h);
  const int pw = W - left - right, ph = H - top - bottom;
  c.draw_text(left, 12, title, kBlack, 2);

  const double step = nice_step(y_max > 0 ? y_max : 1);
  const double y_top = step * std::ceil(y_max / step);
  auto y_px = [&](double y) { return top + ph - static_cast<int>(std::lround(y / y_top * ph)); };
  auto x_px = [&](std::size_t i) {
    return left + static_cast<int>((i + 0.5) * pw / static_cast<double>(xs.size()));
  };
  for (double t = 0; t <= y_top + step / 2; t += step) {
    const int y = y_px(t);
    c.draw_line(left, y, left + pw, y, kLightGrey);
    const std::string label = format_number(t);
    c.draw_text(left - 6 - Canvas::text_width(label), y - 3, label, kBlack);
  }
  c.draw_rect(left, top, pw + 1, ph + 1, kGrey);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    c.draw_text(x_px(i) - Canvas::text_width(xs[i]) / 2, top + ph + 8, xs[i], kBlack);
  }
  c.draw_text(left + pw / 2 - Canvas::text_width(xlabel) / 2, top + ph + 26, xlabel, kBlack);
  c.draw_text_up(16, top + ph / 2 + Canvas::text_width(ylabel) / 2, ylabel, kBlack);

  for (std::size_t s = 0; s < series_order.size(); ++s) {
    const Rgb colour = series_colour(s);
    const auto& pts = series[series_order[s]];
    int px = -1, py = -1;
    for (const auto& [x, y] : pts) {
      const std::size_t i = std::find(xs.begin(), xs.end(), x) - xs.begin();
      const int cx = x_px(i), cy = y_px(y);
      if (px >= 0) c.draw_thick_line(px, py, cx, cy, colour, 3);
      draw_filled_square(c, cx, cy, 3, colour);
      px = cx;
      py = cy;
    }
    draw_legend_entry(c, left, H + 14 * static_cast<int>(s) - 8, colour, series_order[s]);
  }
  c.save_png(out);
}

void plot_bars(const std::string& title, const std::string& xlabel, const std::string& in,
               const std::string& out) {
  struct Bar {
    std::string label, note;
    double value;
  };
  std::vector<Bar> bars;
  double v_max = 0;
  int label_w = 0;
  for (const auto& row : read_csv(in)) {
    if (row.size() < 2) throw std::runtime_error("bars: want label,value[,note] in " + in);
    bars.push_back({row[0], row.size() > 2 ? row[2] : "", std::stod(row[1])});
    v_max = std::max(v_max, bars.back().value);
    label_w = std::max(label_w, Canvas::text_width(row[0]));
  }
  const int bar_h = 22, gap = 10, top = 44, right = 190;
  const int left = label_w + 20, W = 720;
  const int H = top + static_cast<int>(bars.size()) * (bar_h + gap) + 50;
  Canvas c(W, H);
  c.draw_text(10, 12, title, kBlack, 2);
  const int pw = W - left - right;
  const double step = nice_step(v_max > 0 ? v_max : 1);
  const double v_top = step * std::ceil(v_max / step);
  auto x_px = [&](double v) { return left + static_cast<int>(std::lround(v / v_top * pw)); };
  const int axis_y = top + static_cast<int>(bars.size()) * (bar_h + gap);
  for (double t = 0; t <= v_top + step / 2; t += step) {
    const int x = x_px(t);
    c.draw_line(x, top - 4, x, axis_y, kLightGrey);
    const std::string label = format_number(t);
    c.draw_text(x - Canvas::text_width(label) / 2, axis_y + 6, label, kBlack);
  }
  c.draw_text(left + pw / 2 - Canvas::text_width(xlabel) / 2, axis_y + 24, xlabel, kBlack);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const int y = top + static_cast<int>(i) * (bar_h + gap);
    const Rgb colour = series_colour(i);
    c.draw_text(left - 10 - Canvas::text_width(bars[i].label), y + bar_h / 2 - 3,
                bars[i].label, kBlack);
    const int w = std::max(1, x_px(bars[i].value) - left);
    c.fill_rect(left, y, w, bar_h, colour);
    c.draw_text(left + w + 6, y + bar_h / 2 - 3, bars[i].note, kBlack);
  }
  c.draw_line(left, top - 4, left, axis_y, kGrey);
  c.save_png(out);
}

}  // namespace
}  // namespace mha

int main(int argc, char** argv) {
  try {
    const std::string kind = argc > 1 ? argv[1] : "";
    if (kind == "lines" && argc == 7) {
      mha::plot_lines(argv[2], argv[3], argv[4], argv[5], argv[6]);
    } else if (kind == "bars" && argc == 6) {
      mha::plot_bars(argv[2], argv[3], argv[4], argv[5]);
    } else {
      std::fprintf(stderr,
                   "usage: plot lines TITLE XLABEL YLABEL IN.csv OUT.png\n"
                   "       plot bars TITLE XLABEL IN.csv OUT.png\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plot: %s\n", e.what());
    return 1;
  }
  return 0;
}
