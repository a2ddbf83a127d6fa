#pragma once
// The generic elementwise driver: out = f(in...) with broadcasting (shapes aligned at dimension 0)
// over any strides. The functor is a plain struct with a templated call operator, so the same
// definition can be instantiated by another backend. Large maps and copies are spread over the
// worker pool in slices (kernels/parallel_loop.hpp); every element is computed the same way.
#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <tuple>

#include "tenax/backend/backend.hpp"
#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/capture.hpp"
#include "tenax/kernels/donation.hpp"
#include "tenax/kernels/parallel_loop.hpp"
#include "tenax/ops/functors.hpp"

namespace tenax::detail {

// Strides (in bytes) with which `t` is read when broadcast to `out`.
inline Strides broadcast_byte_strides(const TensorImpl& t, const Shape& out) {
  Strides s;
  s.resize_for_overwrite(out.size());
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int d = 0; d < out.size(); ++d)
    s[d] = (d < t.rank() && t.shape[d] == out[d] && out[d] != 1) ? t.strides[d] * es : 0;
  return s;
}

inline Strides byte_strides(const TensorImpl& t) {
  Strides s = t.strides;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (auto& x : s) x *= es;
  return s;
}

template <class... In>
Device common_device(std::string_view op, const Tensor<In>&... in) {
  // (No lambda capturing d by reference: d would live in memory, written as two fields and read
  // back whole, a store-forwarding stall of about 10 ns per eager elementwise op.)
  const Device d = std::get<0>(std::tie(in...)).device();
  if (!(... && (in.device() == d))) [[unlikely]] {
    const auto check = [op, d](Device e) {
      TENAX_CHECK(e == d, op, "inputs are on different devices (", d.str(), " and ", e.str(), ")");
    };
    (check(in.device()), ...);
  }
  return d;
}

// The broadcast shape of the inputs; a mismatch names two inputs whose shapes conflict, the
// dimension, and every input's dtype and shape and the device.
template <class... In>
Shape broadcast_all(std::string_view op, const Tensor<In>&... in) {
  const Shape& first = std::get<0>(std::tie(in...)).shape();
  if ((... && (in.shape() == first))) return first;  // the common case: nothing broadcasts
  Shape s;
  bool ok = true;
  ((ok = ok && broadcast_conflict(s, in.shape()) < 0 && (s = broadcast_shapes(s, in.shape(), op), true)), ...);
  if (!ok) {
    const std::array<Shape, sizeof...(In)> shapes{in.shape()...};
    std::ostringstream inputs;
    const char* sep = "";
    ((inputs << sep << dtype_traits<In>::name << " " << in.shape(), sep = ", "), ...);
    for (std::size_t a = 0; a < shapes.size(); ++a)
      for (std::size_t b = a + 1; b < shapes.size(); ++b) {
        const int at = broadcast_conflict(shapes[a], shapes[b]);
        if (at < 0) continue;
        const auto dim = [at](const Shape& x) { return at < x.size() ? x[at] : std::int64_t{1}; };
        fail(op, "shapes ", shapes[a], " and ", shapes[b], " cannot be broadcast (dimension ", at, ": ", dim(shapes[a]),
             " vs ", dim(shapes[b]), "; inputs ", inputs.str(), " on ", std::get<0>(std::tie(in...)).device().str(),
             ")");
      }
    fail(op, "shapes cannot be broadcast (inputs ", inputs.str(), ")");  // not reached: some pair conflicts
  }
  return s;
}

// Throws unless a backend for `dev` is built in.
inline void check_kernel_device(std::string_view op, Device dev) {
  if (!has_backend(dev)) [[unlikely]]
    fail(op, "no kernel for device ", dev.str());
}

// The dimension along which a one-input map should read its input in tiles: where the output's
// innermost dimension strides the input by more than an element and another dimension has the
// input's unit stride, i.e. a transposing copy (contiguous(permute(x)), a matmul operand's scratch
// copy); -1 otherwise. Walking the output in order there reads one element per cache line of the
// input. Tiles of kTransposeRows output rows by one input cache line read every input line once
// and write a few output rows at a time; the tile is narrow in the input's dimension because the
// output steps by a large (often power-of-two) stride there, and more than a few such rows at once
// collide in the L1 cache's sets (measured on this machine kind: a 64 x 4096 f64 transpose took
// 836 us walked in output order, 1.7 ms in 32 x 32 tiles, 270-320 us in 256 x 8 tiles).
inline constexpr std::int64_t kTransposeRows = 256;
inline constexpr std::int64_t kCacheLine = 64;
template <std::size_t N>
int transpose_dimension(const cpu::LoopNest<N>& nest, std::int64_t in_size) {
  if constexpr (N != 2) {
    return -1;
  } else {
    // (An empty nest runs nothing: its extents may still be huge beside a zero, fuzz_linalg.)
    const Shape& sh = nest.shape;
    if (nest.empty || sh.size() < 2 || sh[0] < 16 || nest.strides[1][0] == in_size) return -1;
    for (int d = 1; d < sh.size(); ++d)
      if (nest.strides[1][d] == in_size && sh[d] > 1) return d;
    return -1;
  }
}

