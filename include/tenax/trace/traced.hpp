#pragma once
// trace -> transform -> compile -> prepared run.
//
//   auto g = tenax::trace(f, x0, y0);       // Traced: the graph of f at these shapes/dtypes
//   auto dg = tenax::grad(g);               // a transformed graph is a graph (grad, value_and_grad,
//                                           // jvp, vjp; compose them: grad(grad(g)), jvp(grad(g)))
//   auto p = tenax::compile(dg);            // Compiled: CSE, DCE, liveness plan (trace/program.hpp)
//   auto gx = p(x, y);                      // prepared run
//   auto step = tenax::jit(f);              // compiles once per input signature, then runs
//
// Tracing is by execution: f runs once on the example values (every op's forward runs, so shape
// logic is exactly eager's) while apply records each op. Consequences, all documented:
//   - control flow that reads tensor values on the host (item(), to_vector(), the det rule's
//     singular, nearly singular and subnormal-pivot branches, the solve rules' overflow forms)
//     is evaluated once, at trace time (each
//     branch still selects per matrix with a mask computed at run time); linalg's info checks are steps
//     of the program, so a compiled solve of a singular matrix raises as eager does;
//   - a Compiled is not differentiable and cannot be traced: calling it on inputs that require
//     grad or carry tangents, or while trace() records, raises (differentiate the Traced);
//   - graph inputs are contiguous copies of the examples, and a prepared run makes its inputs
//     contiguous, so both see the same layouts (eager on the same contiguous inputs is
//     bit-identical to the prepared run);
//   - a Traced re-executes through apply (operator()), so the eager transforms apply to it; the
//     graph transforms are exactly that, traced again. detach() and ops run under no_grad stay
//     cut off from differentiation there, as in eager mode.
//   - a tensor f closes over (not an input) is a constant of the graph, held by reference, and
//     every op whose inputs are all constants is evaluated once, at trace time: writing into such
//     a tensor after tracing leaves a mix of old and new values (pass values that change as
//     inputs); a scalar f reads is likewise frozen at its trace-time value;
//   - side effects outside the graph happen at trace time (once per trace; a Jit traces a signature
//     once, or once per thread that meets it first at the same moment): backward() accumulating into the
//     .grad() of a tensor f closes over runs on the example values and not in compiled runs (return
//     the gradient from grad()/vjp() instead; backward() on a leaf made from an input is recorded);
//   - a compiled result is the caller's, like an eager one: an output that is a constant, or the
//     same value as an earlier output, is copied (Program::output_shared);
//   - a Compiled (with its copies) is for one thread at a time (a run meeting another raises); a Jit
//     may be called from several threads.
// Results may be Tensor<T>, std::pair or std::tuple of results (nested).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tenax/ad/functional.hpp"
#include "tenax/ad/jacobian.hpp"
#include "tenax/ad/structure.hpp"
#include "tenax/trace/graph.hpp"
#include "tenax/trace/program.hpp"
#include "tenax/trace/recorder.hpp"

namespace tenax {
namespace detail {

// Installs a tracer for a scope (trace() is not reentrant on one thread).
class TracerScope {
 public:
  explicit TracerScope(Tracer& t) {
    TENAX_CHECK(mode().tracer == nullptr, "trace", "trace() called while already tracing");
    mode().tracer = &t;
  }
  ~TracerScope() { mode().tracer = nullptr; }
  TracerScope(const TracerScope&) = delete;
  TracerScope& operator=(const TracerScope&) = delete;
};

template <class T>
void check_signature(const ir::Graph& g, std::size_t k, const Tensor<T>& x, const char* who) {
  TENAX_CHECK(x.defined(), who, "input ", k, " is undefined");
  const ir::ValueInfo& want = g.values[static_cast<std::size_t>(g.inputs[k])];
  TENAX_CHECK(x.impl()->dtype == want.dtype && x.shape() == want.shape && x.device() == want.device, who, "input ", k,
              ": traced for ", want.str(), " on ", want.device.str(), ", got ", dtype_traits<T>::name, x.shape(),
              " on ", x.device().str());
}

}  // namespace detail

// A traced function: its graph and the example inputs it was traced at. Calling it re-executes
// the graph through apply (differentiable, and traceable again).
//
// A graph made by a graph transform (grad(g), jvp(g), ...) also keeps its source: that transform
// applied to g. Calling it runs the source (the eager transform over g's re-execution, which is
// what its graph recorded, so the values are the same), so that a further transform differentiates
// the original computation: rules that took a first-order shortcut while the inner transform was
// traced (solve's backward reusing the saved LU factors, for example) are taken again with their
// higher-order forms where the outer transform needs them.
template <class R, class... T>
class Traced {
 public:
  using result_type = R;
  using Source = std::function<R(const Tensor<T>&...)>;
  Traced(ir::Graph g, std::tuple<Tensor<T>...> examples) : graph_(std::move(g)), examples_(std::move(examples)) {}

