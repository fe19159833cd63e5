// score_by_distance: what RoPE does to a score as two tokens move apart, run
// with your own apply_rope.
//
//   bazel run //labs/11_rotary_embeddings:score_by_distance
//   bazel run //labs/11_rotary_embeddings:score_by_distance -- --d_head 128 --distance 16384
//   bazel run //labs/11_rotary_embeddings:score_by_distance -- --quick
//
// A query and a key that are the same vector (all ones, d_head features)
// score 1 (after dividing by d_head) when they sit at the same position.
// Rotate the query at position m and the key at m + n: the score becomes
// mean_i cos(n theta_i), a function of the distance n alone. It prints that
// score at a few distances for base 10000 (Llama 2) and 500000 (Llama 3),
// checks that it does not depend on m (m = 0 against m = 1000), and writes
// the two curves as a PNG and a CSV under out/score_by_distance/ in the
// repository. A larger base keeps the score high over longer distances: the
// slow pairs turn more slowly.
//
// It runs your lab 11: while apply_rope is still a stub it says so and exits
// with status 1; `bazel run --config=solutions` runs the reference solution
// instead (in the instructors' repository).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "common/programs/lab_program.h"
#include "common/programs/png_image.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

namespace {

struct Options {
  int d_head = 64;
  int distance = 4096;  // distances 0 .. distance - 1
  std::string out;      // empty: out/score_by_distance in the repository
};

const char* const kUsage =
    "usage: score_by_distance [--d_head D] [--distance N] [--out DIR] [--quick]\n"
    "  --d_head    features per head, even (default 64)\n"
    "  --distance  largest distance plus one (default 4096)\n"
    "  --out       folder for score_by_distance.png and .csv (default out/score_by_distance)\n"
    "  --quick     d_head 16, distances up to 256 (a few milliseconds)\n";

Options parse_args(int argc, char** argv) {
  Options o;
  mha::Flags flags(argc, argv, kUsage);
  while (flags.Next()) {
    if (flags.Is("--d_head")) {
      o.d_head = static_cast<int>(flags.Int(2, 4096));
    } else if (flags.Is("--distance")) {
      o.distance = static_cast<int>(flags.Int(2, 1 << 20));
    } else if (flags.Is("--out")) {
      o.out = flags.String();
    } else if (flags.Is("--quick")) {
      if (flags.Switch()) {
        o.d_head = 16;
        o.distance = 256;
      }
    } else {
      flags.Unknown();
    }
  }
  return o;
}

// score[n] = (q rotated at m) . (q rotated at m + n) / d_head, q all ones, n < N.
std::vector<double> scores(int d_head, int N, int m, double base) {
  const std::size_t d = static_cast<std::size_t>(d_head);
  const mha::Tensor3 ones = xt::ones<float>({std::size_t{1}, std::size_t{1}, d});
  const mha::Tensor3 q = mha::apply_rope(ones, m, base);  // (1, 1, d_head)
  const mha::Tensor3 keys = mha::apply_rope(
      xt::ones<float>({std::size_t{1}, static_cast<std::size_t>(N), d}), m, base);  // (1, N, d_head)
  std::vector<double> out(static_cast<std::size_t>(N));
  for (int n = 0; n < N; ++n) {
    double dot = 0.0;
    for (std::size_t f = 0; f < d; ++f) dot += double(q(0, 0, f)) * double(keys(0, n, f));
    out[static_cast<std::size_t>(n)] = dot / d_head;
  }
  return out;
}

// Two curves of score against distance, y from -0.25 to 1.
void chart(const std::string& path, const Options& o, const std::vector<double>& a,
           const std::vector<double>& b) {
  const int W = 760, H = 420, left = 70, right = 20, top = 50, bottom = 50;
  mha::Canvas c(W, H);
  const int pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double n) { return left + static_cast<int>(n / (o.distance - 1) * pw); };
  auto py = [&](double s) { return top + static_cast<int>((1.0 - s) / 1.25 * ph); };
  c.draw_text(left, 12, "RoPE: score of q with itself, n tokens apart", mha::kBlack, 2);
  c.draw_text(left, 32, "d_head " + std::to_string(o.d_head) + ", mean_i cos(n theta_i)",
              mha::kGrey);
  for (double s : {-0.25, 0.0, 0.25, 0.5, 0.75, 1.0}) {
    c.draw_line(left, py(s), left + pw, py(s), mha::kLightGrey);
    c.draw_text(8, py(s) - 4, mha::format_number(s), mha::kBlack);
  }
  const double step = mha::nice_step(o.distance - 1);
  for (double n = 0; n <= o.distance - 1; n += step) {
    c.draw_line(px(n), top + ph, px(n), top + ph + 4, mha::kBlack);
    c.draw_text(px(n) - 8, top + ph + 8, mha::format_number(n), mha::kBlack);
  }
  c.draw_rect(left, top, pw, ph, mha::kBlack);
  c.draw_text(left + pw / 2 - 60, H - 18, "distance n (tokens)", mha::kBlack);
  const mha::Rgb colours[2] = {{31, 119, 180}, {214, 39, 40}};
  const std::vector<double>* curves[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    for (int n = 1; n < o.distance; ++n) {
      c.draw_thick_line(px(n - 1), py((*curves[k])[n - 1]), px(n), py((*curves[k])[n]),
                        colours[k], 2);
    }
  }
  mha::draw_legend_entry(c, left + pw - 200, top + 12, colours[0], "base 10000");
  mha::draw_legend_entry(c, left + pw - 200, top + 28, colours[1], "base 500000 (Llama 3)");
  c.save_png(path);
}