// What one element of a map costs, in units of a cheap functor's (kernels/parallel.hpp,
// kParallelMinMapWork): the transcendental functors cost kCostlyElement, the others 1.
template <class F>
inline constexpr std::int64_t map_weight =
    std::is_same_v<F, fn::Exp> || std::is_same_v<F, fn::Log> || std::is_same_v<F, fn::Log1p> ||
            std::is_same_v<F, fn::Expm1> || std::is_same_v<F, fn::Sin> || std::is_same_v<F, fn::Cos> ||
            std::is_same_v<F, fn::Tanh> || std::is_same_v<F, fn::Sigmoid> || std::is_same_v<F, fn::Softplus> ||
            std::is_same_v<F, fn::Pow> || std::is_same_v<F, fn::Atan2> || std::is_same_v<F, fn::Hypot> ||
            std::is_same_v<F, fn::LogAddExp>
        ? cpu::kCostlyElement
        : 1;
// The fewest elements of a map with functor F that are spread over the pool.
template <class F>
inline constexpr std::int64_t map_min_parallel = cpu::kParallelMinMapWork / map_weight<F>;

// A transposing one-input map: the nest without dimension d runs as usual (spread over the pool
// by slices of its own dimensions, sized by the whole element count), and each of its inner rows
// becomes a panel of rows x shape[d] elements written tile by tile. Each element is computed
// exactly as in the plain loop, so the result is the same bit for bit.
template <class Out, class F, class In>
void run_transposed_map_cpu(F f, const cpu::LoopNest<2>& nest, int d, std::array<char*, 2> p) {
  cpu::LoopNest<2> outer;
  for (int k = 0; k < nest.shape.size(); ++k) {
    if (k == d) continue;
    outer.shape.push_back(nest.shape[k]);
    for (std::size_t o = 0; o < 2; ++o) outer.strides[o].push_back(nest.strides[o][k]);
  }
  const std::int64_t ext = nest.shape[d], od = nest.strides[0][d], id = nest.strides[1][d];
  constexpr std::int64_t width = std::max<std::int64_t>(1, kCacheLine / static_cast<std::int64_t>(sizeof(In)));
  auto panel = [&](std::array<char*, 2> q, const std::array<std::int64_t, 2>& s, std::int64_t n) {
    for (std::int64_t i0 = 0; i0 < n; i0 += kTransposeRows) {
      const std::int64_t i1 = std::min(n, i0 + kTransposeRows);
      for (std::int64_t j0 = 0; j0 < ext; j0 += width) {
        const std::int64_t j1 = std::min(ext, j0 + width);
        for (std::int64_t i = i0; i < i1; ++i) {
          char* o = q[0] + i * s[0];
          const char* x = q[1] + i * s[1];
          for (std::int64_t j = j0; j < j1; ++j)
            *reinterpret_cast<Out*>(o + j * od) = f(*reinterpret_cast<const In*>(x + j * id));
        }
      }
    }
  };
  const std::int64_t parts =
      nest.numel() < map_min_parallel<F> ? 1 : cpu::useful_parts(nest.numel(), cpu::parallel_threads());
  if (parts <= 1) return cpu::run_loops(outer, p, panel);
  cpu::run_loops_sliced(outer, p, cpu::cut_dimension(outer, parts, [](int) { return true; }), parts, panel);
}

// n elements of out = f(in...) from q (output first) with byte steps s: the innermost loop of
// every CPU map, and what a prepared program's fused chain of maps runs block by block.
template <class Out, class F, class... In, std::size_t N = sizeof...(In) + 1>
void map_line(const F& f, char* const* q, const std::int64_t* s, std::int64_t n) {
  bool unit = s[0] == sizeof(Out);
  std::size_t k = 1;
  ((unit = unit && s[k++] == static_cast<std::int64_t>(sizeof(In))), ...);
  if (unit) {
    Out* o = reinterpret_cast<Out*>(q[0]);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::tuple<const In*...> ip{reinterpret_cast<const In*>(q[I + 1])...};
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(ip)[i]...);
    }
    (std::index_sequence_for<In...>{});
  } else {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      for (std::int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(q[0] + i * s[0]) = f(*reinterpret_cast<const In*>(q[I + 1] + i * s[I + 1])...);
    }
    (std::index_sequence_for<In...>{});
  }
}