  const ir::Graph& graph() const { return graph_; }
  const std::tuple<Tensor<T>...>& examples() const { return examples_; }
  std::string str() const { return graph_.str(); }

  R operator()(const Tensor<T>&... x) const {
    std::size_t k = 0;
    (detail::check_signature(graph_, k++, x, "traced"), ...);
    if (source_) return source_(x...);
    std::vector<detail::ImplPtr> env(graph_.values.size());
    k = 0;
    ((env[static_cast<std::size_t>(graph_.inputs[k++])] = x.impl()), ...);
    for (std::size_t c = 0; c < graph_.constant_ids.size(); ++c)
      env[static_cast<std::size_t>(graph_.constant_ids[c])] = graph_.constants[c];
    for (const ir::GraphNode& n : graph_.nodes) n.call(env.data(), n.in.data(), n.out.data());
    std::vector<detail::ImplPtr> outs;
    for (std::int32_t v : graph_.outputs) outs.push_back(env[static_cast<std::size_t>(v)]);
    const detail::ImplPtr* p = outs.data();
    return detail::Structure<R>::unflatten(p);
  }

  // This graph with a source (see above).
  Traced with_source(Source source) && {
    source_ = std::move(source);
    return std::move(*this);
  }

  // The graph of `transform` applied to this graph, with that transform as its source.
  template <class F>
  auto derive(F transform) const {
    auto self = std::make_shared<const Traced>(*this);
    auto source = [self, transform](const auto&... x) { return transform(*self, x...); };
    return std::apply([&](const auto&... ex) { return trace(source, ex...).with_source(source); }, examples_);
  }

 private:
  ir::Graph graph_;
  std::tuple<Tensor<T>...> examples_;
  Source source_;
};

// Traces f at the example inputs x (their dtypes, shapes and devices; values are used to run f).
// Inputs of any dtype: integer ones (indices) are values of the graph like the others; the graph
// transforms below take floating inputs only.
template <class F, Scalar... T>
requires(sizeof...(T) > 0) auto trace(F&& f, const Tensor<T>&... x) {
  using R = std::decay_t<std::invoke_result_t<F&, const Tensor<T>&...>>;
  ir::Graph g;
  detail::Tracer tracer(g);
  // Inputs: contiguous copies without AD state, tagged as the graph's inputs in order.
  std::tuple<Tensor<T>...> xin{clone(x.detach())...};
  std::apply([&](auto&... t) { (tracer.add_input(*t.impl()), ...); }, xin);
  R r = [&] {
    detail::TracerScope scope(tracer);
    return std::apply(f, xin);
  }();
  std::array<detail::ImplPtr, detail::Structure<R>::size> flat;
  detail::ImplPtr* out = flat.data();
  detail::Structure<R>::flatten(r, out);
  for (const detail::ImplPtr& o : flat) {
    TENAX_CHECK(o, "trace", "the traced function returned an undefined tensor");
    g.outputs.push_back(tracer.use("return", *o));
  }
  return Traced<R, T...>(std::move(g), std::tuple<Tensor<T>...>{clone(x.detach())...});
}

// A compiled (prepared) program with f's signature.
template <class R, class... T>
class Compiled {
 public:
  explicit Compiled(const Traced<R, T...>& t) : prog_(std::make_shared<ir::Program>(t.graph())) {}

