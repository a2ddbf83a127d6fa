#pragma once
// DLPack import and export: tensors handed to and taken from PyTorch, JAX, NumPy, CuPy and the
// like without a copy, on the CPU and on CUDA devices. Needs <dlpack/dlpack.h> (Debian's
// libdlpack-dev, 0.6; with a DLPack >= 1.0 header the versioned struct too), which this header
// includes: only programs that include it need the header.
//
//   DLManagedTensor* m = tx::to_dlpack(x);        // shares x's memory; m->deleter(m) releases it
//   tx::Tensor<float> y = tx::from_dlpack<float>(m2);   // takes m2 over: its deleter runs when the
//                                                       // last tensor or view of y is gone
//
// Export: any layout (tenax's strides, in elements; shape in tenax's dim order, so a column-major
// matrix is a Fortran-ordered array to NumPy), every dtype (bool as kDLBool where the header has
// it, else as 8-bit unsigned). A tensor that requires grad is refused (export
// tx::stop_gradient(x)); a CUDA tensor's device stream is waited for first, so a consumer on any
// stream reads finished data (and failures deferred on the device are raised here).
// Import: T must be the tensor's dtype (dlpack_dtype() tells it); null strides mean the compact
// row-major layout; negative strides, vector lanes, misaligned data and devices other than the
// CPU (or CUDA pinned host memory) and CUDA are refused with a tenax::Error, and then the caller
// still owns the managed tensor. tenax never writes into imported memory on its own (a prepared
// program does not reuse it for outputs); writes through mutable_data() reach the producer's array.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tenax/backend/backend.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax {
namespace detail::dlpack {

// kDLBool (DLPack >= 0.8) by value, so that a 0.6 header can read PyTorch's boolean tensors.
inline constexpr std::uint8_t kBoolCode = 6;

template <class T>
DLDataType dl_dtype() {
  DLDataType d{};
  d.lanes = 1;
  d.bits = static_cast<std::uint8_t>(sizeof(T) * 8);
  if constexpr (std::is_same_v<T, bool>) {
#if DLPACK_VERSION >= 80 || (defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1)
    d.code = kBoolCode;
#else
    d.code = kDLUInt;
#endif
  } else if constexpr (is_complex_v<T>) {
    d.code = kDLComplex;
  } else if constexpr (std::is_floating_point_v<T>) {
    d.code = kDLFloat;
  } else {
    d.code = kDLInt;
  }
  return d;
}

inline std::string describe(DLDataType d) {
  static const char* const codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string s = d.code < 7 ? codes[d.code] : "code " + std::to_string(d.code);
  s += std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

// The tenax dtype of a DLPack dtype (bool also from 8-bit unsigned, as older producers export it).
inline bool to_dtype(DLDataType d, DType& out) {
  if (d.lanes != 1) return false;
  const struct {
    std::uint8_t code, bits;
    DType dtype;
  } table[] = {{kBoolCode, 8, DType::Bool},  {kDLUInt, 8, DType::Bool},     {kDLInt, 32, DType::I32},
               {kDLInt, 64, DType::I64},     {kDLFloat, 32, DType::F32},    {kDLFloat, 64, DType::F64},
               {kDLComplex, 64, DType::C64}, {kDLComplex, 128, DType::C128}};
  for (const auto& e : table)
    if (e.code == d.code && e.bits == d.bits) {
      out = e.dtype;
      return true;
    }
  return false;
}

// The context a to_dlpack export owns: the tensor (its storage alive) and the shape and strides
// arrays the DLTensor points at.
template <class Managed>
struct Export {
  detail::ImplPtr body;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
  Managed managed{};
};

template <class Managed>
Managed* export_tensor(const char* op, const TensorImpl& x, DLDataType dtype) {
  TENAX_CHECK(!x.requires_grad, op, "a tensor that requires grad (", dtype_name(x.dtype), " ", x.shape, " on ",
              x.device.str(), "): export tx::stop_gradient(x) instead");
  if (x.device.is_cuda()) tenax::cuda::synchronize(x.device.index);
  auto* e = new Export<Managed>;
  e->body = shallow_copy(x);
  for (int d = 0; d < x.rank(); ++d) {
    e->shape[d] = x.shape[d];
    e->strides[d] = x.strides[d];
  }
  DLTensor& t = e->managed.dl_tensor;
  t.data = x.data();
  t.device.device_type = x.device.is_cuda() ? kDLCUDA : kDLCPU;
  t.device.device_id = x.device.is_cuda() ? x.device.index : 0;
  t.ndim = x.rank();
  t.dtype = dtype;
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](Managed* self) { delete static_cast<Export<Managed>*>(self->manager_ctx); };
  return &e->managed;
}

// The body over an imported DLTensor (its owner released through release(ctx) when it dies).
template <class T>
ImplPtr import_tensor(const char* op, const DLTensor& t, void (*release)(void*), void* ctx) {
  DType dt{};
  TENAX_CHECK(to_dtype(t.dtype, dt) && dt == tenax::dtype_of<T>, op, "the tensor holds ", describe(t.dtype),
              " elements, asked for ", dtype_traits<T>::name);
  Device dev;
  if (t.device.device_type == kDLCUDA) {
    dev = Device::cuda(t.device.device_id);
    TENAX_CHECK(has_backend(dev), op, "a tensor on ", dev.str(), ", and this build has no CUDA backend");
  } else {
    TENAX_CHECK(t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost, op,
                "a tensor on DLPack device type ", static_cast<int>(t.device.device_type),
                " (the CPU, CUDA pinned host memory and CUDA devices are read)");
  }
  TENAX_CHECK(t.ndim >= 0 && t.ndim <= kMaxRank, op, "a tensor of rank ", t.ndim, " (at most ", kMaxRank, ")");
  Shape shape;
  for (int d = 0; d < t.ndim; ++d) {
    TENAX_CHECK(t.shape[d] >= 0, op, "dimension ", d, " of size ", t.shape[d]);
    shape.push_back(t.shape[d]);
  }
  const std::int64_t n = checked_numel(shape, op);
  Strides strides;
  std::int64_t extent = n > 0 ? 1 : 0;  // elements from the first to one past the last
  for (int d = 0; d < t.ndim; ++d) {
    std::int64_t s = 1;
    if (t.strides != nullptr) {
      s = t.strides[d];
    } else {  // compact row-major
      for (int k = d + 1; k < t.ndim; ++k) s *= t.shape[k];
    }
    TENAX_CHECK(s >= 0, op, "stride ", s, " of dimension ", d, " (negative strides are not supported), shape ", shape);
    strides.push_back(s);
    if (n > 0) extent += (t.shape[d] - 1) * s;
  }
  char* data = static_cast<char*>(t.data) + t.byte_offset;
  TENAX_CHECK(n == 0 || reinterpret_cast<std::uintptr_t>(data) % alignof(T) == 0, op, "data at ",
              static_cast<void*>(data), " is not aligned for ", dtype_traits<T>::name);
  return make_external_impl(tenax::dtype_of<T>, shape, strides, dev, data, static_cast<std::size_t>(extent) * sizeof(T),
                            release, ctx);
}

template <class Managed>
void release_managed(void* m) {
  auto* p = static_cast<Managed*>(m);
  if (p->deleter != nullptr) p->deleter(p);
}

}  // namespace detail::dlpack

