#pragma once
// logaddexp(a, b): log(e^a + e^b), computed stably (real; broadcasting).
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// y = log(e^a + e^b): dy = sigmoid(a - b) da + sigmoid(b - a) db (e^(a - y) and e^(b - y),
// finite where a or b is infinite); the cotangents likewise. NaN where a = b = +-inf.
struct LogAddExp : BySlopes<LogAddExp, fn::LogAddExp> {
  static constexpr const char* name = "logaddexp";
  static constexpr bool saves_outputs = false;
  template <class C>
  static auto slopes(const C& c) {
    return std::pair{sigmoid(sub(c.x0(), c.x1())), sigmoid(sub(c.x1(), c.x0()))};
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> logaddexp(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::apply(ops::LogAddExp{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LOGADDEXP(T) TENAX_INSTANCE Tensor<T> logaddexp(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_LOGADDEXP)

}  // namespace tenax
