// Canvas implementation: pixel drawing, a 5x7 bitmap font and PNG output
// through libpng. See png_image.h.
#include "common/programs/png_image.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace mha {
namespace {

// The font: one glyph per printable ASCII character, 32 (space) to 126 (~),
// seven rows of five pixels, '#' lit. Drawn for this project; each glyph sits
// in a 6x8 cell so that neighbouring characters and lines do not touch.
constexpr int kGlyphW = 5;
constexpr int kGlyphH = 7;
constexpr int kCellW = 6;
constexpr int kCellH = 8;
// clang-format off
constexpr const char* kFont[95][kGlyphH] = {
    {".....", ".....", ".....", ".....", ".....", ".....", "....."},  // space
    {"..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."},  // !
    {".#.#.", ".#.#.", ".#.#.", ".....", ".....", ".....", "....."},  // "
    {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."},  // #
    {"..#..", ".####", "#.#..", ".###.", "..#.#", "####.", "..#.."},  // $
    {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"},  // %
    {".##..", "#..#.", "#.#..", ".#...", "#.#.#", "#..#.", ".##.#"},  // &
    {"..#..", "..#..", ".#...", ".....", ".....", ".....", "....."},  // '
    {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},  // (
    {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},  // )
    {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."},  // *
    {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."},  // +
    {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."},  // ,
    {".....", ".....", ".....", "#####", ".....", ".....", "....."},  // -
    {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},  // .
    {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},  // /
    {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},  // 0
    {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},  // 1
    {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},  // 2
    {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},  // 3
    {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},  // 4
    {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},  // 5
    {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},  // 6
    {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},  // 7
    {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},  // 8
    {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},  // 9
    {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},  // :
    {".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."},  // ;
    {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."},  // <
    {".....", ".....", "#####", ".....", "#####", ".....", "....."},  // =
    {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."},  // >
    {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."},  // ?
    {".###.", "#...#", "....#", ".##.#", "#.#.#", "#.#.#", ".###."},  // @
    {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},  // A
    {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."},  // B
    {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."},  // C
    {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."},  // D
    {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},  // E
    {"#####", "#....", "#....", "####.", "#....", "#....", "#...."},  // F
    {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"},  // G
    {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},  // H
    {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},  // I
    {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},  // J
    {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"},  // K
    {"#....", "#....", "#....", "#....", "#....", "#....", "#####"},  // L
    {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"},  // M
    {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"},  // N
    {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},  // O
    {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},  // P
    {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"},  // Q
    {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},  // R
    {".####", "#....", "#....", ".###.", "....#", "....#", "####."},  // S
    {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},  // T
    {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},  // U
    {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},  // V
    {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."},  // W
    {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"},  // X
    {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."},  // Y
    {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"},  // Z
    {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."},  // [
    {".....", "#....", ".#...", "..#..", "...#.", "....#", "....."},  // backslash
    {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."},  // ]
    {"..#..", ".#.#.", "#...#", ".....", ".....", ".....", "....."},  // ^
    {".....", ".....", ".....", ".....", ".....", ".....", "#####"},  // _
    {".#...", "..#..", "...#.", ".....", ".....", ".....", "....."},  // `
    {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"},  // a
    {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."},  // b
    {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."},  // c
    {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"},  // d
    {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."},  // e
    {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."},  // f
    {".....", ".####", "#...#", "#...#", ".####", "....#", ".###."},  // g
    {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"},  // h
    {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."},  // i
    {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."},  // j
    {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."},  // k
    {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},  // l
    {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"},  // m
    {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"},  // n
    {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."},  // o
    {".....", ".....", "####.", "#...#", "####.", "#....", "#...."},  // p
    {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"},  // q
    {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."},  // r
    {".....", ".....", ".###.", "#....", ".###.", "....#", "####."},  // s
    {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."},  // t
    {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"},  // u
    {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."},  // v
    {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."},  // w
    {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"},  // x
    {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."},  // y
    {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"},  // z
    {"...#.", "..#..", "..#..", ".#...", "..#..", "..#..", "...#."},  // {
    {"..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},  // |
    {".#...", "..#..", "..#..", "...#.", "..#..", "..#..", ".#..."},  // }
    {".....", ".....", ".#...", "#.#.#", "...#.", ".....", "....."},  // ~
};
// clang-format on

// The glyph of one byte; '?' for anything outside printable ASCII.
const char* const* glyph(unsigned char c) {
  if (c < 32 || c > 126) c = '?';
  return kFont[c - 32];
}

// The bytes to draw: UTF-8 continuation bytes are dropped so that each
// non-ASCII character becomes a single '?'.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;
    out.push_back(c >= 32 && c <= 126 ? static_cast<char>(c) : '?');
  }
  return out;
}

std::uint8_t lerp(std::uint8_t a, std::uint8_t b, float t) {
  return static_cast<std::uint8_t>(std::lround(a + (b - a) * t));
}

}  // namespace

Rgb colormap(float t) {
  // viridis at 0, 1/8, ..., 1.
  static constexpr Rgb kStops[9] = {{68, 1, 84},    {71, 45, 123},  {59, 82, 139},
                                    {44, 114, 142}, {33, 145, 140}, {40, 174, 128},
                                    {94, 201, 98},  {173, 220, 48}, {253, 231, 37}};
  if (!(t > 0.0f)) return kStops[0];  // also catches NaN
  if (t >= 1.0f) return kStops[8];
  const float pos = t * 8.0f;
  const int k = std::min(7, static_cast<int>(pos));
  const float f = pos - static_cast<float>(k);
  return {lerp(kStops[k].r, kStops[k + 1].r, f), lerp(kStops[k].g, kStops[k + 1].g, f),
          lerp(kStops[k].b, kStops[k + 1].b, f)};
}

Rgb text_colour_on(Rgb background) {
  // Perceived brightness (ITU-R BT.601 weights).
  const float luma = 0.299f * background.r + 0.587f * background.g + 0.114f * background.b;
  return luma > 140.0f ? kBlack : kWhite;
}

Rgb series_colour(std::size_t i) {
  static const Rgb kSeries[] = {{0, 114, 178},   {230, 159, 0},  {0, 158, 115},
                                {204, 121, 167}, {86, 180, 233}, {213, 94, 0}};
  return kSeries[i % (sizeof kSeries / sizeof kSeries[0])];
}

double nice_step(double span) {
  const double raw = span / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

std::string format_number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 0.1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

Canvas::Canvas(int width, int height, Rgb background) : width_(width), height_(height) {
  if (width <= 0 || height <= 0) {
    throw std::invalid_argument("Canvas of width=" + std::to_string(width) + " and height=" +
                                std::to_string(height) + ": both must be positive");
  }
  rgb_.resize(static_cast<std::size_t>(width) * height * 3);
  for (std::size_t i = 0; i < rgb_.size(); i += 3) {
    rgb_[i] = background.r;
    rgb_[i + 1] = background.g;
    rgb_[i + 2] = background.b;
  }
}

Rgb Canvas::pixel(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) {
    throw std::out_of_range("pixel (" + std::to_string(x) + ", " + std::to_string(y) +
                            ") is outside the " + std::to_string(width_) + "x" +
                            std::to_string(height_) + " canvas");
  }
  const std::size_t i = (static_cast<std::size_t>(y) * width_ + x) * 3;
  return {rgb_[i], rgb_[i + 1], rgb_[i + 2]};
}

void Canvas::set_pixel(int x, int y, Rgb colour) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const std::size_t i = (static_cast<std::size_t>(y) * width_ + x) * 3;
  rgb_[i] = colour.r;
  rgb_[i + 1] = colour.g;
  rgb_[i + 2] = colour.b;
}

void Canvas::fill_rect(int x, int y, int w, int h, Rgb colour) {
  const int x0 = std::max(x, 0), x1 = std::min(x + w, width_);
  const int y0 = std::max(y, 0), y1 = std::min(y + h, height_);
  for (int yy = y0; yy < y1; ++yy)
    for (int xx = x0; xx < x1; ++xx) set_pixel(xx, yy, colour);
}

void Canvas::draw_rect(int x, int y, int w, int h, Rgb colour) {
  if (w <= 0 || h <= 0) return;
  fill_rect(x, y, w, 1, colour);
  fill_rect(x, y + h - 1, w, 1, colour);
  fill_rect(x, y, 1, h, colour);
  fill_rect(x + w - 1, y, 1, h, colour);
}

void Canvas::draw_line(int x0, int y0, int x1, int y1, Rgb colour) {
  // Bresenham: step along the longer axis, carry the error on the other.
  const int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  const int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  while (true) {
    set_pixel(x0, y0, colour);
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

void Canvas::draw_thick_line(int x0, int y0, int x1, int y1, Rgb colour, int thickness) {
  for (int d = -(thickness - 1) / 2; d <= thickness / 2; ++d) {
    draw_line(x0, y0 + d, x1, y1 + d, colour);
  }
}

int Canvas::text_width(const std::string& text, int scale) {
  return kCellW * static_cast<int>(printable(text).size()) * scale;
}

int Canvas::draw_text(int x, int y, const std::string& text, Rgb colour, int scale) {
  const std::string s = printable(text);
  for (std::size_t n = 0; n < s.size(); ++n) {
    const char* const* g = glyph(static_cast<unsigned char>(s[n]));
    const int cx = x + static_cast<int>(n) * kCellW * scale;
    for (int row = 0; row < kGlyphH; ++row)
      for (int col = 0; col < kGlyphW; ++col)
        if (g[row][col] == '#') fill_rect(cx + col * scale, y + row * scale, scale, scale, colour);
  }
  return text_width(text, scale);
}

int Canvas::draw_text_up(int x, int y, const std::string& text, Rgb colour, int scale) {
  // Rotating a quarter turn anticlockwise sends glyph pixel (col, row) to
  // (row, -col): rows run left to right, columns run upwards from y.
  const std::string s = printable(text);
  for (std::size_t n = 0; n < s.size(); ++n) {
    const char* const* g = glyph(static_cast<unsigned char>(s[n]));
    const int base = y - static_cast<int>(n) * kCellW * scale;  // bottom of this character
    for (int row = 0; row < kGlyphH; ++row)
      for (int col = 0; col < kGlyphW; ++col)
        if (g[row][col] == '#')
          fill_rect(x + row * scale, base - (col + 1) * scale, scale, scale, colour);
  }
  return text_width(text, scale);
}

void Canvas::save_png(const std::string& path) const {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                       &std::fclose);
  if (!file) throw std::runtime_error("cannot open " + path + " for writing");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::runtime_error("libpng could not start writing " + path);
  }
  // libpng reports errors by longjmp back here; nothing with a destructor
  // is created between setjmp and the end of the writes.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng failed while writing " + path);
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width_), static_cast<png_uint_32>(height_), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height_; ++y) {
    png_write_row(png, const_cast<png_bytep>(&rgb_[static_cast<std::size_t>(y) * width_ * 3]));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(file.get()) != 0) throw std::runtime_error("cannot finish writing " + path);
}

void draw_legend_entry(Canvas& c, int x, int y, Rgb colour, const std::string& label) {
  c.fill_rect(x, y, 24, 4, colour);
  c.draw_text(x + 32, y - 2, label, kBlack);
}

}  // namespace mha
