#pragma once
// The CPU path's one matrix product, sgemm, behind one seam: OpenBLAS's cblas_sgemm on Linux
// (Debian's libopenblas-pthread-dev, runtime CPU dispatch), Eigen's own product in the Windows
// build (docs/PLATFORMS.md, "Windows", says why). Used by core/vit/vit_cpu.cpp, core/vit/vit_pass.cpp, core/vit/vit_train.cpp.

namespace attnlab::blas {

/// C = alpha·op(A)·op(B) + beta·C, all row-major float32 (BLAS's sgemm with CblasRowMajor):
/// op(A) is m × k (A is k × m when trans_a), op(B) is k × n (B is n × k when trans_b), C is
/// m × n; lda, ldb, ldc are the row strides in floats. beta = 0 ignores C's old contents.
/// Always on the calling thread: OpenBLAS's own threads are set to one for the whole program
/// before its first product. The CPU paths split their work among their own threads
/// (core/vit/vit_kernels.hpp), each calling a one-threaded sgemm; OpenBLAS's threads, once
/// woken by a product of their own, spin in sched_yield on the cores those threads need
/// (10 % of a pipelined video's time went to them).
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
           float beta, float* C, int ldc);

/// "OpenBLAS" or "Eigen": which library does the products (for --info and Diagnostics).
const char* library_name();

/// The kernels OpenBLAS chose for this CPU when it was loaded ("Haswell", "Cooperlake", …:
/// openblas_get_corename()), or "" in the Eigen build. OpenBLAS picks them from the CPU unless
/// the environment variable OPENBLAS_CORETYPE names others (docs/SPEED.md: on this project's
/// machines it is set to Haswell, and AVX-512's Cooperlake kernels make ResNet-50 a quarter faster).
const char* kernel_name();

}  // namespace attnlab::blas
