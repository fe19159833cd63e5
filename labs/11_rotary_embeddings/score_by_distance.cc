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
// checks that it does not depend on m (m = 0 against m = 1000), and prints
// how far off an angle computed in float32 (as Hugging Face's Llama computes
// it) would be, at small positions and near 10^6. The curve
// swings up and down by up to about 0.25 within five neighbouring distances
// (the fast pairs; d_head 64, base 10000), so beside each single score it
// prints the mean over the distances
// [n/2, 2n), the trend to quote. It writes
// the two curves as a CSV and a chart under out/score_by_distance/ in the
// repository (score_by_distance.json, drawn as score_by_distance.png by
// tools/plot/draw_chart.py). A larger base keeps the score high over longer
// distances: the slow pairs turn more slowly.
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
#include "common/programs/chart_spec.h"
#include "labs/11_rotary_embeddings/rotary_embeddings.h"

namespace {

const mha::LabProgram kProgram = {
    "score_by_distance", "your lab 11 (apply_rope)",
    "bazel run --config=solutions //labs/11_rotary_embeddings:score_by_distance"};  // in the instructors' repository

struct Options {
  int d_head = 64;
  int distance = 4096;  // distances 0 .. distance - 1
  std::string out;      // empty: out/score_by_distance in the repository
};

mha::FlagSet flags_of(Options& o) {
  mha::FlagSet f(kProgram.name);
  f.Int("--d_head", &o.d_head, 2, 4096, "features per head, even (default 64)")
      .Int("--distance", &o.distance, 2, 1 << 20, "largest distance plus one (default 4096)")
      .Out(&o.out)
      .Switch("--quick", [&o] { o.d_head = 16, o.distance = 256; },
              "d_head 16, distances up to 256 (a few milliseconds)");
  return f;
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

// The mean of score[k] over the distances k in [n/2, 2n) (at least n, at
// most the last one): the trend, without the swings of single distances.
double local_mean(const std::vector<double>& score, int n) {
  const int lo = std::max(1, (n + 1) / 2);
  const int hi = std::min(static_cast<int>(score.size()), 2 * n);
  double sum = 0.0;
  for (int k = lo; k < hi; ++k) sum += score[static_cast<std::size_t>(k)];
  return sum / std::max(1, hi - lo);
}

// The largest error of an angle computed in float32 the way Hugging Face's
// Llama computes it (inv_freq = 1 / base^(2i / d) in float32, then position
// times inv_freq in float32), against the angle in double, over the
// positions [first, last) and every pair of a d_head-wide head. Independent
// of your code: it is the reason the header asks for double.
double float32_angle_error(int d_head, long first, long last, double base) {
  double worst = 0.0;
  for (int i = 0; i < d_head / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(d_head);
    const float inv_freq = 1.0f / std::pow(static_cast<float>(base), exponent);
    const double theta = std::pow(base, -2.0 * i / d_head);
    for (long p = first; p < last; ++p) {
      const float angle = static_cast<float>(p) * inv_freq;
      worst = std::max(worst, std::fabs(double(angle) - double(p) * theta));
    }
  }
  return worst;
}

// The chart: the two curves of score against distance, distance on a log
// axis (from 1), so that the first tens of tokens, where most of the decay
// happens, get as much room as the thousands.
mha::Json chart(const Options& o, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, ya, yb;
  for (int n = 1; n < o.distance; ++n) {
    x.push_back(n);
    ya.push_back(a[static_cast<std::size_t>(n)]);
    yb.push_back(b[static_cast<std::size_t>(n)]);
  }
  return mha::LinesChart("RoPE: score of q with itself, n tokens apart",
                         "d_head " + std::to_string(o.d_head) + ", mean_i cos(n theta_i)",
                         "distance n (tokens, log scale)", "score",
                         {{"base 10000", x, ya}, {"base 500000 (Llama 3)", x, yb}})
      .Set("x_scale", "log");
}

int run(const Options& o) {
  if (o.d_head % 2 != 0) throw std::invalid_argument("--d_head " + std::to_string(o.d_head) +
                                                     ": RoPE needs an even d_head");
  const std::filesystem::path out = mha::OutputFolder(o.out, kProgram.name);
  std::printf("score_by_distance: d_head %d, distances 0 .. %d\n", o.d_head, o.distance - 1);
  const std::vector<double> llama2 = scores(o.d_head, o.distance, 0, 10000.0);
  const std::vector<double> llama3 = scores(o.d_head, o.distance, 0, 500000.0);

  // The relative-position property: the same curve from m = 1000.
  const std::vector<double> moved = scores(o.d_head, o.distance, 1000, 10000.0);
  double worst = 0.0;
  for (int n = 0; n < o.distance; ++n) worst = std::max(worst, std::fabs(moved[n] - llama2[n]));
  std::printf("query at m = 1000 instead of 0: largest change of a score %.2g (float rounding)\n",
              worst);

  std::printf("angles in float32 as Hugging Face computes them, largest error against double "
              "(base 10000):\n  %.4f rad for positions below 2^17, %.4f rad within 2048 of 10^6\n",
              float32_angle_error(o.d_head, 0, 1 << 17, 10000.0),
              float32_angle_error(o.d_head, 1000000 - 2048, 1000000 + 2048, 10000.0));
  std::printf("%10s %12s %12s   %s\n", "distance", "base 10000", "base 500000",
              "mean over [n/2, 2n): base 10000, base 500000");
  for (int n = 1; n < o.distance; n *= 4) {
    std::printf("%10d %12.4f %12.4f   %12.4f %12.4f\n", n, llama2[n], llama3[n],
                local_mean(llama2, n), local_mean(llama3, n));
  }
  std::ofstream csv(out / "score_by_distance.csv");
  csv << "distance,base_10000,base_500000\n";
  for (int n = 0; n < o.distance; ++n) csv << n << "," << llama2[n] << "," << llama3[n] << "\n";
  csv.close();
  if (!csv) throw std::runtime_error("cannot write " + (out / "score_by_distance.csv").string());
  mha::WriteAndDrawCharts({out / "score_by_distance.csv"},
                          {{out / "score_by_distance.json", chart(o, llama2, llama3)}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return mha::RunLabProgram<Options>(kProgram, argc, argv, flags_of, run);
}
