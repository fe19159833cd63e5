// A chart as data. The lab programs draw no pixels: each writes what its
// chart shows as a small JSON spec, and tools/plot/draw_chart.py draws it with
// matplotlib (the spec's format is described at the top of that script).
//
//   mha::Json spec = mha::Json::Object()
//                        .Set("kind", "lines")
//                        .Set("title", "Training loss")
//                        .Set("series", mha::Json::Array().Add(
//                            mha::Json::Object().Set("label", "4 heads").Set("x", x).Set("y", y)));
//   mha::WriteChart(spec, dir / "loss_curves.json");   // then, once all are written:
//   mha::DrawCharts({dir / "loss_curves.json"});        // loss_curves.png beside it
//
// DrawCharts runs /usr/bin/python3 tools/plot/draw_chart.py (in the repository:
// WorkspaceRoot()) when that script is there and matplotlib imports; otherwise
// it prints the one command that draws the charts and how to install
// python3-matplotlib. A spec is deterministic: the same numbers give the same
// bytes, so a test can compare two runs.
#ifndef MHA_COMMON_CHART_SPEC_H_
#define MHA_COMMON_CHART_SPEC_H_

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mha {

// A JSON value: null, a number, a string, true/false, an array or an object
// (keys in sorted order). Numbers are written with 9 significant digits (a
// float's precision); NaN and infinities, which JSON lacks, as null.
class Json {
 public:
  Json();  // null
  Json(double number);
  Json(int number) : Json(static_cast<double>(number)) {}
  Json(long long number) : Json(static_cast<double>(number)) {}
  Json(std::size_t number) : Json(static_cast<double>(number)) {}
  Json(bool value);
  Json(const char* text);
  Json(std::string text);
  Json(const std::vector<double>& numbers);
  Json(const std::vector<float>& numbers);
  Json(const std::vector<std::string>& texts);

  static Json Array();
  static Json Object();

  // An object's member; replaces an earlier one of the same key. Throws
  // std::logic_error on a value that is not an object.
  Json& Set(const std::string& key, Json value);
  // Appends to an array. Throws std::logic_error on a value that is not one.
  Json& Add(Json value);

  std::string Dump() const;

 private:
  enum class Kind { kNull, kNumber, kBool, kString, kArray, kObject };
  void DumpTo(std::string& out) const;

  Kind kind_ = Kind::kNull;
  double number_ = 0.0;
  bool bool_ = false;
  std::string text_;
  std::vector<Json> items_;
  std::map<std::string, Json> members_;
};

// The two common kinds, built from plain data (add keys with Set, such as
// .Set("y_scale", "log")).
struct Series {
  std::string label;         // in the legend
  std::vector<double> x, y;  // as many of one as of the other
  std::string style = "line";  // or "points", "line+points"
};
// kind "lines"; x (y) are the index 0, 1, ... when a series leaves x empty.
Json LinesChart(const std::string& title, const std::string& subtitle, const std::string& x_label,
                const std::string& y_label, const std::vector<Series>& series);

struct Bar {
  std::string label;  // left of the bar
  double value;       // may be negative: bars grow from the zero line
  std::string note;   // right of the bar
};
struct BarGroup {
  std::string title;  // above the group's panel
  std::vector<Bar> bars;
};
// kind "bars": one panel of horizontal bars per group.
Json BarsChart(const std::string& title, const std::string& subtitle, const std::string& x_label,
               const std::vector<BarGroup>& groups);

// kind "heatmaps": one panel a matrix of weights in [0, 1], `columns` panels
// a row. HeatmapPanel makes a panel of the rows x cols values at `values`
// (row-major); add "row_labels", "col_labels", "mask_future", "mask_zero", "outline" or
// "hline" to it with Set.
Json HeatmapPanel(const std::string& title, const float* values, std::size_t rows,
                  std::size_t cols);
Json HeatmapsChart(const std::string& title, const std::string& subtitle, int columns,
                   Json panels);

// Writes spec to path (creating its folder). Throws std::runtime_error naming
// the path if it cannot be written.
void WriteChart(const Json& spec, const std::filesystem::path& path);

// Draws every spec to its .png (same name) with tools/plot/draw_chart.py, in
// one run of /usr/bin/python3, and prints what it drew; or, without the
// script, python3 or matplotlib, prints the command that draws them. Returns
// whether the PNGs were drawn. Never throws: the data is already written.
bool DrawCharts(const std::vector<std::filesystem::path>& specs);

// The end of a program's run: writes each chart to its path, prints every
// file written (`data` first: what the program wrote itself, such as its
// CSV), then draws the charts (DrawCharts).
void WriteAndDrawCharts(const std::vector<std::filesystem::path>& data,
                        const std::vector<std::pair<std::filesystem::path, Json>>& charts);

}  // namespace mha

#endif  // MHA_COMMON_CHART_SPEC_H_
