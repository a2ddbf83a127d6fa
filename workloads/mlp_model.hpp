#pragma once
// The mlp workload in tenax: one SGD step as a function of (W, b, x, t), run eagerly or compiled.
#include <tuple>

#include "mlp_cases.hpp"
#include "tenax/tenax.hpp"

namespace tenax_workloads::mlp {

using tenax::Tensor;

struct Data {
  Tensor<double> x, t, W0, b0;  // b0 is 1 x dout (broadcasts over the batch rows)
};

inline Data make_data(const Case& c) {
  return {Tensor<double>::from_row_major({c.batch, c.din}, x_values(c)),
          Tensor<double>::from_row_major({c.batch, c.dout}, t_values(c)),
          Tensor<double>::from_row_major({c.din, c.dout}, w0_values(c)),
          Tensor<double>::from_row_major({1, c.dout}, b0_values(c))};
}

// (loss, W - lr gW, b - lr gb): the loss, its gradients and the update, one step.
inline std::tuple<Tensor<double>, Tensor<double>, Tensor<double>> sgd_step(const Tensor<double>& W,
                                                                           const Tensor<double>& b,
                                                                           const Tensor<double>& x,
                                                                           const Tensor<double>& t) {
  auto loss = [&](const Tensor<double>& w, const Tensor<double>& bb) {
    return tenax::mean(tenax::square(tenax::relu(tenax::matmul(x, w) + bb) - t));
  };
  auto [l, g] = tenax::value_and_grad(loss, W, b);
  return {l, W - std::get<0>(g) * kLr, b - std::get<1>(g) * kLr};
}

// Trains for c.steps steps with `step` (sgd_step itself, or a compiled program of it); returns
// the last step's loss and the final parameters.
template <class Step>
std::tuple<double, Tensor<double>, Tensor<double>> train(const Case& c, const Data& d, Step&& step) {
  Tensor<double> W = d.W0, b = d.b0, l;
  for (int s = 0; s < c.steps; ++s) std::tie(l, W, b) = step(W, b, d.x, d.t);
  return {l.item(), W, b};
}

}  // namespace tenax_workloads::mlp
