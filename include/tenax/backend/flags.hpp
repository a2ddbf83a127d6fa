#pragma once
// The flags of the BLAS/LAPACK-level routines, one convention for every backend (the CPU provider,
// the batched backend interface of backend/backend.hpp). The values are BLAS's characters.

namespace tenax::blas {

enum class Trans : char { N = 'N', T = 'T', C = 'C' };
enum class Side : char { Left = 'L', Right = 'R' };
enum class Uplo : char { Lower = 'L', Upper = 'U' };
enum class Diag : char { NonUnit = 'N', Unit = 'U' };

}  // namespace tenax::blas
