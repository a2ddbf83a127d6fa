// The gradient-check harness must fail on wrong rules: deliberately broken ops, each caught by
// the check meant for it (and correct ops pass).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <type_traits>

#include "support/failures.hpp"
#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::testing::expect_ad;
using C = std::complex<double>;

namespace {

template <class X>
using value_of = typename std::remove_cvref_t<X>::value_type;

// exp whose VJP forgets the conjugate: right for real input, wrong for complex.
struct ExpNoConj {
  static constexpr const char* name = "exp_no_conj";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return tx::exp(x);
  }
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    return tx::mul(c.dx0(), c.y0());
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    return tx::mul(c.gy0(), c.y0());
  }
};

// sin whose JVP uses the wrong derivative (the VJP is right).
struct SinBadJvp {
  static constexpr const char* name = "sin_bad_jvp";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return tx::sin(x);
  }
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    return tx::mul(c.dx0(), tx::sin(c.x0()));
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    return tx::mul(c.gy0(), tx::conj(tx::cos(c.x0())));
  }
};

// y = A x with a fixed non-symmetric A, whose VJP forgets the transpose.
struct LinearNoTranspose {
  static constexpr const char* name = "linear_no_transpose";
  template <class T>
  static Tensor<T> A() {
    return Tensor<T>::from_col_major({3, 3}, {1, 2, 0, -1, 3, 4, 0.5, 0, 2});
  }
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return tx::matmul(A<T>(), x);
  }
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    return tx::matmul(A<value_of<decltype(c.x0())>>(), c.dx0());
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    return tx::matmul(A<value_of<decltype(c.x0())>>(), c.gy0());
  }
};

// exp whose VJP uses the output detached from AD: first order right, second order wrong.
struct ExpDetached {
  static constexpr const char* name = "exp_detached";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return tx::exp(x);
  }
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    return tx::mul(c.dx0(), c.y0());
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    return tx::mul(c.gy0(), tx::conj(c.y0().detach()));
  }
};

// exp that is slightly wrong in float32 only.
struct ExpBadFloat {
  static constexpr const char* name = "exp_bad_float";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    if constexpr (std::is_same_v<tx::real_t<T>, float>)
      return tx::mul(tx::exp(x), T(1.001f));
    else
      return tx::exp(x);
  }
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    return tx::mul(c.dx0(), c.y0());
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    return tx::mul(c.gy0(), tx::conj(c.y0()));
  }
};

template <class Op>
struct Call {
  template <class T>
  Tensor<T> operator()(const Tensor<T>& x) const {
    return tx::detail::apply(Op{}, x);
  }
};

}  // namespace

using tx::testing::failures_of;
bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

TEST(GradCheck, CorrectOpsPass) {
  // The missing conjugate is harmless for real input.
  EXPECT_EQ(failures_of([] { expect_ad(Call<ExpNoConj>{}, Tensor<double>::randn({3, 2}, 1)); }), "");
  EXPECT_EQ(failures_of([] {
              expect_ad([](const auto& x, const auto& y) { return tx::mul(tx::sin(x), y); }, Tensor<C>::randn({3}, 1),
                        Tensor<C>::randn({3}, 2));
            }),
            "");
}

TEST(GradCheck, CatchesMissingConjugate) {
  const auto f = failures_of([] { expect_ad(Call<ExpNoConj>{}, Tensor<C>::randn({3, 2}, 1)); });
  EXPECT_TRUE(has(f, "(b) Re<W, J dx>")) << f;
  EXPECT_FALSE(has(f, "(a) JVP")) << f;  // the forward rule is right
}

TEST(GradCheck, CatchesWrongJvp) {
  const auto f = failures_of([] { expect_ad(Call<SinBadJvp>{}, Tensor<double>::randn({4}, 1)); });
  EXPECT_TRUE(has(f, "(a) JVP vs central differences")) << f;
}

TEST(GradCheck, CatchesMissingTranspose) {
  const auto f = failures_of([] { expect_ad(Call<LinearNoTranspose>{}, Tensor<double>::randn({3, 2}, 1)); });
  EXPECT_TRUE(has(f, "(b) Re<W, J dx>")) << f;
  EXPECT_FALSE(has(f, "(a) JVP")) << f;
}

TEST(GradCheck, CatchesWrongSecondOrder) {
  const auto f = failures_of([] { expect_ad(Call<ExpDetached>{}, Tensor<double>::randn({4}, 1)); });
  EXPECT_TRUE(has(f, "(c) HVP (forward over reverse) vs central differences")) << f;
  EXPECT_FALSE(has(f, "(a)") || has(f, "(b)")) << f;
}

TEST(GradCheck, CatchesFloat32Discrepancy) {
  const auto f = failures_of([] { expect_ad(Call<ExpBadFloat>{}, Tensor<double>::randn({4}, 1)); });
  EXPECT_TRUE(has(f, "(d) float32 value vs float64")) << f;
  EXPECT_FALSE(has(f, "(a)") || has(f, "(b)") || has(f, "(c)")) << f;
}

TEST(GradCheck, ErrorMacroChecksTheOpName) {
  EXPECT_TENAX_ERROR(tx::add(Tensor<double>::zeros({3}), Tensor<double>::zeros({4})), "add");
  EXPECT_TRUE(has(
      failures_of([] { EXPECT_TENAX_ERROR(tx::add(Tensor<double>::zeros({3}), Tensor<double>::zeros({4})), "mul"); }),
      "does not begin with [mul]"));
  EXPECT_TRUE(has(
      failures_of([] { EXPECT_TENAX_ERROR(tx::add(Tensor<double>::zeros({3}), Tensor<double>::zeros({3})), "add"); }),
      "expected tenax::Error"));
}
