#pragma once
// Tensor<T>: a typed handle to a TensorImpl. Column-major by default with batch dimensions
// trailing; any strides are legal. Scalar type is the template parameter, the device a runtime
// value. Ops are free functions (tenax/ops/...); the view and AD members here forward to them.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tenax/core/device_fill.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/error.hpp"
#include "tenax/core/shape.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax {

template <Scalar T>
class Tensor;

namespace detail {
// Deterministic splitmix64 stream used by the seeded random constructors.
inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline double uniform01(std::uint64_t& s) { return (splitmix64(s) >> 11) * 0x1.0p-53; }
}  // namespace detail

// Views and AD entry points the members forward to (defined in tenax/ops and tenax/ad).
template <Scalar T>
Tensor<T> transpose(const Tensor<T>& x, int d0 = 0, int d1 = 1);
template <Scalar T>
Tensor<T> permute(const Tensor<T>& x, const Shape& order);
template <Scalar T>
Tensor<T> reshape(const Tensor<T>& x, const Shape& shape);
template <Scalar T>
Tensor<T> slice(const Tensor<T>& x, int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1);
template <Scalar T>
Tensor<T> diagonal(const Tensor<T>& x, std::int64_t offset = 0, int d0 = 0, int d1 = 1);
template <Scalar T>
Tensor<T> expand(const Tensor<T>& x, const Shape& shape);
template <Scalar T>
Tensor<T> squeeze(const Tensor<T>& x, int dim);
template <Scalar T>
Tensor<T> unsqueeze(const Tensor<T>& x, int dim);
template <Scalar T>
Tensor<T> contiguous(const Tensor<T>& x);
template <Scalar T>
Tensor<T> conj(const Tensor<T>& x);
template <Scalar T>
Tensor<T> to_device(const Tensor<T>& x, Device d);

template <Scalar T>
class Tensor {
 public:
  using value_type = T;
  static constexpr DType kDType = dtype_of<T>;

  Tensor() = default;
  // Wraps an untyped body; throws when its dtype is not T.
  explicit Tensor(detail::ImplPtr p) : impl_(std::move(p)) {
    TENAX_CHECK(!impl_ || impl_->dtype == kDType, "tensor", "dtype mismatch: body holds ", dtype_name(impl_->dtype),
                ", handle is ", dtype_traits<T>::name);
  }

