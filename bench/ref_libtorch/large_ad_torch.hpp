#pragma once
// The libtorch side of the large_ad cases, shared by the reference drivers that reuse them
// (large_ad_torch.cpp, jvp_vjp_torch.cpp): conversions between the row-major plain vectors of
// large_ad_cases.hpp and torch tensors, and the losses (see large_ad_torch.cpp). Compiled only into
// the libtorch reference objects (C++17, libtorch's flags).
#include <torch/torch.h>

#include <vector>

#include "large_ad_cases.hpp"

namespace tenax_bench::large_ad {

inline torch::TensorOptions f64() { return torch::TensorOptions().dtype(torch::kFloat64); }

inline torch::Tensor to_torch(const std::vector<double>& rm, int rows, int cols) {
  return torch::from_blob(const_cast<double*>(rm.data()), {rows, cols}, f64()).clone();
}

inline std::vector<double> to_vec(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

inline torch::Tensor loss_of(Case c, const torch::Tensor& A, const torch::Tensor& B) {
  switch (c) {
    case Case::matmul:
      return torch::matmul(A, B).sum();
    case Case::solve:
      return torch::linalg_solve(A, B).sum();
    case Case::qr: {
      auto [Q, R] = torch::linalg_qr(A);
      return Q.sum() + R.sum();
    }
    case Case::eigh: {
      auto [w, V] = torch::linalg_eigh(A);
      torch::Tensor s;
      {
        torch::NoGradGuard no_grad;
        s = V.gather(0, V.abs().argmax(0, true)).sign();
      }
      return w.sum() + (V * s).sum();
    }
    case Case::eigvalsh:
      return torch::linalg_eigvalsh(A).sum();
    case Case::svdvals:
      return torch::linalg_svdvals(A).sum();
    case Case::lu: {
      auto [P, L, U] = torch::linalg_lu(A);
      return L.sum() + U.sum();
    }
    case Case::cholesky:
      return torch::linalg_cholesky(A).sum();
    case Case::lstsq:
      return std::get<0>(torch::linalg_lstsq(A, B)).sum();
    case Case::eigvals:
      return torch::real(torch::linalg_eigvals(A)).sum();
    case Case::matrix_exp:
      return torch::linalg_matrix_exp(A).sum();
  }
  return {};
}

}  // namespace tenax_bench::large_ad
