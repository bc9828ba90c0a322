#include "core/vit/attention_source.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab {

Matrix fuse_heads(int heads, HeadFusion fusion, const std::function<Matrix(int)>& head_matrix) {
  if (heads < 1) throw Error(_("no heads to fuse"));
  Matrix fused = head_matrix(0);
  for (int h = 1; h < heads; ++h) {
    const Matrix A = head_matrix(h);
    if (fusion == HeadFusion::Mean) fused += A;
    else if (fusion == HeadFusion::Max) fused = fused.cwiseMax(A);
    else fused = fused.cwiseMin(A);
  }
  if (fusion == HeadFusion::Mean) fused /= static_cast<float>(heads);
  return fused;
}

std::string token_label(const SourceGrid& grid, int token) {
  if (token < grid.prefix) return token == 0 ? "CLS" : "register " + std::to_string(token - 1);
  const int j = token - grid.prefix;
  return "patch (" + std::to_string(j % grid.cols) + "," + std::to_string(j / grid.cols) + ")";
}

}  // namespace attnlab
