#pragma once
// Internal to the Eigen SVDs: LAPACK's gesdd contract on an Eigen SVD solver (BDCSVD in the Eigen
// provider, JacobiSVD for the CBLAS provider's smallest matrices, eigen_small_gesdd.cpp). Not
// counted: the caller counts its gesdd.
#include "common.hpp"

namespace tenax::cpu {
namespace {

template <class T, class Svd>
int eigen_gesdd(Svd& svd, char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, real_t<T>* s, T* U,
                std::int64_t ldu, T* VT, std::int64_t ldvt) {
  if (m == 0 || n == 0) return 0;
  const bool all = jobz == 'A', some = jobz == 'S', over = jobz == 'O', none = jobz == 'N';
  const std::int64_t mn = std::min(m, n);
  check_arg(all || some || over || none, "gesdd", 1);
  check_arg(m >= 0, "gesdd", 2);
  check_arg(n >= 0, "gesdd", 3);
  check_arg(ld_ok(lda, m), "gesdd", 5);
  check_arg(ldu >= 1 && !((all || some) && ldu < m) && !(over && m < n && ldu < m), "gesdd", 8);
  check_arg(ldvt >= 1 && !(all && ldvt < n) && !(some && ldvt < mn) && !(over && m >= n && ldvt < n), "gesdd", 10);
  const CMap<T> a_in = cmap(A, m, n, lda);
  check_arg(!a_in.hasNaN(), "gesdd", 4);  // LAPACK >= 3.7: info = -4 when A has a NaN entry
  unsigned opts = 0;
  if (all) opts = Eigen::ComputeFullU | Eigen::ComputeFullV;
  if (some || over) opts = Eigen::ComputeThinU | Eigen::ComputeThinV;
  svd.compute(a_in, opts);  // reads all of A before anything below writes it (jobz 'O')
  if (svd.info() != Eigen::Success) return 1;
  VMap<real_t<T>>(s, mn) = svd.singularValues();
  if (none) return 0;
  const auto& u = svd.matrixU();
  const auto& v = svd.matrixV();
  if (over) {  // LAPACK's 'O': the thin factor of the long side overwrites A
    if (m >= n) {
      mmap(A, m, n, lda) = u;
      mmap(VT, n, n, ldvt) = v.adjoint();
    } else {
      mmap(U, m, m, ldu) = u;
      mmap(A, m, n, lda) = v.adjoint();
    }
    return 0;
  }
  mmap(U, m, u.cols(), ldu) = u;
  mmap(VT, v.cols(), n, ldvt) = v.adjoint();
  return 0;
}

}  // namespace
}  // namespace tenax::cpu
