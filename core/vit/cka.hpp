#pragma once
// Linear centered kernel alignment (CKA; Kornblith, Norouzi, Lee & Hinton 2019): how similar
// two representations of the same examples are, invariant to rotations and to isotropic
// scaling of either. With X (n × p) and Y (n × q) holding one example per row, their columns
// centered over the n rows,
//     CKA(X, Y) = ‖Yᵀ X‖²_F / (‖Xᵀ X‖_F · ‖Yᵀ Y‖_F),
// which is HSIC(XXᵀ, YYᵀ)/√(HSIC(XXᵀ, XXᵀ)·HSIC(YYᵀ, YYᵀ)) with linear kernels, computed in the
// feature space (p × q products: no n × n matrix). In [0, 1]; 1 for X and Y equal up to a
// rotation and a scale. docs/MATH.md, "Representational similarity (CKA)".
#include "core/base/types.hpp"

#include <atomic>
#include <vector>

namespace attnlab {

/// Linear CKA of X and Y, the same number of rows (examples). Accumulated in double. Throws
/// Error when the row counts differ or are below 2; 0 when either has no variance.
double linear_cka(const Matrix& X, const Matrix& Y);

/// The CKA between every pair of representations in `a` and in `b` (all with the same rows):
/// a.size() × b.size(). With a == b, the layer × layer matrix (symmetric, ones on the
/// diagonal). Each representation is centered once (once in all when `a` and `b` are the same
/// object).
/// `stop` (may be null) is looked at before each layer's centring and each pair: when set, throws
/// Error("cancelled") (a 7 × 7 matrix over 25 000 tokens takes half a second).
Eigen::MatrixXd cka_matrix(const std::vector<Matrix>& a, const std::vector<Matrix>& b, const std::atomic<bool>* stop = nullptr);

}  // namespace attnlab
