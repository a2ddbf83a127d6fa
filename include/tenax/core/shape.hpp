#pragma once
// Shape and strides: a fixed-capacity inline vector (rank <= kMaxRank), so tensor metadata never
// touches the heap.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "tenax/core/error.hpp"

namespace tenax {

inline constexpr int kMaxRank = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> v) { assign(v.begin(), v.end()); }
  Shape(const std::vector<std::int64_t>& v) { assign(v.begin(), v.end()); }
  Shape(std::span<const std::int64_t> v) { assign(v.begin(), v.end()); }
  template <class It>
  Shape(It b, It e) {
    assign(b, e);
  }

  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::int64_t operator[](int i) const { return v_[i]; }
  std::int64_t& operator[](int i) { return v_[i]; }
  const std::int64_t* begin() const { return v_; }
  const std::int64_t* end() const { return v_ + n_; }
  std::int64_t* begin() { return v_; }
  std::int64_t* end() { return v_ + n_; }
  const std::int64_t* data() const { return v_; }
  std::int64_t back() const { return v_[n_ - 1]; }

  void push_back(std::int64_t x) {
    TENAX_CHECK(n_ < kMaxRank, "shape", "rank exceeds the maximum of ", kMaxRank);
    v_[n_++] = x;
  }
  void insert(int pos, std::int64_t x) {
    push_back(0);
    for (int i = n_ - 1; i > pos; --i) v_[i] = v_[i - 1];
    v_[pos] = x;
  }
  void erase(int pos) {
    for (int i = pos; i + 1 < n_; ++i) v_[i] = v_[i + 1];
    --n_;
  }
  void resize(int n, std::int64_t fill = 0) {
    TENAX_CHECK(n >= 0 && n <= kMaxRank, "shape", "rank ", n, " exceeds the maximum of ", kMaxRank);
    for (int i = n_; i < n; ++i) v_[i] = fill;
    n_ = n;
  }
  // The rank n with the new entries unset, for a caller that writes all n entries next (resize's
  // fill of a few entries compiles to a `rep stos`, which costs tens of cycles to start).
  void resize_for_overwrite(int n) {
    TENAX_CHECK(n >= 0 && n <= kMaxRank, "shape", "rank ", n, " exceeds the maximum of ", kMaxRank);
    n_ = n;
  }
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <class It>
  void assign(It b, It e) {
    n_ = 0;
    for (; b != e; ++b) push_back(static_cast<std::int64_t>(*b));
  }
  std::int64_t v_[kMaxRank] = {};
  int n_ = 0;
};

using Strides = Shape;

inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '[';
  for (int i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

inline std::string to_string(const Shape& s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

// Number of elements; throws when a dimension is negative or the product overflows int64. The
// product of max(d, 1) (the extent of the column-major strides) must fit too, so a shape with a
// zero dimension cannot make col_major_strides overflow. `context` ends each message (an op on a
// tensor passes its dtype and device, " (f64 on cpu)"): text, or a callable that makes the text,
// called only when a check fails (an op's every call then builds no string).
template <class Context = std::string_view>
std::int64_t checked_numel(const Shape& s, std::string_view op, const Context& context = {}) {
  const auto text = [&]() -> decltype(auto) {
    if constexpr (std::is_invocable_v<const Context&>)
      return context();
    else
      return (context);
  };
  std::int64_t n = 1, span = 1;
  for (auto d : s) {
    TENAX_CHECK(d >= 0, op, "negative dimension in shape ", s, text());
    const std::int64_t e = std::max<std::int64_t>(d, 1);
    TENAX_CHECK(span <= INT64_MAX / e, op, "shape ", s, " overflows int64 elements", text());
    span *= e;
    n *= d;  // n <= span
  }
  // An empty shape allocates nothing, but its strides still reach the span: their byte offsets
  // (up to 16 bytes per element) must fit in int64 (non-empty shapes are checked per dtype).
  TENAX_CHECK(n != 0 || span <= INT64_MAX / 16, op, "shape ", s, " overflows int64 byte offsets", text());
  return n;
}

inline std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Column-major (first index fastest) contiguous strides. set_ writes them into `st` in place: a
// body's strides written element by element and then copied as a whole would make the copy's wide
// loads wait on the narrow stores (a store-forwarding stall, ~8 ns per new tensor).
inline void set_col_major_strides(const Shape& s, Strides& st) {
  st.resize_for_overwrite(s.size());
  std::int64_t acc = 1;
  for (int i = 0; i < s.size(); ++i) {
    st[i] = acc;
    acc *= std::max<std::int64_t>(s[i], 1);
  }
}
inline Strides col_major_strides(const Shape& s) {
  Strides st;
  set_col_major_strides(s, st);
  return st;
}

// Whether axis (possibly negative, counted from the end) names one of rank dimensions.
inline bool axis_in_range(std::int64_t axis, int rank) { return axis >= -rank && axis < rank; }

// Normalises a possibly negative axis, throwing when out of range.
inline int wrap_axis(std::int64_t axis, int rank, std::string_view op) {
  TENAX_CHECK(axis_in_range(axis, rank), op, "axis ", axis, " out of range for rank ", rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The first dimension in which a and b cannot broadcast (see broadcast_shapes), or -1.
inline int broadcast_conflict(const Shape& a, const Shape& b) {
  for (int i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    if (x != y && x != 1 && y != 1) return i;
  }
  return -1;
}

// Broadcast shape of a and b. tenax stores matrices in the leading dimensions and batches in the
// trailing ones, so shapes are aligned at dimension 0 (the column-major mirror of NumPy's rule):
// missing trailing dimensions and dimensions of size 1 broadcast.
inline Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  Shape r;
  int n = std::max(a.size(), b.size());
  r.resize(n);
  for (int i = 0; i < n; ++i) {
    std::int64_t x = i < a.size() ? a[i] : 1, y = i < b.size() ? b[i] : 1;
    TENAX_CHECK(x == y || x == 1 || y == 1, op, "shapes ", a, " and ", b, " cannot be broadcast (dimension ", i, ": ",
                x, " vs ", y, ")");
    r[i] = x == 1 ? y : x;
  }
  return r;
}

}  // namespace tenax