// The tenax dtype of a DLPack tensor (raises for one tenax does not hold).
inline DType dlpack_dtype(const DLTensor& t) {
  DType d{};
  TENAX_CHECK(detail::dlpack::to_dtype(t.dtype, d), "dlpack_dtype", "no tenax dtype for ",
              detail::dlpack::describe(t.dtype));
  return d;
}

// x's memory as a DLManagedTensor (shared, not copied); its deleter releases it.
template <Scalar T>
DLManagedTensor* to_dlpack(const Tensor<T>& x) {
  TENAX_CHECK(x.defined(), "to_dlpack", "undefined tensor");
  return detail::dlpack::export_tensor<DLManagedTensor>("to_dlpack", *x.impl(), detail::dlpack::dl_dtype<T>());
}

// The tensor m describes, sharing its memory; tenax takes m over on success (m->deleter runs when
// the last tensor or view of the result is gone) and leaves it to the caller when it raises.
template <Scalar T>
Tensor<T> from_dlpack(DLManagedTensor* m) {
  TENAX_CHECK(m != nullptr, "from_dlpack", "null DLManagedTensor");
  return Tensor<T>(detail::dlpack::import_tensor<T>("from_dlpack", m->dl_tensor,
                                                    &detail::dlpack::release_managed<DLManagedTensor>, m));
}

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
// The same with DLPack 1.x's versioned struct (version set to this header's, no flags).
template <Scalar T>
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor<T>& x) {
  TENAX_CHECK(x.defined(), "to_dlpack_versioned", "undefined tensor");
  DLManagedTensorVersioned* m = detail::dlpack::export_tensor<DLManagedTensorVersioned>(
      "to_dlpack_versioned", *x.impl(), detail::dlpack::dl_dtype<T>());
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->flags = 0;
  return m;
}

// Imports a versioned managed tensor; a major version newer than this header's is refused (the
// caller keeps it). A read-only tensor is imported as is: tenax does not write into it.
template <Scalar T>
Tensor<T> from_dlpack(DLManagedTensorVersioned* m) {
  TENAX_CHECK(m != nullptr, "from_dlpack", "null DLManagedTensorVersioned");
  TENAX_CHECK(m->version.major <= DLPACK_MAJOR_VERSION, "from_dlpack", "DLPack version ", m->version.major, ".",
              m->version.minor, " is newer than this build's ", DLPACK_MAJOR_VERSION, ".", DLPACK_MINOR_VERSION);
  return Tensor<T>(detail::dlpack::import_tensor<T>("from_dlpack", m->dl_tensor,
                                                    &detail::dlpack::release_managed<DLManagedTensorVersioned>, m));
}
#endif

}  // namespace tenax
