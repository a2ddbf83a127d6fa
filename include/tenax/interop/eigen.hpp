#pragma once
// Eigen interop (needs the Eigen 3.4 headers; not part of the umbrella header).
//
//   auto m = tenax::as_eigen(t);      // zero-copy read-only Eigen::Map of a 2-D CPU tensor
//   auto w = tenax::as_eigen_mut(t);  // zero-copy writable Eigen::Map (writes bypass AD)
//   auto u = tenax::from_eigen(A * B.transpose());  // a new m x n tensor holding the values
//
// The maps take the tensor's strides as they are (Eigen::Stride<Dynamic, Dynamic>: inner stride =
// strides[0], outer stride = strides[1]), so transposed, sliced and broadcast views map without a
// copy. A map does not keep the tensor's storage alive: keep a tensor handle for as long as the map
// is used (the rvalue overloads are deleted so that a temporary cannot be mapped by mistake).
#include <Eigen/Core>

#include "tenax/tenax.hpp"

#if !EIGEN_VERSION_AT_LEAST(3, 4, 0)
#error "tenax/interop/eigen.hpp needs Eigen 3.4 or newer"
#endif

namespace tenax {

template <Scalar T>
using EigenMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using EigenStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
// A writable view of a 2-D tensor.
template <Scalar T>
using EigenMap = Eigen::Map<EigenMatrix<T>, Eigen::Unaligned, EigenStride>;
// A read-only view of a 2-D tensor.
template <Scalar T>
using EigenConstMap = Eigen::Map<const EigenMatrix<T>, Eigen::Unaligned, EigenStride>;

namespace detail {

template <Scalar T>
void check_eigen_mappable(const Tensor<T>& t, const char* op) {
  TENAX_CHECK(t.defined(), op, "undefined tensor");
  TENAX_CHECK(t.device().is_cpu(), op, "needs a CPU tensor, got one on ", t.device().str());
  TENAX_CHECK(t.dim() == 2, op, "needs a 2-D tensor, got shape ", t.shape());
}

}  // namespace detail

// A read-only zero-copy Eigen::Map of a 2-D CPU tensor with any strides.
template <Scalar T>
EigenConstMap<T> as_eigen(const Tensor<T>& t) {
  detail::check_eigen_mappable(t, "as_eigen");
  return EigenConstMap<T>(t.data(), t.shape()[0], t.shape()[1], EigenStride(t.strides()[1], t.strides()[0]));
}
template <Scalar T>
EigenConstMap<T> as_eigen(Tensor<T>&&) = delete;  // the map would outlive the tensor

// A writable zero-copy Eigen::Map of a 2-D CPU tensor with any strides. Writing through it changes
// every tensor that shares the storage and bypasses AD (like Tensor::mutable_data). Layouts in
// which two elements share one address (stride 0 along a dimension longer than 1, as made by
// expand) are rejected: a write to one element would change the others.
template <Scalar T>
EigenMap<T> as_eigen_mut(const Tensor<T>& t) {
  detail::check_eigen_mappable(t, "as_eigen_mut");
  for (int d = 0; d < 2; ++d)
    TENAX_CHECK(t.strides()[d] != 0 || t.shape()[d] <= 1, "as_eigen_mut", "tensor of shape ", t.shape(),
                " and strides ", t.strides(), " has overlapping elements (a broadcast view); clone it first");
  return EigenMap<T>(t.mutable_data(), t.shape()[0], t.shape()[1], EigenStride(t.strides()[1], t.strides()[0]));
}
template <Scalar T>
EigenMap<T> as_eigen_mut(Tensor<T>&&) = delete;  // the map would outlive the tensor

// A new rows x cols tensor (column-major, contiguous) holding the values of an Eigen matrix
// expression, evaluated straight into the tensor's storage. Vectors become rows x 1 or 1 x cols.
template <class Derived>
requires Scalar<typename Derived::Scalar> Tensor<typename Derived::Scalar> from_eigen(
    const Eigen::DenseBase<Derived>& m, Device dev = Device::cpu()) {
  using T = typename Derived::Scalar;
  Tensor<T> t = Tensor<T>::empty({static_cast<std::int64_t>(m.rows()), static_cast<std::int64_t>(m.cols())});
  if (t.numel() > 0) as_eigen_mut(t) = m.derived();
  return dev.is_cpu() ? t : t.to(dev);
}

}  // namespace tenax
