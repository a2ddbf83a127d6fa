#pragma once
// What the indexing ops (gather.hpp, scatter_add.hpp, put_along_axis.hpp) share: the geometry of
// their kernels, the checks of their arguments and the out-of-range index report.
//
// Indices are int64; a negative index counts from the end (NumPy's take_along_axis), so -n..n-1
// are valid for an axis of length n. Any other index raises a tenax::Error naming the op, the
// index, its position in the index tensor and the axis length: at once on the CPU (also from a
// prepared program's captured kernel); on a device when its results are next read
// (core/deferred_checks.hpp), so no op waits for the device. The kernels of every device skip such
// an index (a gather writes zero there), so nothing outside a tensor is read or written.
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

#include "tenax/backend/backend.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/index.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::detail {

// The geometry of an indexing kernel: positions over ishape (the index tensor's strides ist,
// the values' vst), the indexed tensor of shape xshape and strides xst.
inline AxisGeometry axis_geometry(int axis, const Shape& xshape, const Strides& xst, const Shape& ishape,
                                  const Strides& ist, const Strides& vst) {
  AxisGeometry g;
  g.rank = xshape.size();
  g.axis = axis;
  g.len = xshape[axis];
  g.numel = numel_of(ishape);
  for (int d = 0; d < g.rank; ++d) {
    g.shape[d] = ishape[d];
    g.xshape[d] = xshape[d];
    g.idx[d] = ist[d];
    g.val[d] = vst[d];
    g.x[d] = xst[d];
  }
  return g;
}

// The out-of-range index report of one call.
struct IndexReport {
  std::string op;
  int axis = 0;
  std::int64_t len = 0;
  Shape positions;     // the index tensor's shape
  bool one_d = false;  // index_select / index_add: the position is the coordinate along axis
  Device dev;
  // bad: 1 + the position (column-major over positions) and the index (DeviceKernels::gather_axis).
  [[noreturn]] void raise(const std::int64_t* bad) const {
    std::int64_t q = bad[0] - 1;
    std::ostringstream pos;
    if (!one_d) pos << '(';
    for (int d = 0; d < positions.size(); ++d) {
      const std::int64_t c = q % positions[d];
      q /= positions[d];
      if (!one_d) pos << (d ? ", " : "") << c;
      if (one_d && d == axis) pos << c;
    }
    if (!one_d) pos << ')';
    std::ostringstream valid;
    if (len == 0)
      valid << "the axis is empty";
    else
      valid << "valid: " << -len << " to " << len - 1;
    fail(op, "index ", bad[1], " at position ", pos.str(), " of the index tensor is out of range for axis ", axis,
         " of length ", len, " (", valid.str(), "; on ", dev.str(), ")");
  }
};

// Runs an indexing kernel body(ptrs, bad) (ptrs: out's first element, then the operands') on
// out's device and checks its report (see above), by a slot of kernels/dispatch.hpp. The host form:
// one kernel recorded for a prepared program (the copy of `copy_from`, when given, into out
// included), so a prepared run raises too.
template <class Body, class Out, class... In>
void run_checked_host(const IndexReport& report, Body body, const Tensor<Out>* copy_from, const Tensor<Out>& out,
                      const Tensor<In>&... in) {
  std::function<void(char*, char*)> copy;
  if (copy_from) copy = copy_kernel<Out, Out>(*out.impl(), *copy_from->impl());
  record_kernel(
      [body, report, copy](char* const* p) {
        if (copy) copy(p[0], p[1]);  // operand 1 is copy_from
        std::int64_t bad[2] = {0, 0};
        body(p, bad);
        if (bad[0] != 0) report.raise(bad);
      },
      out, in...);
}
// The generic form: the copy, the kernel and a deferred check of its report.
template <class Body, class Out, class... In>
void run_checked_generic(const IndexReport& report, Body body, const Tensor<Out>* copy_from, const Tensor<Out>& out,
                         const Tensor<In>&... in) {
  if (copy_from) copy_into(out, *copy_from);
  const Tensor<std::int32_t> bad = Tensor<std::int32_t>::empty({4}, out.device());  // two int64
  char* const p[] = {static_cast<char*>(out.impl()->data()), static_cast<char*>(in.impl()->data())...};
  body(p, reinterpret_cast<std::int64_t*>(bad.impl()->data()));
  defer_check(bad.impl(), [report](const std::int32_t* codes, std::int64_t) {
    std::int64_t b[2];
    std::memcpy(b, codes, sizeof b);
    if (b[0] != 0) report.raise(b);
  });
}
template <class Body, class Out, class... In>
void run_checked(const IndexReport& report, Body body, const Tensor<Out>* copy_from, const Tensor<Out>& out,
                 const Tensor<In>&... in) {
  dispatch<&run_checked_host<Body, Out, In...>, &run_checked_generic<Body, Out, In...>>(
      out.device(), report, std::move(body), copy_from, out, in...);
}

// The argument checks of the ops that index x along axis with idx (of x's rank): devices, rank,
// and for d != axis, idx's extent against x's: at most x's (gather, scatter_add), or equal or
// broadcasting (take_along_axis, put_along_axis).
enum class IndexExtents { at_most, broadcast };
template <class T, class... More>
void check_index_args(const char* op, const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx, IndexExtents rule,
                      const More&... more) {
  TENAX_CHECK(idx.device() == x.device() && (... && (more.device() == x.device())), op,
              "inputs are on different devices (x on ", x.device().str(), ", indices on ", idx.device().str(), ")");
  TENAX_CHECK(idx.dim() == x.dim(), op, "the indices (shape ", idx.shape(), ") need the rank of x (shape ", x.shape(),
              dtype_on(x), ")");
  for (int d = 0; d < x.dim(); ++d) {
    if (d == axis) continue;
    const std::int64_t i = idx.shape()[d], n = x.shape()[d];
    const bool ok = rule == IndexExtents::at_most ? i <= n : (i == n || i == 1 || n == 1);
    TENAX_CHECK(ok, op, "the indices' shape ", idx.shape(), " does not fit x's shape ", x.shape(), " in dimension ", d,
                rule == IndexExtents::at_most ? " (at most x's extent outside axis " : " (they broadcast outside axis ",
                axis, ")", dtype_on(x));
  }
}

// A 1-D idx as a view of shape `shape` (idx's entries along axis, repeated in the other dims).
inline Tensor<std::int64_t> spread_along(const Tensor<std::int64_t>& idx, int axis, const Shape& shape) {
  Shape s;
  for (int d = 0; d < shape.size(); ++d) s.push_back(d == axis ? idx.numel() : 1);
  return broadcast_to(reshape(idx, s), shape);
}

// Checks of index_select / index_add's 1-D index.
template <class T>
void check_index_vector(const char* op, const Tensor<T>& x, const Tensor<std::int64_t>& idx) {
  TENAX_CHECK(idx.device() == x.device(), op, "inputs are on different devices (x on ", x.device().str(),
              ", indices on ", idx.device().str(), ")");
  TENAX_CHECK(idx.dim() == 1, op, "the indices must be 1-D (shape ", idx.shape(), ")");
}

}  // namespace tenax::detail
