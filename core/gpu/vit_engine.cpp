#include "core/gpu/vit_engine.hpp"

#include "core/error.hpp"
#include "core/shader_constants.hpp"

#include <cmath>

namespace attnlab {

namespace {

// The kernels' parameter blocks (gl::ParamBlock; the Params of each shaders/vit_*.comp, in order).
struct GemmParams {
  std::int32_t M, N, K, a_offset, out_offset, flags;
};
struct LayerNormParams {
  std::int32_t T, D;
  float eps;
};
struct AttentionParams {
  std::int32_t T, D, H;
  float scale;
};
struct AttendParams {
  std::int32_t T, D, H;
};
struct PoolParams {
  std::int32_t T, D, prefix, mode;
};
constexpr int kBias = shader::FLAG_BIAS, kGelu = shader::FLAG_GELU, kResidual = shader::FLAG_RESIDUAL;

gl::Buffer upload_floats(const float* data, Eigen::Index n) {
  return gl::Buffer(static_cast<std::size_t>(n) * sizeof(float), data);
}
gl::Buffer upload(const Matrix& m) { return upload_floats(m.data(), m.size()); }
gl::Buffer upload(const RowVector& v) { return upload_floats(v.data(), v.size()); }

int groups(int n, int per) { return (n + per - 1) / per; }

}  // namespace

struct VitGpuRunner::Weights {
  struct Block {
    gl::Buffer ln1_w, ln1_b, W_qkv, b_qkv, W_proj, b_proj, ls1, ln2_w, ln2_b, W_fc1, b_fc1, W_fc2, b_fc2, ls2;
  };
  VitArchitecture arch;
  gl::Buffer W_patch, b_patch, ones, norm_w, norm_b, W_head, b_head;
  std::vector<Block> blocks;
};

VitGpuRunner::VitGpuRunner()
    : gemm_(gl::compile_embedded("vit_gemm.comp")), layernorm_(gl::compile_embedded("vit_layernorm.comp")),
      attention_pass_(gl::compile_embedded("vit_attention.comp")), attend_(gl::compile_embedded("vit_attend.comp")),
      pool_(gl::compile_embedded("vit_pool.comp")) {}

VitGpuRunner::~VitGpuRunner() = default;

void VitGpuRunner::upload(const VitModel& model) {
  auto w = std::make_unique<Weights>();
  w->arch = model.arch;
  w->W_patch = attnlab::upload(model.W_patch);
  w->b_patch = attnlab::upload(model.b_patch);
  const RowVector ones = RowVector::Ones(model.arch.D);
  w->ones = attnlab::upload(ones);
  w->norm_w = attnlab::upload(model.norm_w);
  w->norm_b = attnlab::upload(model.norm_b);
  if (model.arch.classes > 0) {
    w->W_head = attnlab::upload(model.W_head);
    w->b_head = attnlab::upload(model.b_head);
  }
  for (const VitBlock& b : model.blocks) {
    Weights::Block g;
    g.ln1_w = attnlab::upload(b.ln1_w), g.ln1_b = attnlab::upload(b.ln1_b);
    g.W_qkv = attnlab::upload(b.W_qkv), g.b_qkv = attnlab::upload(b.b_qkv);
    g.W_proj = attnlab::upload(b.W_proj), g.b_proj = attnlab::upload(b.b_proj), g.ls1 = attnlab::upload(b.ls1);
    g.ln2_w = attnlab::upload(b.ln2_w), g.ln2_b = attnlab::upload(b.ln2_b);
    g.W_fc1 = attnlab::upload(b.W_fc1), g.b_fc1 = attnlab::upload(b.b_fc1);
    g.W_fc2 = attnlab::upload(b.W_fc2), g.b_fc2 = attnlab::upload(b.b_fc2), g.ls2 = attnlab::upload(b.ls2);
    w->blocks.push_back(std::move(g));
  }
  weights_ = std::move(w);
  model_id_ = model.id;
}

VitPass VitGpuRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop) {
  const VitArchitecture& a = model.arch;
  vit_check_budget(a, input, budget);
  const int D = a.D, H = a.heads, dh = D / H, Hd = a.mlp_hidden, pre = a.prefix(), N = input.N(), T = pre + N;
  const int PP3 = 3 * a.patch * a.patch;
  if (dh > 256) throw Error("the GPU engine takes heads up to 256 wide; this model's are " + std::to_string(dh));
  // Every buffer must fit one storage block (llvmpipe: 128 MiB).
  const std::size_t cap = gl::max_storage_block_bytes();
  const std::size_t attention_bytes = static_cast<std::size_t>(H) * T * T * sizeof(float);
  const std::size_t largest = std::max({attention_bytes, static_cast<std::size_t>(T) * std::max(3 * D, Hd) * sizeof(float),
                                        static_cast<std::size_t>(N) * PP3 * sizeof(float),
                                        static_cast<std::size_t>(Hd) * D * sizeof(float)});
  if (largest > cap)
    throw Error("the image gives " + std::to_string(T) + " tokens: one layer's attention (" + std::to_string(attention_bytes >> 20) +
                " MiB) or activations would not fit the GPU's " + std::to_string(cap >> 20) +
                " MiB storage buffers; use a smaller image or --resize");
  if (model.id != model_id_ || !weights_) upload(model);
  const Weights& w = *weights_;

  gl::BindingGuard guard;

  // Activations; the attention of every layer in its own buffer.
  gl::Buffer patches = upload_floats(input.patches.data(), input.patches.size());
  const Matrix start = vit_initial_tokens(model, Matrix::Zero(N, D), vit_position_embedding(model, input.rows, input.cols));
  gl::Buffer X = attnlab::upload(start), Xn(static_cast<std::size_t>(T) * D * sizeof(float)),
             QKV(static_cast<std::size_t>(T) * 3 * D * sizeof(float)), O(static_cast<std::size_t>(T) * D * sizeof(float)),
             hidden(static_cast<std::size_t>(T) * Hd * sizeof(float));
  gl::Buffer attention(attention_bytes);
  VitPass pass;
  pass.T = T;
  pass.H = H;
  pass.m = dh;
  pass.path = path();
  Matrix qkv(T, 3 * D), tokens(T, D);

  auto gemm = [&](const gl::Buffer& A, int a_row, const gl::Buffer& W, const gl::Buffer* bias, const gl::Buffer* ls,
                  gl::Buffer& out, int out_row, int M, int Nout, int K, int flags) {
    params_.set(gemm_, GemmParams{M, Nout, K, a_row * K, out_row * Nout, flags});
    gl::bind(1, A);
    gl::bind(2, W);
    gl::bind(3, bias ? *bias : W);
    gl::bind(4, ls ? *ls : W);
    gl::bind(5, out);
    gl::dispatch(gemm_, static_cast<GLuint>(groups(Nout, 64)), static_cast<GLuint>(groups(M, 64)));
  };
  auto layer_norm = [&](const gl::Buffer& in, const gl::Buffer& weight, const gl::Buffer& bias, gl::Buffer& out, int rows) {
    params_.set(layernorm_, LayerNormParams{rows, D, a.eps});
    gl::bind(1, in);
    gl::bind(2, weight);
    gl::bind(3, bias);
    gl::bind(4, out);
    gl::dispatch(layernorm_, static_cast<GLuint>(rows));
  };

  // Patch embedding (a conv with kernel = stride = P, as a product) added onto the patch rows,
  // which already hold their position codes; the prefix rows are complete.
  gemm(patches, 0, w.W_patch, &w.b_patch, &w.ones, X, pre, N, D, PP3, kBias | kResidual);
  for (int l = 0; l < a.depth; ++l) {
    if (stop && stop->load()) throw Error("cancelled");
    const Weights::Block& b = w.blocks[static_cast<std::size_t>(l)];
    layer_norm(X, b.ln1_w, b.ln1_b, Xn, T);
    gemm(Xn, 0, b.W_qkv, &b.b_qkv, nullptr, QKV, 0, T, 3 * D, D, kBias);
    QKV.download(qkv.data(), static_cast<std::size_t>(qkv.size()) * sizeof(float));
    pass.Q.push_back(qkv.leftCols(D));
    pass.K.push_back(qkv.middleCols(D, D));
    params_.set(attention_pass_, AttentionParams{T, D, H, 1.0f / std::sqrt(static_cast<float>(dh))});
    gl::bind(1, QKV);
    gl::bind(2, attention);
    gl::dispatch(attention_pass_, static_cast<GLuint>(T), static_cast<GLuint>(H));
    params_.set(attend_, AttendParams{T, D, H});
    gl::bind(3, O);
    gl::dispatch(attend_, static_cast<GLuint>(groups(D, 64)), static_cast<GLuint>(T));
    gemm(O, 0, b.W_proj, &b.b_proj, &b.ls1, X, 0, T, D, D, kBias | kResidual);
    layer_norm(X, b.ln2_w, b.ln2_b, Xn, T);
    gemm(Xn, 0, b.W_fc1, &b.b_fc1, nullptr, hidden, 0, T, Hd, D, kBias | kGelu);
    gemm(hidden, 0, b.W_fc2, &b.b_fc2, &b.ls2, X, 0, T, D, Hd, kBias | kResidual);
    X.download(tokens.data(), static_cast<std::size_t>(tokens.size()) * sizeof(float));
    pass.token_norms.push_back(tokens.rowwise().norm().transpose());
  }
  pass.distance = vit_attention_distance(pass, pre, input.cols, input.rows, a.patch);
  if (a.classes > 0) {
    gl::Buffer pooled(static_cast<std::size_t>(D) * sizeof(float)), normed(static_cast<std::size_t>(D) * sizeof(float)),
        out(static_cast<std::size_t>(a.classes) * sizeof(float));
    params_.set(pool_, PoolParams{T, D, pre, a.pooling == VitPooling::Token ? shader::POOL_TOKEN : shader::POOL_AVERAGE});
    gl::bind(1, X);
    gl::bind(2, pooled);
    gl::dispatch(pool_, static_cast<GLuint>(groups(D, 64)));
    layer_norm(pooled, w.norm_w, w.norm_b, normed, 1);
    gemm(normed, 0, w.W_head, &w.b_head, nullptr, out, 0, 1, a.classes, D, kBias);
    pass.logits.resize(static_cast<std::size_t>(a.classes));
    out.download(pass.logits.data(), pass.logits.size() * sizeof(float));
  }
  ++forward_passes_;
  return pass;
}

}  // namespace attnlab
