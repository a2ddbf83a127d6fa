#pragma once
// Random tensors from a counter-based generator (ops/random/generator.hpp): rand, randn, uniform,
// normal, randint, bernoulli, randperm. Element i of a call draws from Philox4x32-10 at counter
// (generator offset + i) (ops/random/philox.hpp), on the target device itself (kernels/generate.hpp),
// so the CPU and a GPU give identical integers and uniform floats, and normals equal up to the
// last bits of the device's log/cos/sin; the thread count changes nothing. The seeded
// Tensor<T>::rand/randn constructors are a separate, older host stream and are unchanged.
//
// Not traceable: a graph would replay one sample forever, so these ops raise while trace() runs
// (draw outside and pass the tensor in). Nothing here is differentiable; the results are leaves.
#include <concepts>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tenax/ad/mode.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/generate.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/random/generator.hpp"
#include "tenax/ops/random/philox.hpp"

namespace tenax {

template <class T>
concept RandomInteger = std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

namespace detail {

inline void check_not_traced(const char* op) {
  TENAX_CHECK(mode().tracer == nullptr, op,
              "random ops cannot be traced (the graph would replay one sample): draw the tensor outside the traced "
              "function and pass it in");
}

// n counters of gen, after the checks (so a rejected call consumes nothing).
inline fn::PhiloxStream reserve(const char* op, const Shape& shape, Generator& gen, Device dev) {
  check_not_traced(op);
  check_kernel_device(op, dev);
  return gen.reserve(static_cast<std::uint64_t>(checked_numel(shape, op)));
}

template <Floating T, template <class, int> class Draw>
Tensor<T> draw(const char* op, const Shape& shape, Generator& gen, Device dev) {
  using R = real_t<T>;
  constexpr int parts = is_complex_v<T> ? 2 : 1;
  return generate<T, R>(op, shape, dev, Draw<R, parts>{reserve(op, shape, gen, dev)});
}

}  // namespace detail

// Uniform in [0, 1) (complex: both parts), 24 random bits for float, 53 for double.
template <Floating T>
Tensor<T> rand(const Shape& shape, Generator& gen, Device device = Device::cpu()) {
  return detail::draw<T, fn::UniformDraw>("rand", shape, gen, device);
}
template <Floating T>
Tensor<T> rand(const Shape& shape, Device device = Device::cpu()) {
  return rand<T>(shape, default_generator(), device);
}

// Standard normal (Box-Muller); complex: real and imaginary parts each N(0, 1/2), as PyTorch.
template <Floating T>
Tensor<T> randn(const Shape& shape, Generator& gen, Device device = Device::cpu()) {
  return detail::draw<T, fn::NormalDraw>("randn", shape, gen, device);
}
template <Floating T>
Tensor<T> randn(const Shape& shape, Device device = Device::cpu()) {
  return randn<T>(shape, default_generator(), device);
}

// Uniform in [low, high): low + (high - low) rand.
template <RealFloating T>
Tensor<T> uniform(T low, T high, const Shape& shape, Generator& gen, Device device = Device::cpu()) {
  TENAX_CHECK(low <= high, "uniform", "low ", low, " > high ", high, " (", dtype_traits<T>::name, ")");
  return add(mul(rand<T>(shape, gen, device), high - low), low);
}

// mean + std randn, std >= 0.
template <RealFloating T>
Tensor<T> normal(T mean, T std, const Shape& shape, Generator& gen, Device device = Device::cpu()) {
  TENAX_CHECK(std >= T(0), "normal", "std ", std, " < 0 (", dtype_traits<T>::name, ")");
  return add(mul(randn<T>(shape, gen, device), std), mean);
}

// Uniform integers in [low, high), every value equally likely (rejection sampling, no modulo bias).
template <RandomInteger T = std::int64_t>
Tensor<T> randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& gen,
                  Device device = Device::cpu()) {
  TENAX_CHECK(low < high, "randint", "empty range [", low, ", ", high, ")");
  if constexpr (std::same_as<T, std::int32_t>)
    TENAX_CHECK(low >= INT32_MIN && high - 1 <= INT32_MAX, "randint", "range [", low, ", ", high,
                ") does not fit int32");
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  return detail::generate<T, T>("randint", shape, device,
                                fn::RandintDraw<T>{detail::reserve("randint", shape, gen, device), low, range});
}