  // Makes the inputs contiguous and runs the program (which checks them against its signature).
  // A contiguous input is passed as it is, borrowed (no reference count: the caller holds it).
  R operator()(const Tensor<T>&... x) const {
    TENAX_CHECK((... && x.defined()), "compiled", "an input is undefined");
    struct Inputs {
      detail::ImplPtr p[sizeof...(T)];
      bool borrowed[sizeof...(T)];
      ~Inputs() {
        for (std::size_t k = 0; k < sizeof...(T); ++k)
          if (borrowed[k]) p[k].detach();
      }
    } ins{{(x.is_contiguous() ? detail::ImplPtr::borrow(x.impl().get()) : x.contiguous().impl())...},
          {x.is_contiguous()...}};
    std::array<detail::ImplPtr, detail::Structure<R>::size> outs;
    prog_->run(ins.p, sizeof...(T), outs.data());
    // Outputs the program hands out every run or twice (Program::output_shared) become copies.
    std::array<char, detail::Structure<R>::size> shared{};
    bool any = false;
    for (std::size_t k = 0; k < shared.size(); ++k) any = (shared[k] = prog_->output_shared(k)) || any;
    if (any) [[unlikely]] {
      const char* flag = shared.data();
      detail::ImplPtr* io = outs.data();
      detail::Structure<R>::copy_flagged(flag, io);
    }
    detail::ImplPtr* p = outs.data();
    return detail::Structure<R>::take(p);
  }
  R run(const Tensor<T>&... x) const { return (*this)(x...); }

  const ir::Program& program() const { return *prog_; }
  std::string str() const { return prog_->str(); }

 private:
  std::shared_ptr<ir::Program> prog_;
};

template <class R, class... T>
Compiled<R, T...> compile(const Traced<R, T...>& t) {
  return Compiled<R, T...>(t);
}

template <class F, Scalar... T>
requires(sizeof...(T) > 0) auto compile(F&& f, const Tensor<T>&... x) {
  return compile(trace(std::forward<F>(f), x...));
}

// ---- graph transforms: the eager transforms applied to the re-executed graph, traced again ----

template <class R, Floating... T>
auto value_and_grad(const Traced<R, T...>& g) {
  return g.derive([](const auto& s, const auto&... x) { return value_and_grad(s, x...); });
}

template <class R, Floating... T>
auto grad(const Traced<R, T...>& g) {
  return g.derive([](const auto& s, const auto&... x) { return grad(s, x...); });
}

// The Jacobians and the Hessian of the graph's function (ad/jacobian.hpp), as graphs.
template <class R, Floating... T>
auto jacrev(const Traced<R, T...>& g) {
  return g.derive([](const auto& s, const auto&... x) { return jacrev(s, x...); });
}

template <class R, Floating... T>
auto jacfwd(const Traced<R, T...>& g) {
  return g.derive([](const auto& s, const auto&... x) { return jacfwd(s, x...); });
}

template <class R, Floating... T>
auto hessian(const Traced<R, T...>& g) {
  return g.derive([](const auto& s, const auto&... x) { return hessian(s, x...); });
}

// (x, dx) -> (f(x), J dx), for a function of one input with one tensor output.
template <class U, Floating T>
auto jvp(const Traced<Tensor<U>, T>& g) {
  using G = Traced<Tensor<U>, T>;
  auto self = std::make_shared<const G>(g);
  auto source = [self](const Tensor<T>& xi, const Tensor<T>& dx) { return jvp(*self, xi, dx); };
  const Tensor<T>& x = std::get<0>(g.examples());
  return trace(source, x, Tensor<T>::ones(x.shape(), x.device())).with_source(source);
}

// (x, gy) -> the cotangent of x, for a function of one input with one tensor output.
template <class U, Floating T>
auto vjp(const Traced<Tensor<U>, T>& g) {
  using G = Traced<Tensor<U>, T>;
  auto self = std::make_shared<const G>(g);
  auto source = [self](const Tensor<T>& xi, const Tensor<U>& gy) { return vjp(*self, xi).second(gy); };
  const Tensor<T>& x = std::get<0>(g.examples());
  const ir::ValueInfo& y = g.graph().values[static_cast<std::size_t>(g.graph().outputs[0])];
  return trace(source, x, Tensor<U>::ones(y.shape, y.device)).with_source(source);
}

// f compiled once per input signature (dtypes, shapes, devices): the first call with a new
// signature traces and compiles, later calls with it run the prepared program. Several threads
// may call one Jit at once: a call takes a program of its signature that no other call is running,
// compiling another copy from the same trace when all are busy (so there are at most as many
// copies as concurrent callers), and returns it afterwards. Copies of a Jit share its programs.
template <class F>
class Jit {
 public:
  explicit Jit(F f) : f_(std::move(f)) {}

