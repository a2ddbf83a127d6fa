#pragma once
// Every public op of tenax, one call each, on a device given at run time: the table the CUDA
// coverage test runs on the GPU against the CPU (test_cuda.cpp, Cuda.EveryOpMatchesTheCpu), and
// whose completeness test_cuda_coverage checks on any machine against the ops the library
// instantiates (the TENAX_INSTANCES_* lists of the op headers, plus cast).
//
// Each call returns its outputs flattened on the CPU (complex entries as real and imaginary parts,
// bool and integer outputs as numbers) with the device each output was on. Decompositions are
// called in their canonical gauge (eigh and svd: canonical_gauge; qr: positive_diag), so their
// outputs are unique and compare entry by entry.
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tenax/tenax.hpp>

namespace tenax::testing {

struct OpOutputs {
  std::vector<Device> devices;
  std::vector<Shape> shapes;
  std::vector<std::vector<double>> values;
};

template <class T>
void collect(OpOutputs& o, const Tensor<T>& t) {
  o.devices.push_back(t.device());
  o.shapes.push_back(t.shape());
  std::vector<double> v;
  for (auto x : t.to(Device::cpu()).to_vector()) {
    if constexpr (is_complex_v<T>) {
      v.push_back(static_cast<double>(x.real()));
      v.push_back(static_cast<double>(x.imag()));
    } else {
      v.push_back(static_cast<double>(x));
    }
  }
  o.values.push_back(std::move(v));
}
template <class A, class B>
void collect(OpOutputs& o, const std::pair<A, B>& r) {
  collect(o, r.first);
  collect(o, r.second);
}
template <class... Ts>
void collect(OpOutputs& o, const std::tuple<Ts...>& r) {
  std::apply([&](const auto&... x) { (collect(o, x), ...); }, r);
}

struct OpCall {
  std::string name;
  std::function<OpOutputs(Device)> run;
};

namespace every_op {

using D = Tensor<double>;
using Z = Tensor<std::complex<double>>;

// Inputs made on the CPU (seeded) and moved to the device.
inline D real_in(const Shape& s, std::uint64_t seed, Device d, double lo = 0.2, double hi = 1.5) {
  return D::rand(s, seed, lo, hi).to(d);
}
inline Z complex_in(const Shape& s, std::uint64_t seed, Device d) {
  return complex(D::rand(s, seed, 0.2, 1.5), D::rand(s, seed + 1, -1, 1)).to(d);
}
// Well conditioned: a general matrix with a heavy diagonal, and an SPD one, both 4 x 4 x 2.
inline D general(Device d) { return add(D::rand({4, 4, 2}, 101, -1, 1), mul(D::eye(4), 4.0)).to(d); }
inline D spd(Device d) {
  const D a = D::rand({4, 4, 2}, 102, -1, 1);
  return add(matmul(a, a.mT()), mul(D::eye(4), 4.0)).to(d);
}
inline D rhs(Device d) { return real_in({4, 3, 2}, 103, d, -1, 1); }

template <class F>
std::function<OpOutputs(Device)> outputs_of(F f) {
  return [f](Device d) {
    OpOutputs o;
    collect(o, f(d));
    return o;
  };
}

}  // namespace every_op

// The table. Names are the ops' function names; an op with several overloads (add with a tensor
// and with a scalar) is one name whose call uses each overload.
inline std::vector<OpCall> every_op_calls() {
  using namespace every_op;
  namespace la = linalg;
  const auto x = [](Device d) { return real_in({3, 4}, 11, d); };
  const auto y = [](Device d) { return real_in({3, 4}, 12, d); };
  const auto signed_x = [](Device d) { return real_in({3, 4}, 13, d, -1, 1); };
  // Integers in [-50, 50] (int32) and [-1000, 1000] (int64), zeros included, made on the CPU.
  const auto i32 = [](Device d, std::uint64_t seed) {
    return cast<std::int32_t>(D::rand({3, 4}, seed, -50, 50)).to(d);
  };
  const auto i64 = [](Device d, std::uint64_t seed) {
    return cast<std::int64_t>(D::rand({3, 4}, seed, -1000, 1000)).to(d);
  };
  std::vector<std::pair<std::string, std::function<OpOutputs(Device)>>> t = {
      {"abs", outputs_of([=](Device d) {
         return std::tuple{abs(signed_x(d)), abs(complex_in({3}, 14, d)), abs(i32(d, 40)), abs(i64(d, 41))};
       })},
      {"add", outputs_of([=](Device d) {
         return std::tuple{add(x(d), y(d)), add(x(d), 2.0), add(i32(d, 49), i32(d, 50)), add(i64(d, 49), i64(d, 50))};
       })},
      {"argmax", outputs_of([=](Device d) {
         return std::tuple{argmax(signed_x(d)), argmax(signed_x(d), 1), argmax(signed_x(d).mT(), 0, true),
                           argmax(cast<std::int32_t>(mul(signed_x(d), 3.0)), 0)};
       })},
      {"argmin", outputs_of([=](Device d) {
         return std::tuple{argmin(signed_x(d)), argmin(signed_x(d), 0), argmin(signed_x(d), -1, true),
                           argmin(cast<std::int64_t>(mul(signed_x(d), 3.0)), 1)};
       })},
      {"bernoulli", outputs_of([=](Device d) {
         Generator g(31);
         return std::tuple{bernoulli(real_in({3, 4}, 18, d, 0.0, 1.0), g), bernoulli<bool>(0.4, {5, 3}, g, d),
                           bernoulli<float>(0.6, {7}, g, d)};
       })},
      {"broadcast_to", outputs_of([](Device d) {
         return contiguous(broadcast_to(real_in({3, 1}, 15, d), {3, 5}));
       })},
      {"cast", outputs_of([=](Device d) {
         return std::tuple{cast<float>(x(d)), cast<std::int64_t>(mul(x(d), 10.0))};
       })},
      {"cholesky", outputs_of([](Device d) {
         return std::tuple{la::cholesky(spd(d)), la::cholesky(spd(d), true)};
       })},
      {"cholesky_ex", outputs_of([](Device d) { return la::cholesky_ex(spd(d)); })},
      {"cholesky_solve", outputs_of([](Device d) {
         return std::tuple{la::cholesky_solve(la::cholesky(spd(d)), rhs(d)),
                           la::cholesky_solve(la::cholesky(spd(d), true), rhs(d), true)};
       })},
      {"clone", outputs_of([=](Device d) { return clone(x(d)); })},
      {"complex", outputs_of([=](Device d) { return complex(x(d), y(d)); })},
      {"concat", outputs_of([=](Device d) {
         return concat<double>({x(d), y(d)}, 1);
       })},
      {"cond", outputs_of([](Device d) {
         return std::tuple{la::cond(general(d)), la::cond(general(d), -2.0), la::cond(general(d), 1.0),
                           la::cond(general(d), "fro")};
       })},
      {"conj", outputs_of([](Device d) {
         return conj(complex_in({3, 2}, 16, d));
       })},
      {"contiguous", outputs_of([=](Device d) { return contiguous(x(d).mT()); })},
      {"cos", outputs_of([=](Device d) { return cos(x(d)); })},
      {"cumprod", outputs_of([=](Device d) {
         return std::tuple{cumprod(signed_x(d), 0), cumprod(signed_x(d).mT(), 1),
                           cumprod(complex_in({3, 4}, 16, d), -1)};
       })},
      {"cumsum", outputs_of([=](Device d) {
         return std::tuple{cumsum(signed_x(d), 1), cumsum(signed_x(d).mT(), 0), cumsum(complex_in({3, 4}, 17, d), 0)};
       })},
      {"det", outputs_of([](Device d) { return la::det(general(d)); })},
      {"diag", outputs_of([](Device d) {
         return std::tuple{diag(real_in({4}, 17, d)), diag(real_in({4, 4}, 18, d))};
       })},
      {"diag_embed", outputs_of([](Device d) {
         return diag_embed(real_in({4, 2}, 19, d));
       })},
      {"diagonal", outputs_of([](Device d) {
         return contiguous(diagonal(real_in({4, 5, 2}, 20, d), 1, 0, 1));
       })},
      {"div", outputs_of([=](Device d) {
         return std::tuple{div(x(d), y(d)), div(x(d), 3.0)};
       })},
      {"eig", outputs_of([](Device d) {
         // Compared through quantities that do not depend on the solver's eigenvalue order.
         const D a = real_in({4, 4, 2}, 37, d, -1, 1);
         const auto [w, V] = la::eig(a);
         const auto r = sub(matmul(cast<std::complex<double>>(a), V), mul(V, detail::as_row(w)));
         const auto [wz, Vz] = la::eig(complex_in({3, 3}, 38, d));
         return std::tuple{sum(w, {0}),  sum(square(w), {0}), la::vector_norm(r),
                           sum(wz, {0}), prod(wz, {0}),       sum(abs(Vz))};
       })},
      {"eig_ex", outputs_of([](Device d) {
         const auto [w, V, info] = la::eig_ex(real_in({3, 3, 2}, 39, d, -1, 1));
         return std::tuple{sum(w, {0}), sum(abs(V)), info};
       })},
      {"eigh", outputs_of([](Device d) { return la::eigh(spd(d), false, {}, true); })},
      {"eigvalsh", outputs_of([](Device d) { return la::eigvalsh(spd(d)); })},
      {"eigvals", outputs_of([](Device d) {
         const auto w = la::eigvals(general(d));
         return std::tuple{sum(w, {0}), prod(w, {0})};
       })},
      {"einsum", outputs_of([](Device d) {
         const D a = real_in({3, 4, 2}, 120, d), b = real_in({4, 5}, 121, d), c = real_in({5, 2, 3}, 122, d);
         return std::tuple{einsum("ijk,jl,lkm->im", a, b, c),
                           einsum("bij,bjk->bik", real_in({2, 3, 4}, 123, d), real_in({2, 4, 3}, 124, d)),
                           einsum("ii->i", real_in({3, 3}, 125, d)), einsum("...i,i", a, real_in({2}, 126, d)),
                           einsum<std::complex<double>>(
                               "ij,jk", std::vector<Z>{complex_in({2, 3}, 127, d), complex_in({3, 2}, 129, d)})};
       })},
      {"eq", outputs_of([=](Device d) { return eq(x(d), x(d)); })},
      {"exp", outputs_of([=](Device d) { return exp(x(d)); })},
      {"expand", outputs_of([](Device d) {
         return contiguous(expand(real_in({1, 4}, 21, d), {3, 4}));
       })},
      {"expm1", outputs_of([=](Device d) { return expm1(signed_x(d)); })},
      {"flatten", outputs_of([=](Device d) { return flatten(x(d)); })},
      {"ge", outputs_of([=](Device d) { return ge(x(d), y(d)); })},
      {"gt", outputs_of([=](Device d) { return gt(x(d), y(d)); })},
      {"imag", outputs_of([](Device d) {
         return imag(complex_in({3, 2}, 22, d));
       })},
      {"inv", outputs_of([](Device d) { return la::inv(general(d)); })},
      {"inv_ex", outputs_of([](Device d) { return la::inv_ex(general(d)); })},
      {"isfinite", outputs_of([=](Device d) { return isfinite(log(signed_x(d))); })},
      {"le", outputs_of([=](Device d) { return le(x(d), y(d)); })},
      {"log", outputs_of([=](Device d) { return log(x(d)); })},
      {"log1p", outputs_of([=](Device d) { return log1p(x(d)); })},
      {"lt", outputs_of([=](Device d) { return lt(x(d), y(d)); })},
      {"lstsq", outputs_of([](Device d) {
         const auto tall = la::lstsq(real_in({5, 3, 2}, 24, d, -1, 1), real_in({5, 2, 2}, 25, d, -1, 1));
         const auto wide = la::lstsq(complex_in({2, 4}, 26, d), complex_in({2, 3}, 27, d));
         return std::tuple{tall.solution, tall.residuals, tall.rank,           tall.singular_values,
                           wide.solution, wide.residuals, wide.singular_values};
       })},
      {"log_softmax", outputs_of([=](Device d) {
         return std::tuple{log_softmax(signed_x(d), 0), log_softmax(signed_x(d), -1)};
       })},
      {"logsumexp", outputs_of([=](Device d) {
         return std::tuple{logsumexp(signed_x(d)), logsumexp(signed_x(d), {1}), logsumexp(signed_x(d), {0}, true)};
       })},
      {"lu", outputs_of([](Device d) {
         return la::lu(real_in({4, 4, 2}, 23, d, -1, 1));
       })},
      {"lu_factor", outputs_of([](Device d) {
         return la::lu_factor(real_in({4, 4, 2}, 23, d, -1, 1));
       })},
      {"lu_factor_ex", outputs_of([](Device d) {
         return la::lu_factor_ex(real_in({4, 4, 2}, 23, d, -1, 1));
       })},
      {"lu_solve", outputs_of([](Device d) {
         const auto [LU, piv] = la::lu_factor(general(d));
         return std::tuple{la::lu_solve(LU, piv, rhs(d)), la::lu_solve(LU, piv, rhs(d), la::Trans::T)};
       })},
      {"matmul", outputs_of([=](Device d) { return matmul(x(d), y(d).mT()); })},
      {"matrix_exp", outputs_of([](Device d) {
         return std::tuple{la::matrix_exp(real_in({4, 4, 2}, 28, d, -1, 1)),
                           la::matrix_exp(mul(complex_in({3, 3}, 29, d), std::complex<double>(6.0)))};
       })},
      {"matrix_norm", outputs_of([](Device d) {
         const D a = general(d);
         return std::tuple{la::matrix_norm(a),
                           la::matrix_norm(a, "nuc"),
                           la::matrix_norm(a, 2.0),
                           la::matrix_norm(a, -2.0),
                           la::matrix_norm(a, 1.0),
                           la::matrix_norm(a, -1.0),
                           la::matrix_norm(a, INFINITY),
                           la::matrix_norm(a, -INFINITY, true),
                           la::matrix_norm(complex_in({3, 2, 2}, 16, d), "fro")};
       })},
      {"matrix_power", outputs_of([](Device d) {
         return std::tuple{la::matrix_power(general(d), 3), la::matrix_power(general(d), -2),
                           la::matrix_power(general(d), 0)};
       })},
      {"matrix_rank", outputs_of([](Device d) {
         const D a = real_in({4, 2, 2}, 30, d, -1, 1);
         return std::tuple{la::matrix_rank(matmul(a, a.mT())),
                           la::matrix_rank(spd(d), std::nullopt, std::nullopt, true)};
       })},
      {"max", outputs_of([=](Device d) {
         return std::tuple{max(x(d)), max(x(d), {1}, true)};
       })},
      {"maximum", outputs_of([=](Device d) {
         return std::tuple{maximum(x(d), y(d)), maximum(i32(d, 42), i32(d, 43)), maximum(i64(d, 42), i64(d, 43))};
       })},
      {"mean", outputs_of([=](Device d) {
         return std::tuple{mean(x(d)), mean(x(d), {0})};
       })},
      {"min", outputs_of([=](Device d) {
         return std::tuple{min(x(d)), min(x(d), {0})};
       })},
      {"minimum", outputs_of([=](Device d) {
         return std::tuple{minimum(x(d), y(d)), minimum(i32(d, 42), i32(d, 43)), minimum(i64(d, 42), i64(d, 43))};
       })},
      {"mul", outputs_of([=](Device d) {
         return std::tuple{mul(x(d), y(d)), mul(x(d), 3.0), mul(i32(d, 44), i32(d, 45)), mul(i64(d, 44), i64(d, 45))};
       })},
      {"multi_dot", outputs_of([](Device d) {
         return la::multi_dot<double>({real_in({3}, 31, d), real_in({3, 5}, 32, d), real_in({5, 2}, 33, d)});
       })},
      {"ne", outputs_of([=](Device d) { return ne(x(d), y(d)); })},
      {"norm", outputs_of([=](Device d) {
         return std::tuple{la::norm(x(d)), la::norm(real_in({5}, 17, d), 3.0), la::norm(general(d), 1.0),
                           la::norm(general(d), "nuc")};
       })},
      {"neg", outputs_of([=](Device d) {
         return std::tuple{neg(x(d)), neg(i32(d, 46)), neg(i64(d, 46))};
       })},
      {"normal", outputs_of([](Device d) {
         Generator g(32);
         return normal(1.0, 2.0, {4, 5}, g, d);
       })},
      {"permute", outputs_of([](Device d) {
         return contiguous(permute(real_in({2, 3, 4}, 24, d), {2, 0, 1}));
       })},
      {"pow", outputs_of([=](Device d) {
         return std::tuple{pow(x(d), y(d)), pow(x(d), 1.5)};
       })},
      {"prod", outputs_of([=](Device d) {
         return std::tuple{prod(x(d)), prod(x(d), {1})};
       })},
      {"pinv", outputs_of([](Device d) {
         const D a = real_in({4, 2, 2}, 34, d, -1, 1);
         return std::tuple{la::pinv(real_in({4, 3, 2}, 35, d, -1, 1)), la::pinv(matmul(a, a.mT())),
                           la::pinv(spd(d), std::nullopt, std::nullopt, true), la::pinv(complex_in({2, 3}, 36, d))};
       })},
      {"qr", outputs_of([](Device d) {
         const D a = real_in({5, 3, 2}, 25, d, -1, 1);
         return std::tuple{la::qr(a, la::QrMode::Reduced, true), la::qr(a.mT(), la::QrMode::Complete, true)};
       })},
      {"rand", outputs_of([](Device d) {
         Generator g(33);
         manual_seed(34);
         return std::tuple{rand<double>({4, 5}, g, d), rand<float>({6}, g, d), rand<std::complex<double>>({3}, g, d),
                           rand<double>({5}, d)};
       })},
      {"randint", outputs_of([](Device d) {
         Generator g(35);
         return std::tuple{randint(-4, 9, {4, 5}, g, d), randint<std::int32_t>(0, 3, {7}, g, d)};
       })},
      {"randn", outputs_of([](Device d) {
         Generator g(36);
         manual_seed(37);
         return std::tuple{randn<double>({4, 5}, g, d), randn<std::complex<double>>({3}, g, d), randn<double>({5}, d)};
       })},
      {"randperm", outputs_of([](Device d) {
         Generator g(38);
         return std::tuple{randperm(20, g, d), randperm<std::int32_t>(9, g, d)};
       })},
      {"rdiv", outputs_of([=](Device d) { return rdiv(x(d), 2.0); })},
      {"real", outputs_of([](Device d) {
         return real(complex_in({3, 2}, 26, d));
       })},
      {"relu", outputs_of([=](Device d) { return relu(signed_x(d)); })},
      {"reshape", outputs_of([=](Device d) {
         return std::tuple{reshape(x(d), {2, 6}), reshape(x(d).mT(), {6, 2})};
       })},
      {"rsqrt", outputs_of([=](Device d) { return rsqrt(x(d)); })},
      {"rsub", outputs_of([=](Device d) { return rsub(x(d), 2.0); })},
      {"sigmoid", outputs_of([=](Device d) { return sigmoid(signed_x(d)); })},
      {"sign", outputs_of([=](Device d) { return sign(signed_x(d)); })},
      {"sin", outputs_of([=](Device d) { return sin(x(d)); })},
      {"slice", outputs_of([=](Device d) { return contiguous(slice(x(d), 1, 0, 4, 2)); })},
      {"slogdet", outputs_of([](Device d) { return la::slogdet(general(d)); })},
      {"slogdet_ex", outputs_of([](Device d) { return la::slogdet_ex(general(d)); })},
      {"solve", outputs_of([](Device d) {
         return std::tuple{la::solve(general(d), rhs(d)), la::solve(general(d), rhs(d).mT(), false)};
       })},
      {"solve_ex", outputs_of([](Device d) { return la::solve_ex(general(d), rhs(d)); })},
      {"solve_triangular", outputs_of([](Device d) {
         const D L = la::cholesky(spd(d));
         return std::tuple{la::solve_triangular(L, rhs(d), false),
                           la::solve_triangular(L.mT(), rhs(d).mT(), true, false, false, la::Trans::T)};
       })},
      {"softmax", outputs_of([=](Device d) {
         return std::tuple{softmax(signed_x(d), 0), softmax(signed_x(d), 1)};
       })},
      {"sqrt", outputs_of([=](Device d) { return sqrt(x(d)); })},
      {"square", outputs_of([=](Device d) { return square(x(d)); })},
      {"squeeze", outputs_of([](Device d) {
         return squeeze(real_in({3, 1, 2}, 27, d), 1);
       })},
      {"stack", outputs_of([=](Device d) {
         return stack<double>({x(d), y(d)}, 2);
       })},
      {"sub", outputs_of([=](Device d) {
         return std::tuple{sub(x(d), y(d)), sub(i32(d, 47), i32(d, 48)), sub(i64(d, 47), i64(d, 48))};
       })},
      {"std", outputs_of([=](Device d) {
         return std::tuple{tenax::std(signed_x(d)), tenax::std(signed_x(d), {1}, 0.0, true),
                           tenax::std(complex_in({3, 2}, 19, d), {0})};
       })},
      {"sum", outputs_of([=](Device d) {
         return std::tuple{sum(x(d)), sum(x(d), {0}, true)};
       })},
      {"sum_to", outputs_of([=](Device d) {
         return sum_to(x(d), {1, 4});
       })},
      {"svd", outputs_of([](Device d) {
         const D a = real_in({5, 3, 2}, 28, d, -1, 1);
         return std::tuple{la::svd(a, false, {}, true), la::svd(a.mT(), false, {}, true)};
       })},
      {"svdvals", outputs_of([](Device d) {
         return la::svdvals(real_in({3, 5, 2}, 29, d, -1, 1));
       })},
      {"tanh", outputs_of([=](Device d) { return tanh(signed_x(d)); })},
      {"to_device", outputs_of([=](Device d) {
         return std::tuple{to_device(x(d), d), to_device(x(Device::cpu()), d)};
       })},
      {"tensordot", outputs_of([](Device d) {
         const D a = real_in({3, 4, 2}, 130, d), b = real_in({4, 2, 5}, 131, d);
         return std::tuple{tensordot(a, b, 2), tensordot(a, b, {2, 1}, {1, 0})};
       })},
      {"transpose", outputs_of([](Device d) {
         return contiguous(transpose(real_in({2, 3, 4}, 30, d), 0, 2));
       })},
      {"triangular_matmul", outputs_of([](Device d) {
         const D L = la::cholesky(spd(d));
         return std::tuple{la::triangular_matmul(L, rhs(d), false),
                           la::triangular_matmul(L, rhs(d).mT(), false, false, true, la::Trans::C)};
       })},
      {"tril", outputs_of([](Device d) {
         return tril(real_in({4, 4}, 31, d), -1);
       })},
      {"triu", outputs_of([](Device d) {
         return triu(real_in({4, 4}, 32, d), 1);
       })},
      {"uniform", outputs_of([](Device d) {
         Generator g(39);
         return uniform(-2.0, 3.0, {4, 5}, g, d);
       })},
      {"unsqueeze", outputs_of([=](Device d) { return unsqueeze(x(d), 1); })},
      {"var", outputs_of([=](Device d) {
         return std::tuple{var(signed_x(d)), var(signed_x(d), {0}, 2.0),
                           var(complex_in({3, 2}, 20, d), {0, 1}, 0.0, true)};
       })},
      {"vector_norm", outputs_of([=](Device d) {
         return std::tuple{la::vector_norm(signed_x(d)),
                           la::vector_norm(signed_x(d), 1.0, {0}),
                           la::vector_norm(signed_x(d), 3.0, {1}, true),
                           la::vector_norm(signed_x(d), 0.5),
                           la::vector_norm(signed_x(d), INFINITY, {0}),
                           la::vector_norm(signed_x(d), -INFINITY),
                           la::vector_norm(signed_x(d), 0.0),
                           la::vector_norm(signed_x(d), -1.0),
                           la::vector_norm(complex_in({3}, 18, d))};
       })},
      {"acos", outputs_of([=](Device d) {
         return std::tuple{acos(signed_x(d)), acos(complex_in({3}, 51, d))};
       })},
      {"acosh", outputs_of([=](Device d) {
         return std::tuple{acosh(add(x(d), 1.0)), acosh(complex_in({3}, 52, d))};
       })},
      {"asin", outputs_of([=](Device d) {
         return std::tuple{asin(signed_x(d)), asin(complex_in({3}, 53, d))};
       })},
      {"asinh", outputs_of([=](Device d) {
         return std::tuple{asinh(signed_x(d)), asinh(complex_in({3}, 54, d))};
       })},
      {"atan", outputs_of([=](Device d) {
         return std::tuple{atan(signed_x(d)), atan(complex_in({3}, 55, d))};
       })},
      {"atan2", outputs_of([=](Device d) {
         return atan2(signed_x(d), real_in({3, 1}, 56, d, -1, 1));
       })},
      {"atanh", outputs_of([=](Device d) {
         return std::tuple{atanh(signed_x(d)), atanh(complex_in({3}, 57, d))};
       })},
      {"ceil", outputs_of([=](Device d) { return ceil(mul(signed_x(d), 5.0)); })},
      {"clamp", outputs_of([=](Device d) {
         return std::tuple{clamp(signed_x(d), -0.5, 0.5),
                           clamp(signed_x(d), real_in({3, 1}, 58, d, -1, 0), real_in({1, 4}, 59, d, 0, 1))};
       })},
      {"clamp_max", outputs_of([=](Device d) {
         return std::tuple{clamp_max(signed_x(d), 0.25), clamp_max(signed_x(d), real_in({3, 1}, 60, d, -1, 1))};
       })},
      {"clamp_min", outputs_of([=](Device d) {
         return std::tuple{clamp_min(signed_x(d), 0.25), clamp_min(signed_x(d), real_in({3, 1}, 61, d, -1, 1))};
       })},
      {"cosh", outputs_of([=](Device d) {
         return std::tuple{cosh(signed_x(d)), cosh(complex_in({3}, 62, d))};
       })},
      {"erf", outputs_of([=](Device d) { return erf(mul(signed_x(d), 3.0)); })},
      {"erfc", outputs_of([=](Device d) { return erfc(mul(signed_x(d), 3.0)); })},
      {"floor", outputs_of([=](Device d) { return floor(mul(signed_x(d), 5.0)); })},
      {"floor_divide", outputs_of([=](Device d) {
         return std::tuple{floor_divide(i32(d, 63), i32(d, 64)), floor_divide(i64(d, 63), i64(d, 65))};
       })},
      {"fmod", outputs_of([=](Device d) {
         return std::tuple{fmod(mul(signed_x(d), 5.0), x(d)), fmod(signed_x(d), -0.3), fmod(i32(d, 66), i32(d, 67)),
                           fmod(i64(d, 66), std::int64_t(7))};
       })},
      {"hypot", outputs_of([=](Device d) {
         return hypot(signed_x(d), real_in({1, 4}, 68, d, -1, 1));
       })},
      {"log10", outputs_of([=](Device d) {
         return std::tuple{log10(x(d)), log10(complex_in({3}, 69, d))};
       })},
      {"log2", outputs_of([=](Device d) { return log2(x(d)); })},
      {"logaddexp", outputs_of([=](Device d) {
         return logaddexp(mul(signed_x(d), 30.0), real_in({3, 1}, 70, d, -30, 30));
       })},
      {"remainder", outputs_of([=](Device d) {
         return std::tuple{remainder(mul(signed_x(d), 5.0), neg(x(d))), remainder(signed_x(d), 0.3),
                           remainder(i32(d, 71), i32(d, 72)), remainder(i64(d, 71), std::int64_t(-7))};
       })},
      {"round", outputs_of([=](Device d) { return round(mul(signed_x(d), 5.0)); })},
      {"sinh", outputs_of([=](Device d) {
         return std::tuple{sinh(signed_x(d)), sinh(complex_in({3}, 73, d))};
       })},
      {"softplus", outputs_of([=](Device d) { return softplus(mul(signed_x(d), 30.0)); })},
      {"tan", outputs_of([=](Device d) {
         return std::tuple{tan(signed_x(d)), tan(complex_in({3}, 74, d))};
       })},
      {"trunc", outputs_of([=](Device d) { return trunc(mul(signed_x(d), 5.0)); })},
      {"where", outputs_of([=](Device d) { return where(lt(x(d), y(d)), x(d), y(d)); })},
      // Indexing: duplicates and negative indices; values of each dtype kind.
      {"gather", outputs_of([=](Device d) {
         const auto i = Tensor<std::int64_t>::from_col_major({4, 2}, {0, 2, -1, 2, 1, 1, 0, -3}).to(d);
         return std::tuple{gather(x(d), 0, i), gather(complex_in({3, 4}, 30, d), 0, i),
                           gather(cast<std::int32_t>(mul(x(d), 10.0)), 0, i)};
       })},
      {"take_along_axis", outputs_of([=](Device d) {
         return take_along_axis(real_in({3, 1}, 31, d),
                                Tensor<std::int64_t>::from_col_major({2, 4}, {2, 0, 1, -1, 0, 0, 2, 1}).to(d), 0);
       })},
      {"index_select", outputs_of([=](Device d) {
         return index_select(x(d), 1, Tensor<std::int64_t>::from_col_major({5}, {3, 0, 3, -2, 1}).to(d));
       })},
      {"scatter_add", outputs_of([=](Device d) {
         const auto i = Tensor<std::int64_t>::from_col_major({4, 2}, {0, 2, -1, 2, 1, 1, 0, -3}).to(d);
         return std::tuple{scatter_add(x(d), 0, i, real_in({4, 2}, 32, d)),
                           scatter_add(complex_in({3, 4}, 33, d), 0, i, complex_in({4, 2}, 34, d)),
                           scatter_add(cast<std::int64_t>(mul(x(d), 10.0)), 0, i,
                                       cast<std::int64_t>(mul(real_in({4, 2}, 35, d), 10.0)))};
       })},
      {"index_add", outputs_of([=](Device d) {
         return index_add(x(d), 1, Tensor<std::int64_t>::from_col_major({3}, {2, 2, -4}).to(d), real_in({3, 3}, 36, d));
       })},
      {"put_along_axis", outputs_of([=](Device d) {
         const auto i = Tensor<std::int64_t>::from_col_major({2, 4}, {0, 2, -1, 2, 1, 1, 0, -3}).to(d);
         return std::tuple{put_along_axis(x(d), i, real_in({2, 4}, 37, d), 0),
                           put_along_axis(lt(x(d), y(d)), i, Tensor<bool>::ones({}).to(d), 0)};
       })},
      {"masked_fill", outputs_of([=](Device d) {
         return std::tuple{masked_fill(x(d), lt(x(d), y(d)), 2.5),
                           masked_fill(x(d), lt(real_in({3, 1}, 38, d), Tensor<double>::ones({}).to(d)),
                                       Tensor<double>::full({}, -1.0).to(d))};
       })},
      {"sort", outputs_of([=](Device d) {
         const auto t =
             concat<double>({signed_x(d), Tensor<double>::from_col_major({3, 1}, {INFINITY, 0.5, 0.5}).to(d)}, 1);
         return std::tuple{sort(t, 1), sort(t, 0, true), sort(cast<std::int32_t>(mul(signed_x(d), 3.0)), 1)};
       })},
      {"argsort", outputs_of([=](Device d) { return argsort(signed_x(d), 1, true); })},
      {"topk", outputs_of([=](Device d) { return topk(signed_x(d), 2, 1); })},
  };
  std::vector<OpCall> calls;
  for (auto& [name, run] : t) calls.push_back({name, run});
  return calls;
}

}  // namespace tenax::testing
