#include "common/rng.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mha {
namespace {

// The ziggurat tables kKi, kWi and kFi (3 x 256 values copied from NumPy).
#include "common/ziggurat_tables.inc"

using u128 = unsigned __int128;

// Builds a 128-bit constant from its two 64-bit halves (C++ has no 128-bit
// literals).
constexpr u128 MakeU128(std::uint64_t high, std::uint64_t low) {
  return (static_cast<u128>(high) << 64) | low;
}

// ---------------------------------------------------------------------------
// SeedSequence (numpy/random/bit_generator.pyx), specialised to one integer
// seed, no spawn key and the default pool of four 32-bit words.
//
// All arithmetic is on uint32_t on purpose: NumPy relies on wrap-around
// modulo 2^32, which unsigned types give us for free.
// ---------------------------------------------------------------------------

constexpr int kPoolSize = 4;
constexpr std::uint32_t kInitA = 0x43b0d7e5;
constexpr std::uint32_t kMultA = 0x931e8875;
constexpr std::uint32_t kInitB = 0x8b51f9dd;
constexpr std::uint32_t kMultB = 0x58f38ded;
constexpr std::uint32_t kMixMultL = 0xca01f9dd;
constexpr std::uint32_t kMixMultR = 0x4973f715;
constexpr int kXShift = 16;  // Half the width of a 32-bit word.

// Hashes one word. `hash_const` is a running multiplier shared by every call
// within one mixing pass, so equal inputs at different positions hash
// differently.
std::uint32_t HashMix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

// Combines two words so that every input bit influences the result.
std::uint32_t Mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// Turns the seed into PCG64's initial 128-bit state and 128-bit stream
// selector, exactly as PCG64(SeedSequence(seed)) does.
void SeedSequenceToPcgSeed(std::uint64_t seed, u128& initstate,
                           u128& initseq) {
  // NumPy writes the integer as little-endian 32-bit words, using as few as
  // needed (but at least one): 0 -> [0], 2^64 - 1 -> [lo, hi].
  std::uint32_t entropy[2] = {static_cast<std::uint32_t>(seed),
                              static_cast<std::uint32_t>(seed >> 32)};
  const int n_entropy = (seed >> 32) != 0 ? 2 : 1;

  // Pass 1: hash the entropy into the pool, padding with zeros.
  std::array<std::uint32_t, kPoolSize> pool{};
  std::uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i) {
    pool[i] = HashMix(i < n_entropy ? entropy[i] : 0u, hash_const);
  }
  // Pass 2: mix every pool word into every other one. (A seed never has more
  // words than the pool, so NumPy's third pass, for surplus entropy, is
  // empty here.)
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) {
        pool[dst] = Mix(pool[dst], HashMix(pool[src], hash_const));
      }
    }
  }

  // generate_state(4, np.uint64): eight 32-bit words, cycling through the
  // pool with a second running multiplier...
  std::array<std::uint32_t, 8> words{};
  hash_const = kInitB;
  for (int i = 0; i < 8; ++i) {
    std::uint32_t value = pool[i % kPoolSize];
    value ^= hash_const;
    hash_const *= kMultB;
    value *= hash_const;
    value ^= value >> kXShift;
    words[i] = value;
  }
  // ...paired up little-endian into four 64-bit words...
  std::uint64_t state64[4];
  for (int i = 0; i < 4; ++i) {
    state64[i] = (static_cast<std::uint64_t>(words[2 * i + 1]) << 32) |
                 words[2 * i];
  }
  // ...of which PCG64 reads the first two as the state and the last two as
  // the stream, high word first.
  initstate = MakeU128(state64[0], state64[1]);
  initseq = MakeU128(state64[2], state64[3]);
}

// ---------------------------------------------------------------------------
// PCG64 (numpy/random/src/pcg64): state = state * kPcgMultiplier + increment.
// ---------------------------------------------------------------------------

constexpr u128 kPcgMultiplier =
    MakeU128(0x2360ED051FC65DA4ULL, 0x4385DF649FCCF645ULL);

// XSL-RR output: fold the 128-bit state to 64 bits by XOR-ing its halves,
// then rotate right by the top 6 bits. The rotation hides the weak low bits
// of a power-of-two-modulus LCG.
std::uint64_t XslRr(u128 state) {
  const std::uint64_t folded = static_cast<std::uint64_t>(state >> 64) ^
                               static_cast<std::uint64_t>(state);
  const unsigned rot = static_cast<unsigned>(state >> 122);
  // `-rot & 63` keeps the shift below 64 when rot == 0 (shifting by 64 is
  // undefined behaviour in C++).
  return (folded >> rot) | (folded << ((-rot) & 63u));
}

