// The two charts of lab 10's programs, drawn on common/programs/png_image.h's Canvas
// in the style of bench/plot.cc (in the instructors' repository): loss
// curves (heads_sweep) and bars of the loss increase per ablated head
// (ablate_heads).
#ifndef MHA_LABS_10_ATTENTION_BACKWARD_CHARTS_H_
#define MHA_LABS_10_ATTENTION_BACKWARD_CHARTS_H_

#include <string>
#include <vector>

namespace mha {
namespace charts {

struct Curve {
  std::string label;       // legend text
  std::vector<double> y;   // one value per step; x is the index
};

// Lines of y against step on a logarithmic y axis (values must be > 0; the
// range is taken from the data). Throws std::runtime_error if the file
// cannot be written.
void loss_curves(const std::string& path, const std::string& title, const std::string& subtitle,
                 const std::string& y_label, const std::vector<Curve>& curves);

struct Bar {
  std::string label;  // left of the bar
  double value;       // may be negative: bars grow from the zero line
  std::string note;   // right of the bar
};

struct BarGroup {
  std::string title;  // heading above the group's bars
  std::vector<Bar> bars;
};

// Horizontal bars, one panel per group stacked vertically; each panel has
// its own x axis, from min(0, its smallest value) to its largest.
void bar_groups(const std::string& path, const std::string& title, const std::string& subtitle,
                const std::string& x_label, const std::vector<BarGroup>& groups);

}  // namespace charts
}  // namespace mha

#endif  // MHA_LABS_10_ATTENTION_BACKWARD_CHARTS_H_
