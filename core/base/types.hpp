#pragma once
// Matrix types shared by the CPU reference and the GPU engine's read-backs.
#include <Eigen/Dense>

namespace attnlab {

/// Row-major float matrix: one row per token (N×d, N×m, N×N), the layout of the GPU buffers.
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;

} // namespace attnlab