// ---------------------------------------------------------------------------
// Ziggurat for the standard normal (NumPy's random_standard_normal).
// ---------------------------------------------------------------------------

// r, the right edge of the widest layer: beyond it lies the tail.
constexpr double kZigguratNorR = 3.6541528853610087963519472518;
constexpr double kZigguratNorInvR = 0.27366123732975827203338247596;

}  // namespace

NumpyRng::NumpyRng(std::uint64_t seed) {
  u128 initstate = 0;
  u128 initseq = 0;
  SeedSequenceToPcgSeed(seed, initstate, initseq);

  // pcg_setseq_128_srandom_r: the stream selector becomes an odd increment,
  // and the seed is added between two LCG steps so that nearby seeds do not
  // start on nearby states.
  state_ = 0;
  increment_ = (initseq << 1) | 1;
  state_ = state_ * kPcgMultiplier + increment_;
  state_ += initstate;
  state_ = state_ * kPcgMultiplier + increment_;
}

std::uint64_t NumpyRng::next_uint64() {
  // Step first, then output the new state (PCG's "random_r" order).
  state_ = state_ * kPcgMultiplier + increment_;
  return XslRr(state_);
}

double NumpyRng::next_double() {
  // 53 random bits times 2^-53: every double in [0, 1) with spacing 2^-53.
  return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0);
}

double NumpyRng::random() { return next_double(); }

double NumpyRng::standard_normal() {
  for (;;) {
    // One 64-bit word is carved up as: 8 bits layer index | 1 sign bit |
    // 52 bits magnitude (the top 3 bits are unused).
    std::uint64_t r = next_uint64();
    const int idx = static_cast<int>(r & 0xff);
    r >>= 8;
    const bool negative = (r & 0x1) != 0;
    const std::uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;

    double x = static_cast<double>(rabs) * kWi[idx];
    if (negative) x = -x;

    // Fast path (~99.3%): the point lies inside the part of the layer that
    // is entirely under the density curve.
    if (rabs < kKi[idx]) return x;

    if (idx == 0) {
      // Base strip overflow: sample the tail beyond r (Marsaglia's method).
      // log1p(-u) is log(1 - u), which stays finite because u < 1.
      for (;;) {
        const double xx = -kZigguratNorInvR * std::log1p(-next_double());
        const double yy = -std::log1p(-next_double());
        if (yy + yy > xx * xx) {
          // The sign comes from a bit of rabs, not from `negative`, to match
          // NumPy exactly.
          return ((rabs >> 8) & 0x1) ? -(kZigguratNorR + xx)
                                     : kZigguratNorR + xx;
        }
      }
    }

    // Wedge: the point is in the sliver between the layer's inner rectangle
    // and the curve. Accept it if a uniform height under the layer falls
    // below the density at x; otherwise start over with a fresh word.
    //
    // Caveat: when targeting CPUs with FMA (-march=haswell, aarch64) the
    // compiler may fuse this multiply-add into one rounding. That can move y
    // by one ulp, which flips the comparison only with probability ~2^-52 per
    // wedge draw, so the stream is unaffected in practice; build with
    // -ffp-contract=off for strict parity with NumPy's x86-64 build.
    const double y = (kFi[idx - 1] - kFi[idx]) * next_double() + kFi[idx];
    if (y < std::exp(-0.5 * x * x)) return x;
  }
}

Tensor2 NumpyRng::normal_matrix(std::size_t rows, std::size_t cols,
                                std::size_t fan_in) {
  if (rows == 0) {
    throw std::invalid_argument("normal_matrix: rows=0 must be positive");
  }
  if (cols == 0) {
    throw std::invalid_argument("normal_matrix: cols=0 must be positive");
  }
  if (fan_in == 0) {
    throw std::invalid_argument("normal_matrix: fan_in=0 must be positive");
  }

  // The scale is computed in double and rounded to float once, as NumPy 1.x
  // casts the float64 scalar 1/np.sqrt(f) down to the float32 array's type.
  const float scale =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));

  Tensor2 w = Tensor2::from_shape({rows, cols});
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      // Round each draw to float first (.astype(np.float32)), then multiply
      // in float.
      w(i, j) = static_cast<float>(standard_normal()) * scale;
    }
  }
  return w;
}

}  // namespace mha