  template <Floating... T>
  requires(sizeof...(T) > 0) auto operator()(const Tensor<T>&... x) {
    using R = std::decay_t<std::invoke_result_t<F&, const Tensor<T>&...>>;
    using C = Compiled<R, T...>;
    std::size_t k = 0;
    auto check_defined = [&k](bool defined) {
      TENAX_CHECK(defined, "jit", "input ", k, " is undefined (default-constructed)");
      ++k;
    };
    (check_defined(x.defined()), ...);
    std::uint64_t h = (static_cast<std::uint64_t>(sizeof...(T)) << 56) ^ typeid(C).hash_code();
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    ((mix(static_cast<std::uint64_t>(x.impl()->dtype)), mix(static_cast<std::uint64_t>(x.device().index) + 1),
      [&] {
        for (auto d : x.shape()) mix(static_cast<std::uint64_t>(d));
      }()),
     ...);
    using Tr = Traced<R, T...>;
    auto find = [&]() -> Entry* {  // with s_->mu held; elements of an unordered_multimap keep their address
      auto [lo, hi] = s_->cache.equal_range(h);
      for (auto it = lo; it != hi; ++it) {
        if (it->second.type != &typeid(C)) continue;
        std::size_t k = 0;
        bool same = true;
        ((same = same && matches(static_cast<const Tr*>(it->second.traced.get())->graph(), k++, x)), ...);
        if (same) return &it->second;
      }
      return nullptr;
    };
    Entry* e = nullptr;
    std::shared_ptr<C> c;
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      e = find();
      if (e && !e->idle.empty()) {
        c = std::static_pointer_cast<C>(e->idle.back());
        e->idle.pop_back();
      }
    }
    if (!e) {
      // Traced without the lock (f may take long); when another thread traced the same signature
      // meanwhile, its entry is kept and this trace dropped.
      auto tr = std::make_shared<const Tr>(trace(f_, x...));
      std::lock_guard<std::mutex> lock(s_->mu);
      e = find();
      if (!e) {
        ++s_->compilations;
        e = &s_->cache.emplace(h, Entry{&typeid(C), tr, {}, 0})->second;
      }
    }
    if (!c) {
      c = std::make_shared<C>(*static_cast<const Tr*>(e->traced.get()));
      std::lock_guard<std::mutex> lock(s_->mu);
      ++e->programs;
      e->idle.reserve(e->programs);  // so that putting it back never allocates
    }
    struct Return {  // the program goes back to the idle list, also when the run throws
      State& s;
      Entry& e;
      std::shared_ptr<C>& c;
      ~Return() {
        try {
          std::lock_guard<std::mutex> lock(s.mu);
          e.idle.push_back(std::move(c));
        } catch (...) {  // (cannot happen: capacity is reserved) the program is dropped, not reused
        }
      }
    } ret{*s_, *e, c};
    return (*c)(x...);
  }

  // How many signatures have been traced and compiled.
  std::size_t compilations() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->compilations;
  }
  // How many programs exist in all (copies compiled for concurrent callers included).
  std::size_t programs() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    std::size_t n = 0;
    for (const auto& [h, e] : s_->cache) n += e.programs;
    return n;
  }

 private:
  struct Entry {
    const std::type_info* type;
    std::shared_ptr<const void> traced;       // the Traced of this signature
    std::vector<std::shared_ptr<void>> idle;  // its compiled programs no call is running
    std::size_t programs = 0;
  };
  template <class T>
  static bool matches(const ir::Graph& g, std::size_t k, const Tensor<T>& x) {
    const ir::ValueInfo& v = g.values[static_cast<std::size_t>(g.inputs[k])];
    return v.dtype == x.impl()->dtype && v.shape == x.shape() && v.device == x.device();
  }
  struct State {
    std::mutex mu;
    std::unordered_multimap<std::uint64_t, Entry> cache;
    std::size_t compilations = 0;
  };
  F f_;
  std::shared_ptr<State> s_ = std::make_shared<State>();
};

template <class F>
Jit<std::decay_t<F>> jit(F&& f) {
  return Jit<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace tenax
