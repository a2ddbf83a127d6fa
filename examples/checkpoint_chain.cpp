// Gradient checkpointing on a deep chain: the same gradient, less memory.
//
// 32 layers h <- tanh(W_k h) on a 256 x 128 batch. Without checkpointing the tape keeps every
// layer's input and output until the backward pass; with tenax::checkpoint over segments of 8
// layers it keeps only the 4 segment inputs and recomputes one segment at a time in the backward
// pass (one extra forward). The allocator's statistics show the peak.
#include <cstdio>
#include <vector>

#include <tenax/tenax.hpp>

namespace tx = tenax;
using Mat = tx::Tensor<double>;

int main() {
  constexpr int layers = 32, segment = 8;
  std::vector<Mat> W;
  for (int k = 0; k < layers; ++k) W.push_back(0.06 * Mat::randn({256, 256}, 10 + static_cast<std::uint64_t>(k)));
  auto run = [&](const Mat& h0, int from, int to) {
    Mat h = h0;
    for (int k = from; k < to; ++k) h = tx::tanh(tx::matmul(W[static_cast<std::size_t>(k)], h));
    return h;
  };
  auto plain = [&](const Mat& x) { return tx::sum(tx::square(run(x, 0, layers))); };
  auto checkpointed = [&](const Mat& x) {
    Mat h = x;
    for (int s = 0; s < layers; s += segment)
      h = tx::checkpoint([&, s](const Mat& v) { return run(v, s, s + segment); }, h);
    return tx::sum(tx::square(h));
  };
  const Mat x = Mat::randn({256, 128}, 1);
  auto measure = [&](auto loss, const char* what) {
    tx::reset_allocator_stats();
    const std::int64_t base = tx::allocator_stats().bytes_live;
    Mat g = tx::grad(loss, x);
    const double mib = static_cast<double>(tx::allocator_stats().bytes_peak - base) / (1 << 20);
    std::printf("%-14s peak %.1f MiB above the inputs\n", what, mib);
    return std::pair{g, mib};
  };
  const auto [g0, m0] = measure(plain, "no checkpoint");
  const auto [g1, m1] = measure(checkpointed, "checkpoint");
  const bool same = g0.to_vector() == g1.to_vector();
  std::printf("gradients identical bit for bit: %s; peak ratio %.2f\n", same ? "yes" : "no", m1 / m0);
  return same && m1 < 0.5 * m0 ? 0 : 1;
}
