#pragma once
// permute_rows: out[i, :] = x[perm[i], :] for each matrix of a batch (perm is m x batch, 0-based);
// and the conversion from LAPACK pivots (sequential 1-based row interchanges) to such a permutation.
#include "tenax/ad/apply.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace detail {

// perm such that (P^T A)[i, :] = A[perm[i], :] for getrf's A = P L U; m x batch, int64.
// LAPACK's 1-based row interchanges -> the permutation they apply (ops without derivatives, so
// that a trace records them instead of baking in the pivots it saw).
struct PivotsToPermutation {
  static constexpr const char* name = "pivots_to_permutation";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  std::int64_t m;
  Tensor<std::int64_t> forward(const Tensor<std::int32_t>& piv) const {
    const Tensor<std::int32_t> p = contiguous(piv);
    Shape s{m};
    for (int d = 1; d < p.dim(); ++d) s.push_back(p.shape()[d]);
    Tensor<std::int64_t> perm = Tensor<std::int64_t>::empty(s, p.device());
    dispatch<&PivotsToPermutation::host, &PivotsToPermutation::generic>(p.device(), *this, perm, p);
    return perm;
  }
  // One captured kernel: the check, then the interchanges applied to the identity.
  static void host(const PivotsToPermutation& op, const Tensor<std::int64_t>& perm, const Tensor<std::int32_t>& p) {
    const std::int64_t k = p.shape()[0], nb = numel_of(Shape(p.shape().begin() + 1, p.shape().end()));
    auto run = [m = op.m, k, nb, shape = p.shape()](char* const* ptr) {
      std::int64_t* out = reinterpret_cast<std::int64_t*>(ptr[0]);
      const std::int32_t* pv = reinterpret_cast<const std::int32_t*>(ptr[1]);
      check_pivots(name, pv, m, shape);
      for (std::int64_t b = 0; b < nb; ++b) permutation_of_pivots(pv + b * k, k, m, out + b * m);
    };
    record_kernel(run, perm, p);
  }
  // The backend's kernel, its check deferred to the device's next read.
  static void generic(const PivotsToPermutation& op, const Tensor<std::int64_t>& perm, const Tensor<std::int32_t>& p) {
    batched::check_pivots_on_device(name, p, op.m, perm, Tensor<std::int32_t>());
  }
};

struct InversePermutation {
  static constexpr const char* name = "inverse_permutation";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  Tensor<std::int64_t> forward(const Tensor<std::int64_t>& perm) const {
    const Tensor<std::int64_t> p = contiguous(perm);
    Tensor<std::int64_t> inv = Tensor<std::int64_t>::empty(p.shape(), p.device());
    dispatch<&InversePermutation::host, &InversePermutation::generic>(p.device(), inv, p);
    return inv;
  }
  static void host(const Tensor<std::int64_t>& inv, const Tensor<std::int64_t>& p) {
    const std::int64_t m = p.shape()[0], nb = numel_of(Shape(p.shape().begin() + 1, p.shape().end()));
    auto run = [m, nb](char* const* ptr) {
      std::int64_t* out = reinterpret_cast<std::int64_t*>(ptr[0]);
      const std::int64_t* q = reinterpret_cast<const std::int64_t*>(ptr[1]);
      for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t i = 0; i < m; ++i) out[b * m + q[b * m + i]] = i;
    };
    record_kernel(run, inv, p);
  }
  static void generic(const Tensor<std::int64_t>& inv, const Tensor<std::int64_t>& p) {
    if (inv.numel() > 0) batched::inverse_permutation(p, inv);
  }
};

inline Tensor<std::int64_t> pivots_to_permutation(const Tensor<std::int32_t>& piv, std::int64_t m) {
  return apply_nondiff(PivotsToPermutation{m}, piv);
}

inline Tensor<std::int64_t> inverse_permutation(const Tensor<std::int64_t>& perm) {
  return apply_nondiff(InversePermutation{}, perm);
}

}  // namespace detail

namespace ops {

struct PermuteRows {
  static constexpr const char* name = "permute_rows";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<std::int64_t>& perm) const {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    if (out.numel() == 0) return out;
    detail::dispatch<&PermuteRows::host<T>, &PermuteRows::generic<T>>(x.device(), out, x, perm);
    return out;
  }
  // One captured kernel reading x in place (any strides).
  template <class T>
  static void host(const Tensor<T>& out, const Tensor<T>& x, const Tensor<std::int64_t>& perm) {
    const std::int64_t m = x.shape()[0], n = x.shape()[1];
    const Tensor<std::int64_t> p = contiguous(perm);
    auto run = [m, n, off = detail::batch_offsets(x, detail::mat_batch_shape(x.shape())), s0 = x.strides()[0],
                s1 = x.strides()[1]](char* const* ptr) {
      const std::int64_t* perm_data = reinterpret_cast<const std::int64_t*>(ptr[2]);
      for (std::size_t b = 0; b < off.size(); ++b) {
        const T* src = reinterpret_cast<const T*>(ptr[1]) + off[b];
        T* dst = reinterpret_cast<T*>(ptr[0]) + static_cast<std::int64_t>(b) * m * n;
        const std::int64_t* q = perm_data + static_cast<std::int64_t>(b) * m;
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) dst[i + j * m] = src[q[i] * s0 + j * s1];
      }
    };
    detail::record_kernel(run, out, x, p);
  }
  // The backend's kernel on contiguous copies.
  template <class T>
  static void generic(const Tensor<T>& out, const Tensor<T>& x, const Tensor<std::int64_t>& perm) {
    detail::batched::permute_rows(contiguous(x), contiguous(perm), out);
  }
  // A permutation is linear and orthogonal: dy = permute_rows(dx, perm);
  // gx = permute_rows(gy, perm^-1).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0(), c.x1());
  }
  template <class C>
  auto vjp(const C& c) const {
    return std::tuple{detail::apply(*this, c.gy0(), detail::inverse_permutation(c.x1())), Tensor<std::int64_t>()};
  }
};

