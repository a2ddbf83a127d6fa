// The CUDA backend on a GPU (label cuda; every case skips when no device is visible). Each op and
// rule runs on the device and is compared with the same computation on the CPU in float64/complex128
// (float32 inputs at float32 tolerance); prepared programs run on the device; the coverage test lists
// every op and whether it has a CUDA kernel.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <tenax/tenax.hpp>
#include <tenax/trace.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::Tensor;
using C = std::complex<double>;
using Cf = std::complex<float>;

namespace {

const tx::Device gpu = tx::Device::cuda(0);

#define REQUIRE_GPU() \
  if (tx::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"

template <class T>
double tol() {
  return std::is_same_v<tx::real_t<T>, float> ? 2e-5 : 1e-12;
}

// The device result (copied back) equals the CPU result to a relative tolerance.
template <class T>
void expect_close(const Tensor<T>& got_dev, const Tensor<T>& want, double rtol, const std::string& what) {
  ASSERT_TRUE(got_dev.device() == gpu) << what << ": result on " << got_dev.device().str();
  const Tensor<T> got = got_dev.to(tx::Device::cpu());
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto g = got.to_vector(), w = want.to_vector();
  double scale = 0;
  for (const auto& v : w) scale = std::max(scale, static_cast<double>(std::abs(v)));
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double e = static_cast<double>(std::abs(g[i] - w[i]));
    if (std::isnan(static_cast<double>(std::abs(w[i])))) {
      EXPECT_TRUE(std::isnan(static_cast<double>(std::abs(g[i])))) << what << " element " << i;
      continue;
    }
    ASSERT_LE(e, rtol * (1 + scale)) << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

template <class T>
Tensor<T> input(const tx::Shape& s, std::uint64_t seed, double lo = 0.2, double hi = 1.5) {
  return Tensor<T>::rand(s, seed, lo, hi);
}

}  // namespace

TEST(Cuda, CopiesRoundTripEveryDtype) {
  REQUIRE_GPU();
  auto round = [](const auto& x) {
    const auto back = x.to(gpu).to(tx::Device::cpu());
    EXPECT_EQ(back.to_vector(), x.to_vector());
  };
  round(Tensor<bool>::from_row_major({2, 2}, {true, false, false, true}));
  round(Tensor<std::int32_t>::from_row_major({3}, {1, -2, 3}));
  round(Tensor<std::int64_t>::from_row_major({3}, {1, -2, 1ll << 40}));
  round(input<float>({5, 7}, 1));
  round(input<double>({5, 7}, 2));
  round(input<Cf>({5, 7}, 3));
  round(input<C>({5, 7}, 4));
  round(input<double>({0, 3}, 5));
  // A strided view goes through contiguous() on the device.
  const auto x = input<double>({6, 5}, 6);
  expect_close(tx::contiguous(x.to(gpu).mT()), tx::contiguous(x.mT()), 0, "transposed view");
  expect_close(tx::slice(x.to(gpu), 1, 1, 5, 2), tx::contiguous(tx::slice(x, 1, 1, 5, 2)), 0, "sliced view");
}

template <class T>
void unary_family() {
  const auto x = input<T>({7, 9}, 11);
  const auto xd = x.to(gpu);
  std::vector<std::pair<std::string, std::function<Tensor<T>(const Tensor<T>&)>>> ops = {
      {"neg", [](auto& a) { return tx::neg(a); }},         {"exp", [](auto& a) { return tx::exp(a); }},
      {"log", [](auto& a) { return tx::log(a); }},         {"sqrt", [](auto& a) { return tx::sqrt(a); }},
      {"rsqrt", [](auto& a) { return tx::rsqrt(a); }},     {"square", [](auto& a) { return tx::square(a); }},
      {"sin", [](auto& a) { return tx::sin(a); }},         {"cos", [](auto& a) { return tx::cos(a); }},
      {"tanh", [](auto& a) { return tx::tanh(a); }},       {"sigmoid", [](auto& a) { return tx::sigmoid(a); }},
      {"sign", [](auto& a) { return tx::sign(a); }},       {"conj", [](auto& a) { return tx::conj(a); }},
      {"pow", [](auto& a) { return tx::pow(a, T(1.7)); }},
  };
  for (auto& [name, f] : ops) expect_close(f(xd), f(x), tol<T>(), name + " " + tx::dtype_traits<T>::name);
  expect_close(tx::abs(xd), tx::abs(x), tol<T>(), "abs");
  if constexpr (!tx::is_complex_v<T>) {
    expect_close(tx::log1p(xd), tx::log1p(x), tol<T>(), "log1p");
    expect_close(tx::expm1(xd), tx::expm1(x), tol<T>(), "expm1");
    const auto z = input<T>({7, 9}, 12, -1, 1);
    expect_close(tx::relu(z.to(gpu)), tx::relu(z), 0, "relu");
  } else {
    expect_close(tx::real(xd), tx::real(x), tol<T>(), "real");
    expect_close(tx::imag(xd), tx::imag(x), tol<T>(), "imag");
  }
}

TEST(Cuda, UnaryOpsMatchTheCpu) {
  REQUIRE_GPU();
  unary_family<float>();
  unary_family<double>();
  unary_family<Cf>();
  unary_family<C>();
}

template <class T>
void binary_family() {
  // Broadcasting both ways and a transposed (strided) operand.
  const auto a = input<T>({4, 1, 3}, 21), b = input<T>({4, 5, 1}, 22), t = input<T>({5, 4}, 23);
  const auto ad = a.to(gpu), bd = b.to(gpu), td = t.to(gpu);
  expect_close(tx::add(ad, bd), tx::add(a, b), tol<T>(), "add");
  expect_close(tx::sub(ad, bd), tx::sub(a, b), tol<T>(), "sub");
  expect_close(tx::mul(ad, bd), tx::mul(a, b), tol<T>(), "mul");
  expect_close(tx::div(ad, bd), tx::div(a, b), tol<T>(), "div");
  expect_close(tx::pow(ad, bd), tx::pow(a, b), tol<T>(), "pow");
  expect_close(tx::mul(td.mT(), td.mT()), tx::mul(t.mT(), t.mT()), tol<T>(), "strided mul");
  expect_close(tx::add(ad, T(2)), tx::add(a, T(2)), tol<T>(), "add scalar");
  expect_close(tx::mul(ad, T(3)), tx::mul(a, T(3)), tol<T>(), "mul scalar");
  expect_close(tx::rsub(ad, T(1)), tx::rsub(a, T(1)), tol<T>(), "rsub scalar");
  expect_close(tx::rdiv(ad, T(1)), tx::rdiv(a, T(1)), tol<T>(), "rdiv scalar");
  const auto c = tx::eq(a, a);
  expect_close(tx::where(c.to(gpu), ad, ad), tx::where(c, a, a), 0, "where");
  if constexpr (!tx::is_complex_v<T>) {
    expect_close(tx::maximum(ad, bd), tx::maximum(a, b), 0, "maximum");
    expect_close(tx::minimum(ad, bd), tx::minimum(a, b), 0, "minimum");
    const auto lt = tx::lt(ad, bd).to(tx::Device::cpu());
    EXPECT_EQ(lt.to_vector(), tx::lt(a, b).to_vector());
    expect_close(tx::complex(ad, bd), tx::complex(a, b), tol<T>(), "complex");
  }
  EXPECT_EQ(tx::ne(ad, bd).to(tx::Device::cpu()).to_vector(), tx::ne(a, b).to_vector());
}

TEST(Cuda, BinaryOpsBroadcastAndMatchTheCpu) {
  REQUIRE_GPU();
  binary_family<float>();
  binary_family<double>();
  binary_family<Cf>();
  binary_family<C>();
}

TEST(Cuda, CastsConvertLikeTheCpu) {
  REQUIRE_GPU();
  const auto z = input<C>({3, 4}, 31, -2, 2);
  expect_close(tx::cast<double>(z.to(gpu)), tx::cast<double>(z), 0, "c128 -> f64");
  expect_close(tx::cast<Cf>(z.to(gpu)), tx::cast<Cf>(z), 0, "c128 -> c64");
  const auto r = input<float>({3, 4}, 32, -2, 2);
  expect_close(tx::cast<C>(r.to(gpu)), tx::cast<C>(r), 0, "f32 -> c128");
  EXPECT_EQ(tx::cast<std::int64_t>(r.to(gpu)).to(tx::Device::cpu()).to_vector(), tx::cast<std::int64_t>(r).to_vector());
}

template <class T>
void reduce_family() {
  for (const tx::Shape& s : {tx::Shape{6, 5, 4}, tx::Shape{300, 700}, tx::Shape{1 << 17}, tx::Shape{0, 3}}) {
    const auto x = input<T>(s, 41, 0.9, 1.1);
    const auto xd = x.to(gpu);
    expect_close(tx::sum(xd), tx::sum(x), tol<T>() * 10, "sum all");
    for (std::int64_t ax = 0; ax < x.dim(); ++ax) {
      expect_close(tx::sum(xd, {ax}, true), tx::sum(x, {ax}, true), tol<T>() * 10, "sum axis");
      expect_close(tx::mean(xd, {ax}, false), tx::mean(x, {ax}, false), tol<T>() * 10, "mean axis");
    }
    if (x.numel() <= 1000) expect_close(tx::prod(xd), tx::prod(x), tol<T>() * 10, "prod");
    if constexpr (!tx::is_complex_v<T>) {
      if (x.numel() > 0) {
        expect_close(tx::max(xd), tx::max(x), 0, "max");
        expect_close(tx::min(xd, {0}, false), tx::min(x, {0}, false), 0, "min axis");
      }
    }
  }
}

TEST(Cuda, ReductionsMatchTheCpu) {
  REQUIRE_GPU();
  reduce_family<float>();
  reduce_family<double>();
  reduce_family<C>();
}

template <class T>
void matmul_family() {
  const auto a = input<T>({5, 7, 3}, 51), b = input<T>({7, 4, 3}, 52), b1 = input<T>({7, 4}, 53);
  const auto ad = a.to(gpu), bd = b.to(gpu), b1d = b1.to(gpu);
  expect_close(tx::matmul(ad, bd), tx::matmul(a, b), tol<T>(), "batched");
  expect_close(tx::matmul(ad, b1d), tx::matmul(a, b1), tol<T>(), "broadcast");
  expect_close(tx::matmul(b1d.mT(), ad.mT()), tx::matmul(b1.mT(), a.mT()), tol<T>(), "transposed");
  const auto big = input<T>({130, 129}, 54);
  expect_close(tx::matmul(big.to(gpu), big.to(gpu).mH()), tx::matmul(big, big.mH()), tol<T>() * 10, "130x129");
}

TEST(Cuda, MatmulMatchesTheCpu) {
  REQUIRE_GPU();
  matmul_family<float>();
  matmul_family<double>();
  matmul_family<Cf>();
  matmul_family<C>();
}

// The mlp loss of BENCHMARKS.md: gradients, a JVP and a Hessian-vector product on the device
// against the CPU.
TEST(Cuda, GradientsJvpAndSecondOrderMatchTheCpu) {
  REQUIRE_GPU();
  auto loss = [](const Tensor<double>& x, const Tensor<double>& w, const Tensor<double>& b) {
    const auto h = tx::relu(tx::add(tx::matmul(x, w), b));
    return tx::mean(tx::square(tx::tanh(h)));
  };
  const auto x = input<double>({8, 16}, 61, -1, 1), w = input<double>({16, 8}, 62, -1, 1),
             b = input<double>({1, 8}, 63, -1, 1);
  const auto xd = x.to(gpu), wd = w.to(gpu), bd = b.to(gpu);
  const auto gc = tx::grad(loss, x, w, b);
  const auto gd = tx::grad(loss, xd, wd, bd);
  expect_close(std::get<0>(gd), std::get<0>(gc), 1e-12, "grad x");
  expect_close(std::get<1>(gd), std::get<1>(gc), 1e-12, "grad w");
  expect_close(std::get<2>(gd), std::get<2>(gc), 1e-12, "grad b");
  auto f = [&](const Tensor<double>& v) {
    return loss(x.device() == v.device() ? x : xd, v, v.device() == gpu ? bd : b);
  };
  const auto dir = input<double>({16, 8}, 64, -1, 1);
  const auto jc = tx::jvp(f, w, dir), jd = tx::jvp(f, wd, dir.to(gpu));
  expect_close(jd.second, jc.second, 1e-12, "jvp");
  const auto hc = tx::hvp(f, w, dir), hd = tx::hvp(f, wd, dir.to(gpu));
  expect_close(hd, hc, 1e-11, "hvp");
}

// A prepared program runs on the device, equals the eager device result bit for bit, and after
// the first run takes every buffer from the device pool.
TEST(Cuda, CompiledProgramsRunOnTheDevice) {
  REQUIRE_GPU();
  auto step = [](const Tensor<double>& w, const Tensor<double>& x) {
    auto [l, g] = tx::value_and_grad([&](const Tensor<double>& v) { return tx::sum(tx::square(tx::matmul(x, v))); }, w);
    return std::tuple{l, tx::sub(w, tx::mul(g, 0.01))};
  };
  const auto w = input<double>({6, 3}, 71).to(gpu), x = input<double>({5, 6}, 72).to(gpu);
  auto prog = tx::compile(step, w, x);
  const auto [l0, w0] = step(w, x);
  const auto [l1, w1] = prog(w, x);
  EXPECT_EQ(l1.to(tx::Device::cpu()).to_vector(), l0.to(tx::Device::cpu()).to_vector());
  EXPECT_EQ(w1.to(tx::Device::cpu()).to_vector(), w0.to(tx::Device::cpu()).to_vector());
  tx::reset_allocator_stats(gpu);
  for (int i = 0; i < 5; ++i) prog(w, x);
  const auto s = tx::allocator_stats(gpu);
  EXPECT_EQ(s.pool_misses, 0);
  EXPECT_EQ(s.system_allocs, 0);
  // A CPU input against the device signature is refused.
  const std::string e = tx::testing::error_of([&] { prog(w.to(tx::Device::cpu()), x); });
  EXPECT_TRUE(tx::testing::has(e, "cuda:0")) << e;
}

TEST(Cuda, AllocatorPoolsAndReleases) {
  REQUIRE_GPU();
  tx::release_cached_memory(gpu);
  tx::reset_allocator_stats(gpu);
  { auto t = Tensor<double>::empty({1000}, gpu); }
  { auto t = Tensor<double>::empty({1000}, gpu); }
  auto s = tx::allocator_stats(gpu);
  EXPECT_EQ(s.system_allocs, 1);
  EXPECT_EQ(s.pool_hits, 1);
  EXPECT_EQ(s.bytes_live, 0);
  EXPECT_GT(s.bytes_cached, 0);
  tx::release_cached_memory(gpu);
  EXPECT_EQ(tx::allocator_stats(gpu).bytes_cached, 0);
}

// Coverage: each public op either runs on the device or raises an Error naming itself and the
// device. The list of ops still without a CUDA kernel is explicit, so it can only shrink.
TEST(Cuda, CoverageOfOps) {
  REQUIRE_GPU();
  const auto a = input<double>({4, 4}, 81).to(gpu);
  const auto spd = tx::add(tx::matmul(a, a.mT()), tx::mul(Tensor<double>::eye(4).to(gpu), 4.0));
  std::map<std::string, std::function<void()>> ops = {
      {"matmul", [&] { tx::matmul(a, a); }},
      {"sum", [&] { tx::sum(a); }},
      {"tril", [&] { tx::tril(a, 0); }},
      {"triu", [&] { tx::triu(a, 0); }},
      {"solve", [&] { tx::linalg::solve(spd, a); }},
      {"solve_triangular", [&] { tx::linalg::solve_triangular(spd, a, false); }},
      {"lu", [&] { tx::linalg::lu(a); }},
      {"qr", [&] { tx::linalg::qr(a); }},
      {"eigh", [&] { tx::linalg::eigh(spd); }},
      {"svd", [&] { tx::linalg::svd(a); }},
      {"cholesky", [&] { tx::linalg::cholesky(spd); }},
      {"inv", [&] { tx::linalg::inv(spd); }},
      {"det", [&] { tx::linalg::det(spd); }},
      {"slogdet", [&] { tx::linalg::slogdet(spd); }},
  };
  std::vector<std::string> missing;
  for (auto& [name, f] : ops) {
    const std::string e = tx::testing::error_of(f);
    if (e.empty()) continue;
    EXPECT_TRUE(tx::testing::has(e, "no kernel for device cuda:0")) << name << ": " << e;
    missing.push_back(name);
  }
  std::string list;
  for (auto& m : missing) list += m + " ";
  std::printf("ops without a CUDA kernel: %s\n", list.c_str());
  const std::vector<std::string> expected = {"cholesky",         "det", "eigh", "inv", "lu", "qr", "slogdet", "solve",
                                             "solve_triangular", "svd"};
  EXPECT_EQ(missing, expected);
}
