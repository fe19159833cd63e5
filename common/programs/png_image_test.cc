#include "common/programs/png_image.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace mha {
namespace {

TEST(Canvas, StartsFilledWithTheBackground) {
  const Canvas c(4, 3, Rgb{10, 20, 30});
  EXPECT_EQ(c.pixel(0, 0), (Rgb{10, 20, 30}));
  EXPECT_EQ(c.pixel(3, 2), (Rgb{10, 20, 30}));
}

TEST(Canvas, FillRectColoursExactlyItsBoxAndClipsTheRest) {
  Canvas c(5, 5);
  c.fill_rect(3, 3, 10, 10, kBlack);  // runs off the canvas: clipped
  EXPECT_EQ(c.pixel(3, 3), kBlack);
  EXPECT_EQ(c.pixel(4, 4), kBlack);
  EXPECT_EQ(c.pixel(2, 3), kWhite);
  EXPECT_EQ(c.pixel(3, 2), kWhite);
}

TEST(Canvas, DrawLineIncludesBothEnds) {
  Canvas c(6, 6);
  c.draw_line(0, 5, 5, 0, kBlack);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.pixel(i, 5 - i), kBlack) << i;
  EXPECT_EQ(c.pixel(0, 0), kWhite);
}

TEST(Canvas, ThickLineIsTheLineRepeatedBelowAndAboveIt) {
  Canvas two(6, 6), three(6, 6);
  two.draw_thick_line(0, 2, 5, 2, kBlack, 2);
  three.draw_thick_line(0, 2, 5, 2, kBlack, 3);
  for (int x = 0; x < 6; ++x) {
    EXPECT_EQ(two.pixel(x, 1), kWhite) << x;
    EXPECT_EQ(two.pixel(x, 2), kBlack) << x;
    EXPECT_EQ(two.pixel(x, 3), kBlack) << x;
    EXPECT_EQ(two.pixel(x, 4), kWhite) << x;
    EXPECT_EQ(three.pixel(x, 0), kWhite) << x;
    for (int y = 1; y <= 3; ++y) EXPECT_EQ(three.pixel(x, y), kBlack) << x << "," << y;
    EXPECT_EQ(three.pixel(x, 4), kWhite) << x;
  }
}

TEST(Charts, LegendEntryIsASwatchWithItsLabelBeside) {
  Canvas c(60, 12);
  const Rgb colour = series_colour(1);
  draw_legend_entry(c, 2, 4, colour, "H");
  EXPECT_EQ(c.pixel(2, 4), colour);    // swatch: 24 x 4 from (2, 4)
  EXPECT_EQ(c.pixel(25, 7), colour);
  EXPECT_EQ(c.pixel(26, 4), kWhite);
  EXPECT_EQ(c.pixel(2, 8), kWhite);
  EXPECT_EQ(c.pixel(34, 2), kBlack);   // "H" from (34, 2): its left stem
  EXPECT_EQ(c.pixel(34, 8), kBlack);
}

TEST(Canvas, TextTakesSixBySevenCellsPerCharacter) {
  Canvas c(40, 10);
  EXPECT_EQ(c.draw_text(0, 0, "Hi", kBlack), 12);
  EXPECT_EQ(Canvas::text_width("Hi", 2), 24);
  EXPECT_EQ(c.pixel(0, 0), kBlack);  // H: left stem, top row
  EXPECT_EQ(c.pixel(2, 0), kWhite);  // H: gap between the stems
  EXPECT_EQ(c.pixel(2, 3), kBlack);  // H: crossbar
  EXPECT_EQ(c.pixel(5, 3), kWhite);  // spacing column
  EXPECT_EQ(c.pixel(8, 0), kBlack);  // i: dot
  EXPECT_EQ(c.pixel(8, 1), kWhite);  // i: gap under the dot
  EXPECT_EQ(Canvas::text_width("caf\xc3\xa9"), 24) << "one '?' per UTF-8 character";
}

TEST(Canvas, TextUpIsTheTextRotatedAnticlockwise) {
  Canvas c(10, 10);
  c.draw_text_up(0, 9, "L", kBlack);
  // L's stem (column 0, rows 0..6) becomes the bottom row, x = 0..6;
  // its foot (row 6, columns 0..4) becomes the column x = 6, going up.
  for (int x = 0; x < 7; ++x) EXPECT_EQ(c.pixel(x, 8), kBlack) << x;
  for (int y = 4; y <= 8; ++y) EXPECT_EQ(c.pixel(6, y), kBlack) << y;
  EXPECT_EQ(c.pixel(0, 4), kWhite);
}

TEST(Canvas, ColormapRunsFromPurpleToYellow) {
  EXPECT_EQ(colormap(0.0f), (Rgb{68, 1, 84}));
  EXPECT_EQ(colormap(1.0f), (Rgb{253, 231, 37}));
  EXPECT_EQ(colormap(0.5f), (Rgb{33, 145, 140}));
  EXPECT_EQ(colormap(-1.0f), colormap(0.0f));
  EXPECT_EQ(text_colour_on(colormap(0.0f)), kWhite);
  EXPECT_EQ(text_colour_on(colormap(1.0f)), kBlack);
}

TEST(Canvas, SavePngWritesWhatWasDrawn) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : ".") + "/canvas.png";
  Canvas c(7, 5, kWhite);
  c.set_pixel(6, 4, Rgb{1, 2, 3});
  c.save_png(path);

  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, path.c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> rgb(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) << image.message;
  EXPECT_EQ(image.width, 7u);
  EXPECT_EQ(image.height, 5u);
  const std::size_t last = (4 * 7 + 6) * 3;
  EXPECT_EQ(rgb[last], 1);
  EXPECT_EQ(rgb[last + 1], 2);
  EXPECT_EQ(rgb[last + 2], 3);
  EXPECT_EQ(rgb[0], 255);
}

TEST(Canvas, SavePngNamesAPathItCannotWrite) {
  const Canvas c(2, 2);
  try {
    c.save_png("/nonexistent-dir/x.png");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.png"), std::string::npos);
  }
}

TEST(Canvas, RejectsEmptySize) { EXPECT_THROW(Canvas(0, 3), std::invalid_argument); }

TEST(Charts, NiceStepCutsASpanIntoAtMostFiveRoundIntervals) {
  EXPECT_DOUBLE_EQ(nice_step(1.0), 0.2);
  EXPECT_DOUBLE_EQ(nice_step(2500.0), 500.0);
  EXPECT_DOUBLE_EQ(nice_step(3000.0), 1000.0);
  EXPECT_DOUBLE_EQ(nice_step(7.0), 2.0);
  EXPECT_DOUBLE_EQ(nice_step(0.04), 0.01);
}

TEST(Charts, FormatNumberKeepsTheDigitsATickNeeds) {
  EXPECT_EQ(format_number(3000.0), "3000");
  EXPECT_EQ(format_number(12.5), "12.5");
  EXPECT_EQ(format_number(0.25), "0.25");
  EXPECT_EQ(format_number(0.003), "0.003");
  EXPECT_EQ(format_number(-0.5), "-0.50");
}

TEST(Charts, SeriesColoursAreDistinctAndRepeatAfterSix) {
  for (std::size_t i = 0; i < 6; ++i) {
    for (std::size_t j = i + 1; j < 6; ++j) EXPECT_NE(series_colour(i), series_colour(j));
  }
  EXPECT_EQ(series_colour(6), series_colour(0));
}

}  // namespace
}  // namespace mha
