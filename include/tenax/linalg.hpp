#pragma once
// tenax::linalg: solve, solve_triangular, triangular_matmul, lu_factor/lu/lu_solve, qr, eigh/eigvalsh, svd/svdvals,
// cholesky/cholesky_solve, inv, det, slogdet, each with JVP and VJP rules; vector_norm, matrix_norm,
// norm, cond, pinv, matrix_rank, lstsq, eig/eigvals, matrix_exp, matrix_power and multi_dot.
#include "tenax/ops/linalg/cholesky.hpp"
#include "tenax/ops/linalg/cholesky_solve.hpp"
#include "tenax/ops/linalg/det.hpp"
#include "tenax/ops/linalg/eig.hpp"
#include "tenax/ops/linalg/eigh.hpp"
#include "tenax/ops/linalg/lstsq.hpp"
#include "tenax/ops/linalg/lu.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/linalg/matrix_exp.hpp"
#include "tenax/ops/linalg/norms.hpp"
#include "tenax/ops/linalg/pinv.hpp"
#include "tenax/ops/linalg/products.hpp"
#include "tenax/ops/linalg/qr.hpp"
#include "tenax/ops/linalg/slogdet.hpp"
#include "tenax/ops/linalg/solve.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/svd.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"