  // ---- construction -------------------------------------------------------------------------
  static Tensor empty(const Shape& shape, Device dev = Device::cpu()) { return empty_for(shape, dev, "empty"); }
  static Tensor full(const Shape& shape, T value, Device dev = Device::cpu()) {
    return full_for(shape, value, dev, "full");
  }
  static Tensor zeros(const Shape& shape, Device dev = Device::cpu()) { return full_for(shape, T(0), dev, "zeros"); }
  static Tensor ones(const Shape& shape, Device dev = Device::cpu()) { return full_for(shape, T(1), dev, "ones"); }
  static Tensor scalar(T value, Device dev = Device::cpu()) { return full_for(Shape{}, value, dev, "scalar"); }
  // m x n identity (n = -1, the default: m).
  static Tensor eye(std::int64_t m, std::int64_t n = -1, Device dev = Device::cpu()) {
    if (n == -1) n = m;
    Tensor t = full_for({m, n}, T(0), Device::cpu(), "eye");
    for (std::int64_t i = 0; i < std::min(m, n); ++i) t.mutable_data()[i + i * m] = T(1);
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }
  // 0, 1, ..., n-1 (rank 1).
  static Tensor arange(std::int64_t n, Device dev = Device::cpu()) {
    Tensor t = empty_for({n}, Device::cpu(), "arange");
    for (std::int64_t i = 0; i < n; ++i) t.mutable_data()[i] = static_cast<T>(i);
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }
  // Values listed in column-major order (first index fastest).
  template <class R>
  static Tensor from_col_major(const Shape& shape, const R& values, Device dev = Device::cpu()) {
    Tensor t = empty_for(shape, Device::cpu(), "from_col_major");
    TENAX_CHECK(static_cast<std::int64_t>(std::size(values)) == t.numel(), "from_col_major", "shape ", shape, " needs ",
                t.numel(), " values, got ", std::size(values));
    std::int64_t i = 0;
    for (const auto& v : values) t.mutable_data()[i++] = static_cast<T>(v);
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }
  static Tensor from_col_major(const Shape& shape, std::initializer_list<T> values, Device dev = Device::cpu()) {
    return from_col_major<std::initializer_list<T>>(shape, values, dev);
  }
  // Values listed in row-major order (last index fastest), stored column-major.
  template <class R>
  static Tensor from_row_major(const Shape& shape, const R& values, Device dev = Device::cpu()) {
    Tensor t = empty_for(shape, Device::cpu(), "from_row_major");
    TENAX_CHECK(static_cast<std::int64_t>(std::size(values)) == t.numel(), "from_row_major", "shape ", shape, " needs ",
                t.numel(), " values, got ", std::size(values));
    std::vector<std::int64_t> idx(shape.size(), 0);
    const Strides st = col_major_strides(shape);
    for (const auto& v : values) {
      std::int64_t off = 0;
      for (int d = 0; d < shape.size(); ++d) off += idx[d] * st[d];
      t.mutable_data()[off] = static_cast<T>(v);
      for (int d = shape.size() - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }
  static Tensor from_row_major(const Shape& shape, std::initializer_list<T> values, Device dev = Device::cpu()) {
    return from_row_major<std::initializer_list<T>>(shape, values, dev);
  }
  // Seeded standard normal entries (complex: real and imaginary parts each N(0, 1/2)).
  static Tensor randn(const Shape& shape, std::uint64_t seed, Device dev = Device::cpu()) {
    Tensor t = empty_for(shape, Device::cpu(), "randn");
    std::uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    auto normal = [&s] {
      double u1 = detail::uniform01(s), u2 = detail::uniform01(s);
      return std::sqrt(-2.0 * std::log(u1 + 0x1.0p-60)) * std::cos(6.283185307179586 * u2);
    };
    for (std::int64_t i = 0, n = t.numel(); i < n; ++i) {
      if constexpr (is_complex_v<T>) {
        double a = normal() * M_SQRT1_2, b = normal() * M_SQRT1_2;
        t.mutable_data()[i] = T(static_cast<real_t<T>>(a), static_cast<real_t<T>>(b));
      } else {
        t.mutable_data()[i] = static_cast<T>(normal());
      }
    }
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }
  // Seeded uniform entries in [lo, hi) (complex: both parts).
  static Tensor rand(const Shape& shape, std::uint64_t seed, double lo = 0, double hi = 1, Device dev = Device::cpu()) {
    Tensor t = empty_for(shape, Device::cpu(), "rand");
    std::uint64_t s = seed * 0x2545F4914F6CDD1Dull + 7;
    for (std::int64_t i = 0, n = t.numel(); i < n; ++i) {
      if constexpr (is_complex_v<T>) {
        double a = lo + (hi - lo) * detail::uniform01(s), b = lo + (hi - lo) * detail::uniform01(s);
        t.mutable_data()[i] = T(static_cast<real_t<T>>(a), static_cast<real_t<T>>(b));
      } else {
        t.mutable_data()[i] = static_cast<T>(lo + (hi - lo) * detail::uniform01(s));
      }
    }
    return t.to(dev);  // filled on the host, then copied (no copy for the CPU)
  }

  // ---- metadata (an undefined, default-constructed tensor raises an Error on each) -------------
  bool defined() const { return static_cast<bool>(impl_); }
  const Shape& shape() const { return body().shape; }
  int dim() const { return body().rank(); }
  std::int64_t size(int d) const { return body().shape[wrap_axis(d, dim(), "size")]; }
  std::int64_t numel() const { return body().numel(); }
  const Strides& strides() const { return body().strides; }
  std::int64_t offset() const { return body().offset; }
  Device device() const { return body().device; }
  DType dtype() const { return kDType; }
  bool is_contiguous() const { return body().is_contiguous(); }
  const detail::ImplPtr& impl() const { return impl_; }

 private:
  const detail::TensorImpl& body() const {
    if (!impl_) [[unlikely]]
      detail::fail("tensor", "undefined tensor (default-constructed): it has no shape, dtype, device or data");
    return *impl_;
  }

 public:
  // ---- data access -----------------------------------------------------------------------------
  // data() and mutable_data() point into the tensor's device memory; at(), item() and to_vector()
  // read a device tensor through a copy to the host.
  const T* data() const { return static_cast<const T*>(body().data()); }
  // Writable pointer to the first element. Writing through it bypasses AD: meant for filling
  // freshly created tensors.
  T* mutable_data() const { return static_cast<T*>(body().data()); }
  // Element at a multi-index (bounds checked).
  T at(std::initializer_list<std::int64_t> idx) const {
    TENAX_CHECK(defined(), "at", "undefined tensor (default-constructed)");
    TENAX_CHECK(static_cast<int>(idx.size()) == dim(), "at", "index of rank ", idx.size(), " for tensor of shape ",
                shape());
    const Tensor c = to(Device::cpu());
    std::int64_t off = 0;
    int d = 0;
    for (auto i : idx) {
      TENAX_CHECK(i >= 0 && i < shape()[d], "at", "index ", i, " out of range in dimension ", d, " of shape ", shape());
      off += i * c.strides()[d++];
    }
    return c.data()[off];
  }
  // The single element of a one-element tensor.
  T item() const {
    TENAX_CHECK(defined(), "item", "undefined tensor (default-constructed)");
    TENAX_CHECK(numel() == 1, "item", "tensor of shape ", shape(), " has ", numel(), " elements");
    const Tensor c = to(Device::cpu());
    std::int64_t off = 0;  // all dimensions have size 1
    return c.data()[off];
  }
  // All elements in column-major order.
  std::vector<T> to_vector() const {
    TENAX_CHECK(defined(), "to_vector", "undefined tensor (default-constructed)");
    const Tensor c = tenax::contiguous(to(Device::cpu()));
    return std::vector<T>(c.data(), c.data() + c.numel());
  }

  // ---- views --------------------------------------------------------------------------------
  Tensor transpose(int d0 = 0, int d1 = 1) const { return tenax::transpose(*this, d0, d1); }
  Tensor mT() const { return tenax::transpose(*this, 0, 1); }
  Tensor mH() const { return tenax::conj(tenax::transpose(*this, 0, 1)); }
  Tensor permute(const Shape& order) const { return tenax::permute(*this, order); }
  Tensor reshape(const Shape& s) const { return tenax::reshape(*this, s); }
  Tensor slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const {
    return tenax::slice(*this, dim, start, stop, step);
  }
  Tensor diagonal(std::int64_t off = 0, int d0 = 0, int d1 = 1) const { return tenax::diagonal(*this, off, d0, d1); }
  Tensor expand(const Shape& s) const { return tenax::expand(*this, s); }
  Tensor squeeze(int d) const { return tenax::squeeze(*this, d); }
  Tensor unsqueeze(int d) const { return tenax::unsqueeze(*this, d); }
  Tensor contiguous() const { return tenax::contiguous(*this); }
  Tensor to(Device d) const { return tenax::to_device(*this, d); }

  // ---- automatic differentiation ------------------------------------------------------------
  // A new leaf sharing this tensor's data that records gradients (on == false: a plain copy of
  // the handle without AD state).
  Tensor requires_grad(bool on = true) const;
  // Whether this tensor takes part in reverse mode (a leaf that requires grad or a recorded result).
  bool tracks_grad() const { return impl_ && impl_->requires_grad; }
  bool is_leaf() const;
  // Accumulated gradient of a leaf after backward(); undefined before.
  Tensor grad() const;
  // Clears the accumulated gradient of a leaf.
  void zero_grad() const;
  // Reverse pass from this one-element tensor (seed 1), or with an explicit cotangent. With
  // create_graph, a leaf's accumulated gradient is recorded, and its tape reaches the leaf again: a
  // reference cycle (as in PyTorch) that keeps the whole graph alive until zero_grad() is called
  // on the leaf. grad() / vjp (ad/functional.hpp) return gradients instead and make no cycle.
  void backward() const;
  void backward(const Tensor& cotangent, bool create_graph = false) const;
  // The same data without AD state.
  Tensor detach() const;
  // Forward-mode tangent, undefined if none.
  Tensor tangent() const { return impl_ && impl_->tangent ? Tensor(impl_->tangent) : Tensor(); }

 private:
  // empty/full reporting errors under the name of the constructor the user called. Throws when a
  // dimension is negative or the element or byte count overflows int64.
  static Tensor empty_for(const Shape& shape, Device dev, std::string_view op) {
    const std::int64_t n = checked_numel(shape, op);
    TENAX_CHECK(n <= INT64_MAX / static_cast<std::int64_t>(sizeof(T)), op, "shape ", shape, " of ",
                dtype_traits<T>::name, " needs more than 2^63 bytes");
    return Tensor(detail::make_impl(kDType, shape, dev));
  }
  static Tensor full_for(const Shape& shape, T value, Device dev, std::string_view op) {
    Tensor t = empty_for(shape, dev, op);
    detail::fill_elements(op, dev, static_cast<T*>(t.impl_->data()), t.numel(), value);
    return t;
  }

  detail::ImplPtr impl_;
};

namespace detail {
// Raises op's error when an input is an undefined (default-constructed) tensor. Ops that read an
// input's shape before detail::apply (which checks too) call it first, so the message names them.
template <class... Ts>
void check_defined(std::string_view op, const Ts&... xs) {
  if (!(... && xs.defined())) [[unlikely]]
    fail(op, "undefined input tensor (default-constructed)");
}
}  // namespace detail

namespace detail {
// An operand's shape in an error message, or "undefined" for an undefined tensor (which printing
// Shape{} would show as "[]", a valid 0-d shape).
struct ShapeOrUndefined {
  const TensorImpl* t;
};
inline std::ostream& operator<<(std::ostream& os, ShapeOrUndefined s) {
  return s.t ? os << s.t->shape : os << "undefined";
}
template <class T>
ShapeOrUndefined shape_or_undefined(const Tensor<T>& t) {
  return {t.impl().get()};
}
// " (f64 on cpu)": the dtype and device that an error message names after an input's shape.
template <class T>
std::string dtype_on(const Tensor<T>& x) {
  return std::string(" (") + dtype_traits<T>::name + " on " + x.device().str() + ")";
}
}  // namespace detail

// wrap_axis (core/shape.hpp) with the whole input in its message: shape, dtype and device.
template <Scalar T>
int wrap_axis(std::int64_t axis, const Tensor<T>& x, std::string_view op) {
  TENAX_CHECK(axis_in_range(axis, x.dim()), op, "axis ", axis, " out of range for a ", dtype_traits<T>::name,
              " tensor of shape ", x.shape(), " on ", x.device().str());
  return wrap_axis(axis, x.dim(), op);
}

}  // namespace tenax