// The rows of each matrix of x interchanged as getrf's pivots say (k x batch, 1-based, like x's
// batch): P^T x for A = P L U, or P x when inverse. One op for what pivots_to_permutation,
// inverse_permutation and permute_rows do in turn (an LU rule's row permutations: one kernel
// instead of two or three, and no permutation buffer).
struct PivotRows {
  static constexpr const char* name = "pivot_rows";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  bool inverse = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<std::int32_t>& piv) const {
    TENAX_CHECK(x.dim() >= 2 && piv.dim() == x.dim() - 1 && piv.shape()[0] <= x.shape()[0] &&
                    Shape(piv.shape().begin() + 1, piv.shape().end()) == detail::mat_batch_shape(x.shape()),
                name, "pivots of shape ", piv.shape(), " do not fit rows of shape ", x.shape());
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    if (out.numel() == 0) return out;
    detail::dispatch<&PivotRows::host<T>, &PivotRows::generic<T>>(x.device(), *this, out, x, piv);
    return out;
  }
  // One captured kernel: the pivots checked, each matrix's permutation (or its inverse, for P x)
  // built on the stack, the rows gathered by it reading x in place (any strides).
  template <class T>
  static void host(const PivotRows& op, const Tensor<T>& out, const Tensor<T>& x, const Tensor<std::int32_t>& piv) {
    const std::int64_t m = x.shape()[0], n = x.shape()[1];
    const Tensor<std::int32_t> p = contiguous(piv);
    auto run = [m, n, inverse = op.inverse, off = detail::batch_offsets(x, detail::mat_batch_shape(x.shape())),
                s0 = x.strides()[0], s1 = x.strides()[1], shape = p.shape()](char* const* ptr) {
      const std::int32_t* pv = reinterpret_cast<const std::int32_t*>(ptr[2]);
      detail::check_pivots(name, pv, m, shape);
      const std::int64_t k = shape[0];
      // The rows to gather: q for P^T x (getrf's interchanges applied to the identity), its
      // inverse r for P x. (No allocation up to 16 rows.)
      detail::SmallVec<std::int64_t, 16> q(static_cast<std::size_t>(m)), r(inverse ? q.size() : 0);
      for (std::size_t b = 0; b < off.size(); ++b) {
        const T* src = reinterpret_cast<const T*>(ptr[1]) + off[b];
        T* dst = reinterpret_cast<T*>(ptr[0]) + static_cast<std::int64_t>(b) * m * n;
        detail::permutation_of_pivots(pv + static_cast<std::int64_t>(b) * k, k, m, q.data());
        if (inverse)
          for (std::int64_t i = 0; i < m; ++i) r[static_cast<std::size_t>(q[static_cast<std::size_t>(i)])] = i;
        const std::int64_t* g = inverse ? r.data() : q.data();
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) dst[i + j * m] = src[g[i] * s0 + j * s1];
      }
    };
    detail::record_kernel(run, out, x, p);
  }
  // The backend's kernels: the permutation from the checked pivots (inverted for P x), then the
  // rows of a contiguous copy of x gathered by it.
  template <class T>
  static void generic(const PivotRows& op, const Tensor<T>& out, const Tensor<T>& x, const Tensor<std::int32_t>& piv) {
    const Tensor<std::int32_t> p = contiguous(piv);
    Shape s{x.shape()[0]};
    for (int d = 1; d < p.dim(); ++d) s.push_back(p.shape()[d]);
    Tensor<std::int64_t> perm = Tensor<std::int64_t>::empty(s, p.device());
    detail::batched::check_pivots_on_device(name, p, x.shape()[0], perm, Tensor<std::int32_t>());
    if (op.inverse) {
      Tensor<std::int64_t> inv = Tensor<std::int64_t>::empty(s, p.device());
      detail::batched::inverse_permutation(perm, inv);
      perm = inv;
    }
    detail::batched::permute_rows(contiguous(x), perm, out);
  }
  // Linear and orthogonal in x: dy = P^T dx (P dx); gx = P gy (P^T gy).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0(), c.x1());
  }
  template <class C>
  auto vjp(const C& c) const {
    return std::tuple{detail::apply(PivotRows{!inverse}, c.gy0(), c.x1()), Tensor<std::int32_t>()};
  }
};

}  // namespace ops

namespace detail {
template <class T>
Tensor<T> permute_rows(const Tensor<T>& x, const Tensor<std::int64_t>& perm) {
  return apply(ops::PermuteRows{}, x, perm);
}
// P^T x (inverse: P x) for the pivots of getrf's A = P L U (k x batch, x's batch).
template <class T>
Tensor<T> pivot_rows(const Tensor<T>& x, const Tensor<std::int32_t>& piv, bool inverse = false) {
  return apply(ops::PivotRows{inverse}, x, piv);
}
}  // namespace detail
}  // namespace tenax