// The CPU kernel of a map over a merged loop nest (operand 0 the output): what detail::map runs,
// and what a prepared program's step runs later from the captured nest (kernels/capture.hpp).
template <class Out, class F, class... In, std::size_t N = sizeof...(In) + 1>
void run_map_cpu(F f, const cpu::LoopNest<N>& nest, std::array<char*, N> p) {
  auto run = [&](std::array<char*, N> q, const std::array<std::int64_t, N>& s, std::int64_t n) {
    map_line<Out, F, In...>(f, q.data(), s.data(), n);
  };
  // A nest of at most one dimension below the parallel threshold (the small steps of a prepared
  // program): that one run, without the drivers' checks.
  if (nest.shape.size() <= 1 && !nest.empty) {
    std::array<std::int64_t, N> s{};
    std::int64_t n = 1;
    if (nest.shape.size() == 1) {
      n = nest.shape[0];
      for (std::size_t k = 0; k < N; ++k) s[k] = nest.strides[k][0];
    }
    if (n < map_min_parallel<F>) return run(p, s, n);
  }
  if constexpr (N == 2) {
    using I = std::tuple_element_t<0, std::tuple<In...>>;
    const int d = transpose_dimension(nest, static_cast<std::int64_t>(sizeof(I)));
    if (d > 0) return run_transposed_map_cpu<Out, F, In...>(f, nest, d, p);
  }
  cpu::parallel_run_loops<N>(nest, p, run, map_min_parallel<F>);
}

// One elementwise launch: operand 0 is the output; extents, byte strides and first elements of
// the operands, and their bodies (for a prepared program's capture).
template <std::size_t N>
struct MapLaunch {
  int device;
  const Shape& shape;
  const std::array<Strides, N>& strides;
  const std::array<char*, N>& ptr;
  const std::array<const TensorImpl*, N>& body;
};

// A device kind's kernel of out = f(in...), or null where it has none.
template <class Out, class F, class... In>
using MapFn = void (*)(const F& f, const MapLaunch<sizeof...(In) + 1>& l);

// The CPU's map kernel: the merged loop nest, recorded for a prepared program's first run, then run.
template <class Out, class F, class... In>
void cpu_map(const F& f, const MapLaunch<sizeof...(In) + 1>& l) {
  constexpr std::size_t N = sizeof...(In) + 1;
  const cpu::LoopNest<N> nest = cpu::merge_loops<N>(l.shape, l.strides);
  if (KernelCapture* c = kernel_capture()) [[unlikely]] {
    c->record_n(
        [f, nest](char* const* ptrs) {
          std::array<char*, N> p;
          for (std::size_t k = 0; k < N; ++k) p[k] = ptrs[k];
          run_map_cpu<Out, F, In...>(f, nest, p);
        },
        l.body.data(), 1, l.body.data() + 1, static_cast<int>(N - 1));
    c->record_line([f](char* const* q, const std::int64_t* s, std::int64_t n) { map_line<Out, F, In...>(f, q, s, n); },
                   l.shape, l.strides.data(), static_cast<int>(N));
  }
  run_map_cpu<Out, F, In...>(f, nest, l.ptr);
}

// The kernel slot of one functor and dtype signature: one entry per device kind. The CPU's is
// constant; a device backend fills its own entry when the registry first starts (the CUDA backend's
// cuda/src/backend.cpp). Default visibility, so a program and a shared tenax see one slot.
template <class Out, class F, class... In>
struct TENAX_SHARED_STATE MapKernel {
  static inline MapFn<Out, F, In...> on[kDeviceKinds] = {&cpu_map<Out, F, In...>};
};

