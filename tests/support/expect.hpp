#pragma once
// Closeness checks shared by the tests. Every one takes (actual, expected, tolerance(s)[, what]):
//   expect_close(a, b, rtol, what)               ||a - b|| <= rtol max(||a||, ||b||)
//   expect_close(a, b, rtol, atol, what)         ... + atol
//   expect_close_elementwise(a, b, tol[, what])  |a_i - b_i| <= tol max(1, |b_i|) for every i
// a and b are tensors of the same shape, or (expect_close) the element lists that values() gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include <tenax/tenax.hpp>

namespace tenax::testing {

using Vec = std::vector<std::complex<double>>;

// All elements as complex128, column-major.
template <class T>
Vec values(const Tensor<T>& t) {
  Vec r;
  for (const T& v : t.to_vector()) r.emplace_back(std::complex<double>(v));
  return r;
}
inline double dot(const Vec& a, const Vec& b) {  // Re <a, b>
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::real(std::conj(a[i]) * b[i]);
  return s;
}
inline double norm(const Vec& a) { return std::sqrt(dot(a, a)); }

// ||a - b|| <= rtol max(||a||, ||b||) + atol (2-norms), reported with context.
inline void expect_close(const Vec& a, const Vec& b, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  Vec d = a;
  for (std::size_t i = 0; i < d.size(); ++i) d[i] -= b[i];
  const double err = norm(d), scale = std::max(norm(a), norm(b));
  EXPECT_LE(err, rtol * scale + atol) << what << ": |a-b| = " << err << ", |a| = " << norm(a) << ", |b| = " << norm(b)
                                      << " (rtol " << rtol << ", atol " << atol << ")";
}
inline void expect_close(const Vec& a, const Vec& b, double rtol, const std::string& what) {
  expect_close(a, b, rtol, 0, what);
}
// The same for tensors (Frobenius norms), which must also have the same shape.
template <class T>
void expect_close(const Tensor<T>& a, const Tensor<T>& b, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  expect_close(values(a), values(b), rtol, atol, what);
}
template <class T>
void expect_close(const Tensor<T>& a, const Tensor<T>& b, double rtol, const std::string& what) {
  expect_close(a, b, rtol, 0, what);
}

// Elementwise |a_i - b_i| <= tol max(1, |b_i|) (absolute near 0, relative elsewhere) over defined
// tensors of the same shape.
template <class T>
void expect_close_elementwise(const Tensor<T>& a, const Tensor<T>& b, double tol = 1e-12,
                              const std::string& what = "") {
  ASSERT_TRUE(a.defined()) << what;
  ASSERT_TRUE(b.defined()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const auto va = a.to_vector(), vb = b.to_vector();
  for (std::size_t i = 0; i < va.size(); ++i)
    EXPECT_LE(std::abs(va[i] - vb[i]), tol * std::max(1.0, static_cast<double>(std::abs(vb[i]))))
        << what << (what.empty() ? "" : ": ") << "element " << i << ": " << va[i] << " vs " << vb[i];
}

}  // namespace tenax::testing
