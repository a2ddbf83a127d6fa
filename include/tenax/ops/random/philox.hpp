#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC11;
// the Random123 reference) and the draws built on it. Plain functions and structs, compiled for the
// host and by the CUDA backend (cuda/src/random.cu), so both devices produce the same integers.
//
// A call of a random op with generator state (seed, offset) and n elements draws element i from the
// block philox(counter = {lo(offset + i), hi(offset + i), attempt, 0}, key = {lo(seed), hi(seed)}):
// element i depends only on (seed, offset, i), never on the device or the thread count. A call
// consumes n counters (the generator's offset advances by n); attempt is 0 except in randint's
// rejection loop.
#include <cstdint>

#include "tenax/ops/functors.hpp"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif
namespace tenax::fn {

struct Philox4 {
  std::uint32_t v[4];
};

// The 128-bit block of counter c under key k.
TENAX_HD inline Philox4 philox4x32_10(Philox4 c, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += W0;
      k1 += W1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(M0) * c.v[0], p1 = static_cast<std::uint64_t>(M1) * c.v[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// The stream of one call: seed and first counter.
struct PhiloxStream {
  std::uint64_t seed = 0, offset = 0;
  TENAX_HD Philox4 block(std::int64_t i, std::uint32_t attempt = 0) const {
    const std::uint64_t n = offset + static_cast<std::uint64_t>(i);
    return philox4x32_10(Philox4{{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n >> 32), attempt, 0}},
                         static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  }
};

// Uniform in [0, 1): the top 24 bits of a word (float) or 53 bits of two (double), exact.
TENAX_HD inline float unit_float(std::uint32_t a) { return static_cast<float>(a >> 8) * (1.0f / 16777216.0f); }
TENAX_HD inline double unit_double(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t x = (static_cast<std::uint64_t>(a) << 32) | b;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
}

// The draws: f(i, out) writes element i's `parts` numbers (real and imaginary parts of a complex
// element) at out. R is the real type (float or double).
// The p-th uniform of a block: word p (float), words 2p and 2p + 1 (double).
template <class R>
TENAX_HD inline R unit_of(const Philox4& b, int p) {
  if constexpr (sizeof(R) == 4)
    return unit_float(b.v[p]);
  else
    return unit_double(b.v[2 * p], b.v[2 * p + 1]);
}

template <class R, int Parts>
struct UniformDraw {
  static constexpr int parts = Parts;
  PhiloxStream s;
  TENAX_HD void operator()(std::int64_t i, R* out) const {
    const Philox4 b = s.block(i);
    for (int p = 0; p < Parts; ++p) out[p] = unit_of<R>(b, p);
  }
};

// Standard normal by Box-Muller from two uniforms: r = sqrt(-2 log(1 - u1)), t = 2 pi u2; a real
// element is r cos t, a complex one (r cos t, r sin t) / sqrt(2) (each part N(0, 1/2), E|z|^2 = 1).
template <class R, int Parts>
struct NormalDraw {
  static constexpr int parts = Parts;
  PhiloxStream s;
  TENAX_HD void operator()(std::int64_t i, R* out) const {
    const Philox4 b = s.block(i);
    const R r = math::sqrt_(R(-2) * math::log_(R(1) - unit_of<R>(b, 0)));
    const R t = R(6.283185307179586476925286766559) * unit_of<R>(b, 1);
    if constexpr (Parts == 1) {
      out[0] = r * math::cos_(t);
    } else {
      const R h = R(0.70710678118654752440084436210485);
      out[0] = h * r * math::cos_(t);
      out[1] = h * r * math::sin_(t);
    }
  }
};

// Uniform integers in [low, low + range) without bias: a 64-bit draw x is kept when x >= 2^64 mod
// range (so every residue has the same number of preimages) and gives low + x mod range; a
// rejected element tries the block's second 64 bits, then the blocks of attempts 1, 2, ...
// (each attempt rejects with probability < 1/2). range = 0 stands for 2^64.
template <class I>
struct RandintDraw {
  static constexpr int parts = 1;
  PhiloxStream s;
  std::int64_t low = 0;
  std::uint64_t range = 0;
  TENAX_HD void operator()(std::int64_t i, I* out) const {
    const std::uint64_t threshold = range == 0 ? 0 : (0 - range) % range;
    for (std::uint32_t attempt = 0;; ++attempt) {
      const Philox4 b = s.block(i, attempt);
      for (int h = 0; h < 2; ++h) {
        const std::uint64_t x = (static_cast<std::uint64_t>(b.v[2 * h]) << 32) | b.v[2 * h + 1];
        if (x >= threshold) {
          *out =
              static_cast<I>(static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + (range == 0 ? x : x % range)));
          return;
        }
      }
    }
  }
};

}  // namespace tenax::fn
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
