#include "core/base/blas.hpp"

#ifdef ATTNLAB_OPENBLAS
#include <cblas.h>
#else
#include <Eigen/Core>
#endif

namespace attnlab::blas {

#ifdef ATTNLAB_OPENBLAS

namespace {
// OpenBLAS one-threaded from before the program's first product (a static library's object is
// initialised before main when it is linked, and it is linked wherever sgemm is called).
const bool one_blas_thread = [] {
  openblas_set_num_threads(1);
  return true;
}();
}  // namespace

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
           float beta, float* C, int ldc) {
  (void)one_blas_thread;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda,
              B, ldb, beta, C, ldc);
}
const char* library_name() { return "OpenBLAS"; }
const char* kernel_name() { return openblas_get_corename(); }

#else

const char* kernel_name() { return ""; }

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;
using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Eigen::OuterStride<>>;

template <class OpA, class OpB>
void product(const OpA& a, const OpB& b, float alpha, float beta, Map& c) {
  if (beta == 0.0f) c.noalias() = alpha * (a * b);
  else {
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * (a * b);
  }
}
}  // namespace

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
           float beta, float* C, int ldc) {
  if (m <= 0 || n <= 0) return;
  Map c(C, m, n, Eigen::OuterStride<>(ldc));
  const ConstMap a(A, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap b(B, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  if (trans_a && trans_b) product(a.transpose(), b.transpose(), alpha, beta, c);
  else if (trans_a) product(a.transpose(), b, alpha, beta, c);
  else if (trans_b) product(a, b.transpose(), alpha, beta, c);
  else product(a, b, alpha, beta, c);
}
const char* library_name() { return "Eigen"; }

#endif

}  // namespace attnlab::blas