// 1 with probability p (elementwise; p's entries in [0, 1]), else 0: rand < p, in p's dtype.
template <RealFloating T>
Tensor<T> bernoulli(const Tensor<T>& p, Generator& gen) {
  detail::check_defined("bernoulli", p);
  return cast<T>(lt(rand<T>(p.shape(), gen, p.device()), p));
}
// True (1) with probability p; T is bool or a real floating type.
template <class T>
requires std::same_as<T, bool> || RealFloating<T> Tensor<T> bernoulli(double p, const Shape& shape, Generator& gen,
                                                                      Device device = Device::cpu()) {
  TENAX_CHECK(p >= 0 && p <= 1, "bernoulli", "probability ", p, " outside [0, 1]");
  const Tensor<double> u = rand<double>(shape, gen, device);
  return cast<T>(lt(u, Tensor<double>::full(Shape{}, p, device)));
}

// A random permutation of 0 .. n-1: Fisher-Yates on the host (for i = n-1 .. 1, swap i with
// randint(0, i + 1) drawn at element index i of the call's stream), then a copy to the device.
template <RandomInteger T = std::int64_t>
Tensor<T> randperm(std::int64_t n, Generator& gen, Device device = Device::cpu()) {
  TENAX_CHECK(n >= 0, "randperm", "n = ", n, " < 0");
  if constexpr (std::same_as<T, std::int32_t>) TENAX_CHECK(n - 1 <= INT32_MAX, "randperm", "n = ", n, " exceeds int32");
  const fn::PhiloxStream s = detail::reserve("randperm", Shape{n}, gen, device);
  std::vector<T> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), T(0));
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::int64_t j = 0;
    fn::RandintDraw<std::int64_t>{s, 0, static_cast<std::uint64_t>(i + 1)}(i, &j);
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return Tensor<T>::from_col_major(Shape{n}, p, device);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_RANDOM(T)                                   \
  TENAX_INSTANCE Tensor<T> rand(const Shape&, Generator&, Device);  \
  TENAX_INSTANCE Tensor<T> rand(const Shape&, Device);              \
  TENAX_INSTANCE Tensor<T> randn(const Shape&, Generator&, Device); \
  TENAX_INSTANCE Tensor<T> randn(const Shape&, Device);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_RANDOM)
#define TENAX_INSTANCES_RANDOM_REAL(T)                                      \
  TENAX_INSTANCE Tensor<T> uniform(T, T, const Shape&, Generator&, Device); \
  TENAX_INSTANCE Tensor<T> normal(T, T, const Shape&, Generator&, Device);  \
  TENAX_INSTANCE Tensor<T> bernoulli(const Tensor<T>&, Generator&);         \
  TENAX_INSTANCE Tensor<T> bernoulli(double, const Shape&, Generator&, Device);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_RANDOM_REAL)
#define TENAX_INSTANCES_RANDOM_INT(T)                                                             \
  TENAX_INSTANCE Tensor<T> randint(std::int64_t, std::int64_t, const Shape&, Generator&, Device); \
  TENAX_INSTANCE Tensor<T> randperm(std::int64_t, Generator&, Device);
#define TENAX_FOR_RANDOM_INT(M) M(std::int32_t) M(std::int64_t)
TENAX_DECLARE_INSTANCES(TENAX_FOR_RANDOM_INT, TENAX_INSTANCES_RANDOM_INT)
#define TENAX_INSTANCES_BERNOULLI_MASK(T) TENAX_INSTANCE Tensor<T> bernoulli(double, const Shape&, Generator&, Device);
#define TENAX_FOR_BOOL(M) M(bool)
TENAX_DECLARE_INSTANCES(TENAX_FOR_BOOL, TENAX_INSTANCES_BERNOULLI_MASK)

}  // namespace tenax
