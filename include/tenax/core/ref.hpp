#pragma once
// An intrusive reference-counted pointer. T has an `std::atomic<int> refs_` member and a static
// `destroy(T*)`.
#include <atomic>
#include <utility>

namespace tenax::detail {

template <class T>
class Ref {
 public:
  Ref() = default;
  explicit Ref(T* p) : p_(p) { retain(); }  // takes a new reference
  Ref(const Ref& o) : p_(o.p_) { retain(); }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <class U>
  Ref(const Ref<U>& o) : p_(o.get()) {
    retain();
  }
  ~Ref() { release(); }
  Ref& operator=(const Ref& o) {
    Ref(o).swap(*this);
    return *this;
  }
  Ref& operator=(Ref&& o) noexcept {
    Ref(std::move(o)).swap(*this);
    return *this;
  }
  void swap(Ref& o) noexcept { std::swap(p_, o.p_); }
  void reset() { Ref().swap(*this); }
  // A Ref to p that holds no count of its own (no atomic operation), for a holder that keeps p
  // alive for as long as the Ref lives (a prepared program's slot-backed bodies, src/trace/program.cpp);
  // it must be given up with detach(), never released.
  static Ref borrow(T* p) {
    Ref r;
    r.p_ = p;
    return r;
  }
  // The first reference to an object just created that no other thread can see yet: the count is
  // set by a plain store instead of an atomic increment (every new tensor body and storage).
  static Ref adopt_new(T* p) {
    Ref r;
    r.p_ = p;
    if (p) p->refs_.store(1, std::memory_order_relaxed);
    return r;
  }
  // Gives up the pointer without releasing a count (the end of a borrow).
  void detach() { p_ = nullptr; }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  friend bool operator==(const Ref& a, const Ref& b) { return a.p_ == b.p_; }

 private:
  void retain() {
    if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) T::destroy(p_);
  }
  T* p_ = nullptr;
};

template <class T, class... A>
Ref<T> make_ref(A&&... a) {
  return Ref<T>::adopt_new(T::create(std::forward<A>(a)...));
}

}  // namespace tenax::detail