int run(const Options& o) {
  if (o.d_head % 2 != 0) throw std::invalid_argument("--d_head " + std::to_string(o.d_head) +
                                                     ": RoPE needs an even d_head");
  const std::filesystem::path out =
      o.out.empty() ? mha::WorkspaceRoot() / "out" / "score_by_distance" : std::filesystem::path(o.out);
  std::filesystem::create_directories(out);
  std::printf("score_by_distance: d_head %d, distances 0 .. %d\n", o.d_head, o.distance - 1);
  const std::vector<double> llama2 = scores(o.d_head, o.distance, 0, 10000.0);
  const std::vector<double> llama3 = scores(o.d_head, o.distance, 0, 500000.0);

  // The relative-position property: the same curve from m = 1000.
  const std::vector<double> moved = scores(o.d_head, o.distance, 1000, 10000.0);
  double worst = 0.0;
  for (int n = 0; n < o.distance; ++n) worst = std::max(worst, std::fabs(moved[n] - llama2[n]));
  std::printf("query at m = 1000 instead of 0: largest change of a score %.2g (float rounding)\n",
              worst);

  std::printf("%10s %12s %12s\n", "distance", "base 10000", "base 500000");
  for (int n = 1; n < o.distance; n *= 4) {
    std::printf("%10d %12.4f %12.4f\n", n, llama2[n], llama3[n]);
  }
  std::ofstream csv(out / "score_by_distance.csv");
  csv << "distance,base_10000,base_500000\n";
  for (int n = 0; n < o.distance; ++n) csv << n << "," << llama2[n] << "," << llama3[n] << "\n";
  csv.close();
  if (!csv) throw std::runtime_error("cannot write " + (out / "score_by_distance.csv").string());
  chart((out / "score_by_distance.png").string(), o, llama2, llama3);
  std::printf("wrote %s and score_by_distance.csv\n", (out / "score_by_distance.png").c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram(
      {"score_by_distance", "your lab 11 (apply_rope)",
       "bazel run --config=solutions //labs/11_rotary_embeddings:score_by_distance", kUsage},  // in the instructors' repository
      [&] { return run(parse_args(argc, argv)); });
}
