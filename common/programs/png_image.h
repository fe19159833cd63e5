// Canvas: a small RGB image you can draw boxes, lines and text on, then save
// as PNG. Enough for attention heatmaps (lab 7's show_heads) and benchmark
// charts, with no plotting library.
//
//   mha::Canvas c(320, 200);                         // white background
//   c.fill_rect(10, 10, 50, 20, mha::colormap(0.8f)); // a viridis box
//   c.draw_text(10, 40, "head 0: previous-token", mha::kBlack);
//   c.draw_text_up(80, 120, "works", mha::kBlack);    // rotated, for column labels
//   c.save_png("out/example.png");
//
// Coordinates are pixels, x to the right and y down, (0, 0) the top-left
// corner. Drawing outside the canvas is clipped, never an error.
//
// Text uses a built-in 5x7 bitmap font covering printable ASCII (32..126);
// each character takes a 6x8 cell (one pixel of spacing right and below), so
// a string of n characters is text_width(n chars) = 6 * n * scale pixels wide
// and text_height() = 8 * scale tall. Other bytes are drawn as '?' (one per
// UTF-8 character).
#ifndef MHA_COMMON_PNG_IMAGE_H_
#define MHA_COMMON_PNG_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mha {

struct Rgb {
  std::uint8_t r, g, b;
};

inline bool operator==(Rgb a, Rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }
inline bool operator!=(Rgb a, Rgb b) { return !(a == b); }

inline constexpr Rgb kWhite{255, 255, 255};
inline constexpr Rgb kBlack{0, 0, 0};
inline constexpr Rgb kGrey{128, 128, 128};
inline constexpr Rgb kLightGrey{220, 220, 220};

// Matplotlib's viridis colour map, piecewise linear through nine of its
// colours: 0 -> dark purple, 0.5 -> teal, 1 -> yellow. t is clamped to [0, 1].
Rgb colormap(float t);

// Black or white, whichever reads better on `background`.
Rgb text_colour_on(Rgb background);

// Chart helpers, shared by the charts of lab 10 and of the benchmarks.
//
// Colour i of a line or bar series: six distinct, colour-blind-friendly
// colours (Okabe and Ito's palette), repeating from the seventh.
Rgb series_colour(std::size_t i);
// The smallest tick step of 1, 2 or 5 times a power of ten that cuts `span`
// (> 0) into at most five intervals: 0.2 for 1, 500 for 2500, 1000 for 3000.
double nice_step(double span);
// A tick label with the digits it needs: "3000", "12.5", "0.25", "0.003".
std::string format_number(double v);

class Canvas {
 public:
  // Throws std::invalid_argument unless width and height are positive.
  Canvas(int width, int height, Rgb background = kWhite);

  int width() const { return width_; }
  int height() const { return height_; }

  // Throws std::out_of_range outside the canvas.
  Rgb pixel(int x, int y) const;
  // Clipped: a pixel outside the canvas is ignored.
  void set_pixel(int x, int y, Rgb colour);

  // The w x h box whose top-left corner is (x, y); clipped.
  void fill_rect(int x, int y, int w, int h, Rgb colour);
  // Its one-pixel outline.
  void draw_rect(int x, int y, int w, int h, Rgb colour);
  // A one-pixel line from (x0, y0) to (x1, y1), both ends included.
  void draw_line(int x0, int y0, int x1, int y1, Rgb colour);
  // The same line `thickness` pixels thick, for the lines of a chart: copies
  // of it shifted down by -(thickness - 1) / 2 .. thickness / 2 pixels
  // (2: 0 and +1; 3: -1, 0 and +1).
  void draw_thick_line(int x0, int y0, int x1, int y1, Rgb colour, int thickness);

  // Text whose top-left corner is (x, y), each font pixel a scale x scale
  // square. Returns the width drawn, text_width(text, scale).
  int draw_text(int x, int y, const std::string& text, Rgb colour, int scale = 1);
  // The same text rotated a quarter turn anticlockwise, reading bottom to
  // top, with its first character's bottom-left corner at (x, y): the usual
  // way to label a column. Returns the height drawn.
  int draw_text_up(int x, int y, const std::string& text, Rgb colour, int scale = 1);

  static int text_width(const std::string& text, int scale = 1);
  static int text_height(int scale = 1) { return 8 * scale; }

  // Writes an 8-bit RGB PNG. Throws std::runtime_error if the file cannot be
  // written (the message names the path).
  void save_png(const std::string& path) const;

 private:
  int width_, height_;
  std::vector<std::uint8_t> rgb_;  // row-major, 3 bytes a pixel
};

// One entry of a chart's legend: a 24 x 4 swatch of the series' colour with
// its top-left corner at (x, y), and the label 32 pixels to the right, 2
// pixels higher.
void draw_legend_entry(Canvas& c, int x, int y, Rgb colour, const std::string& label);

}  // namespace mha

#endif  // MHA_COMMON_PNG_IMAGE_H_
