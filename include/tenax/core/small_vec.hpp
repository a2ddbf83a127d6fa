#pragma once
// A vector with N elements of inline storage that moves to the heap beyond N.
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace tenax::detail {

template <class T, std::size_t N>
class SmallVec {
 public:
  SmallVec() = default;
  explicit SmallVec(std::size_t n) { resize(n); }
  SmallVec(const SmallVec& o) {
    reserve(o.n_);
    for (const T& x : o) push_back(x);
  }
  SmallVec(SmallVec&& o) noexcept {
    if (o.p_ != o.inline_ptr()) {
      p_ = std::exchange(o.p_, o.inline_ptr());
      n_ = std::exchange(o.n_, 0);
      cap_ = std::exchange(o.cap_, N);
    } else {
      for (auto& x : o) push_back(std::move(x));
      o.clear();
    }
  }
  SmallVec& operator=(SmallVec o) {
    clear();
    if (o.p_ != o.inline_ptr()) {
      free_heap();
      p_ = std::exchange(o.p_, o.inline_ptr());
      n_ = std::exchange(o.n_, 0);
      cap_ = std::exchange(o.cap_, N);
    } else {
      for (auto& x : o) push_back(std::move(x));
    }
    return *this;
  }
  ~SmallVec() {
    clear();
    free_heap();
  }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](std::size_t i) { return p_[i]; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  const T& operator[](std::size_t i) const { return p_[i]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  T& back() { return p_[n_ - 1]; }

  void reserve(std::size_t c) {
    if (c <= cap_) return;
    T* np = static_cast<T*>(::operator new (c * sizeof(T), std::align_val_t{alignof(T)}));
    for (std::size_t i = 0; i < n_; ++i) {
      new (np + i) T(std::move(p_[i]));
      p_[i].~T();
    }
    free_heap();
    p_ = np;
    cap_ = c;
  }
  template <class... A>
  T& emplace_back(A&&... a) {
    if (n_ == cap_) reserve(cap_ * 2);
    return *new (p_ + n_++) T(std::forward<A>(a)...);
  }
  void push_back(const T& x) { emplace_back(x); }
  void push_back(T&& x) { emplace_back(std::move(x)); }
  void resize(std::size_t n) {
    reserve(n);
    while (n_ < n) new (p_ + n_++) T();
    while (n_ > n) p_[--n_].~T();
  }
  void clear() { resize(0); }

 private:
  T* inline_ptr() { return reinterpret_cast<T*>(buf_); }
  void free_heap() {
    if (p_ != inline_ptr()) ::operator delete (p_, std::align_val_t{alignof(T)});
    p_ = inline_ptr();
    cap_ = N;
  }
  alignas(T) unsigned char buf_[N * sizeof(T)];
  T* p_ = inline_ptr();
  std::size_t n_ = 0;
  std::size_t cap_ = N;
};

}  // namespace tenax::detail