// Runs out = f(in...) on the operands' device.
template <class Out, class F, class... In, std::size_t N = sizeof...(In) + 1>
void launch_map(std::string_view op, Device dev, const F& f, const MapLaunch<N>& l) {
  const MapFn<Out, F, In...> fn = MapKernel<Out, F, In...>::on[kind_index(dev)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", dev.str(), " (", dtype_traits<Out>::name, " output)");
  fn(f, l);
}

// Elementwise map into a fresh tensor of the broadcast shape.
template <class Out, class F, class... In>
Tensor<Out> map(std::string_view op, F f, const Tensor<In>&... in) {
  const Device dev = common_device(op, in...);
  const Shape shape = broadcast_all(op, in...);
  // In a prepared run, the buffer of an input that dies here (kernels/donation.hpp).
  detail::ImplPtr given;
  if (donated_body() != nullptr) [[unlikely]]
    given = take_donation(dtype_of<Out>, shape, dev, {in.impl().get()...});
  Tensor<Out> out = given ? Tensor<Out>(std::move(given)) : Tensor<Out>::empty(shape, dev);
  constexpr std::size_t N = sizeof...(In) + 1;
  const std::array<Strides, N> st{byte_strides(*out.impl()), broadcast_byte_strides(*in.impl(), shape)...};
  const std::array<char*, N> p{static_cast<char*>(out.impl()->data()), static_cast<char*>(in.impl()->data())...};
  const std::array<const TensorImpl*, N> b{out.impl().get(), in.impl().get()...};
  launch_map<Out, F, In...>(op, dev, f, MapLaunch<N>{dev.index, shape, st, p, b});
  return out;
}

// Runs kernel(ptrs) on out's and the inputs' first elements, recording it first for a prepared
// program's first run (kernels/capture.hpp): for ops whose forward is one hand-written CPU loop.
template <class K, class Out, class... In>
void record_kernel(K&& kernel, const Tensor<Out>& out, const Tensor<In>&... in) {
  if (KernelCapture* c = kernel_capture()) [[unlikely]]
    c->record(kernel, out.impl().get(), in.impl().get()...);
  char* const p[] = {static_cast<char*>(out.impl()->data()), static_cast<char*>(in.impl()->data())...};
  kernel(p);
}

// record_kernel for a kernel with several outputs (an undefined output is nullptr, and so is its
// pointer): kernel(ptrs) gets the outputs' first elements, then the inputs'.
template <class K, std::size_t NO, std::size_t NI>
void record_kernel_n(K&& kernel, const TensorImpl* const (&outs)[NO], const TensorImpl* const (&ins)[NI]) {
  static_assert(NO <= kMaxKernelOutputs && NI <= kMaxKernelOperands);
  if (KernelCapture* c = kernel_capture()) [[unlikely]]
    c->record_n(kernel, outs, static_cast<int>(NO), ins, static_cast<int>(NI));
  char* p[NO + NI];
  for (std::size_t j = 0; j < NO; ++j) p[j] = outs[j] ? static_cast<char*>(outs[j]->data()) : nullptr;
  for (std::size_t j = 0; j < NI; ++j) p[NO + j] = static_cast<char*>(ins[j]->data());
  kernel(p);
}

// A tensor's body for record_kernel_n, nullptr when undefined.
template <class T>
const TensorImpl* impl_of(const Tensor<T>& t) {
  return t.defined() ? t.impl().get() : nullptr;
}

// The CPU copy of src into dst (same shape, any strides) as a kernel on their first elements:
// what copy_into runs, for ops whose captured kernel copies and then does more (tril/triu, embed).
template <class D, class S>
auto copy_kernel(const TensorImpl& dst, const TensorImpl& src) {
  const cpu::LoopNest<2> nest = cpu::merge_loops<2>(dst.shape, {byte_strides(dst), byte_strides(src)});
  return [nest](char* d, char* s) { run_map_cpu<D, fn::Convert<D>, S>(fn::Convert<D>{}, nest, {d, s}); };
}

// Copies src into the (possibly strided) dst of the same shape, converting the element type.
template <class D, class S>
void copy_into(const Tensor<D>& dst, const Tensor<S>& src) {
  TENAX_CHECK(dst.shape() == src.shape(), "copy", "shape ", src.shape(), " into ", dst.shape());
  TENAX_CHECK(dst.device() == src.device(), "copy", "from ", src.device().str(), " into ", dst.device().str(),
              " (use to_device)");
  const std::array<Strides, 2> st{byte_strides(*dst.impl()), byte_strides(*src.impl())};
  const std::array<char*, 2> p{static_cast<char*>(dst.impl()->data()), static_cast<char*>(src.impl()->data())};
  const std::array<const TensorImpl*, 2> b{dst.impl().get(), src.impl().get()};
  launch_map<D, fn::Convert<D>, S>("copy", dst.device(), fn::Convert<D>{},
                                   MapLaunch<2>{dst.device().index, dst.shape(), st, p, b});
}

}  // namespace tenax::detail
