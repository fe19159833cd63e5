// Lab 7 reference solution: summary statistics of attention patterns.
//
// Every statistic is an average over query rows of something read off one
// row p_i of a head's (T, T) weight matrix:
//
//   entropy         -sum_j p_ij ln p_ij        how spread out the row is (nats)
//   mean_distance    sum_j p_ij |i - j|        how far back the row looks
//   previous_token   p_{i,i-1}  (i >= 1 only)  mass on the token just before
//   self             p_{i,i}                   mass on the query's own token
//   first_token      p_{i,0}                   mass on the first ("sink") token
//
// The sums are accumulated in double: a profile is a handful of numbers read
// by a person, and double makes the float32 result the correctly rounded one
// whatever the order of the terms.
#include "labs/07_head_analysis/head_analysis.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/core/shape_string.h"

namespace mha {
namespace {

// One head's profile from its (T, T) weights, read as weights(h, i, j).
HeadProfile profile_one_head(const Tensor3& weights, std::size_t h) {
  const std::size_t T = weights.shape(1);
  double entropy = 0.0, distance = 0.0, previous = 0.0, self = 0.0, first = 0.0;
  for (std::size_t i = 0; i < T; ++i) {
    double row_entropy = 0.0;
    double row_distance = 0.0;
    for (std::size_t j = 0; j < T; ++j) {
      const double p = weights(h, i, j);
      // 0 ln 0 = 0 (the limit of p ln p as p -> 0): a key the query ignores
      // adds no uncertainty. Without the test, log(0) = -inf and 0 * -inf = NaN.
      if (p > 0.0) row_entropy -= p * std::log(p);  // natural log: nats, not bits
      // |i - j| in both directions: an unmasked head can look ahead too.
      const double gap = i >= j ? static_cast<double>(i - j) : static_cast<double>(j - i);
      row_distance += p * gap;
    }
    entropy += row_entropy;
    distance += row_distance;
    self += weights(h, i, i);
    first += weights(h, i, 0);
    // Query 0 has no previous token, so it is left out of that average.
    if (i >= 1) previous += weights(h, i, i - 1);
  }
  const double n = static_cast<double>(T);
  HeadProfile profile;
  profile.entropy = static_cast<float>(entropy / n);
  profile.mean_distance = static_cast<float>(distance / n);
  // T - 1 queries have a previous token; none do when T == 1.
  profile.previous_token = T > 1 ? static_cast<float>(previous / static_cast<double>(T - 1)) : 0.0f;
  profile.self = static_cast<float>(self / n);
  profile.first_token = static_cast<float>(first / n);
  return profile;
}

}  // namespace

std::vector<HeadProfile> profile_heads(const Tensor3& weights) {
  const std::size_t H = weights.shape(0);
  const std::size_t T = weights.shape(1);
  const std::size_t S = weights.shape(2);
  // Self-attention weights are square: query i and key i are the same token.
  if (H == 0 || T == 0 || T != S) {
    throw std::invalid_argument("weights has shape (" + std::to_string(H) + ", " +
                                std::to_string(T) + ", " + std::to_string(S) +
                                "), expected (H, T, T) with H, T > 0");
  }
  std::vector<HeadProfile> profiles;
  profiles.reserve(H);
  for (std::size_t h = 0; h < H; ++h) profiles.push_back(profile_one_head(weights, h));
  return profiles;
}

float induction_score(const Tensor2& head_weights, int block_len) {
  if (block_len <= 0) {
    throw std::invalid_argument("block_len=" + std::to_string(block_len) + " must be positive");
  }
  const std::size_t L = static_cast<std::size_t>(block_len);
  if (head_weights.shape(0) != 2 * L || head_weights.shape(1) != 2 * L) {
    const std::vector<std::size_t> expected = {2 * L, 2 * L};
    throw std::invalid_argument("head_weights has shape " + shape_string(head_weights) +
                                ", expected " + shape_string(expected) +
                                " for block_len=" + std::to_string(block_len));
  }
  // Token i of the second copy (i >= L) last occurred at i - L; the token that
  // followed that occurrence sits at i - L + 1. An induction head attends
  // there, because that is the token it predicts will come next.
  double total = 0.0;
  for (std::size_t i = L; i < 2 * L; ++i) total += head_weights(i, i - L + 1);
  return static_cast<float>(total / static_cast<double>(L));
}

std::string classify_head(const HeadProfile& profile, float induction) {
  // The order is the point: the first rule that holds wins, so the most
  // specific pattern is tested first. Induction needs a repeated sequence to
  // be seen at all, so when it is measured and strong it names the head;
  // "local" and "diffuse" are what is left when no single key dominates.
  if (induction >= 0.5f) return "induction";
  if (profile.previous_token >= 0.5f) return "previous-token";
  if (profile.self >= 0.5f) return "self";
  if (profile.first_token >= 0.5f) return "first-token";
  if (profile.mean_distance <= 2.0f) return "local";
  return "diffuse";
}

}  // namespace mha
