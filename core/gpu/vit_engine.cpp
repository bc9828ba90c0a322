#include "core/gpu/vit_engine.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/shader_constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnlab {

namespace {

// The kernels' parameter blocks (gl::ParamBlock; the Params of each shaders/vit_*.comp, in order).
struct GemmParams {
  std::int32_t M, N, K4, lda, ldw, ldo, a_offset, out_offset, flags;
};
struct LayerNormParams {
  std::int32_t rows, D, ld, x_first, y_offset, norm_offset, write_y;
  float eps;
};
struct AttentionParams {
  std::int32_t T, D, ld, q_first, q_count, o_offset, ldo, prefix, cols;
  float patch, scale;
};
struct DistanceSumParams {
  std::int32_t T, H, prefix, out_index;
};
struct PoolParams {
  std::int32_t T, D, ld, prefix, mode;
};
constexpr int kBias = shader::FLAG_BIAS, kGelu = shader::FLAG_GELU, kResidual = shader::FLAG_RESIDUAL;

// The GEMM's tile (shaders/vit_gemm.comp): kGemmRows rows per work group, kGemmCols columns per
// invocation, kGemmLx invocations per work group (one SIMD batch of llvmpipe with AVX2, 8 lanes).
// Tuned on llvmpipe: 16 × 8 per invocation beat 8 × 4 and 8 × 8 (more multiply-adds per load).
constexpr int kGemmRows = 16, kGemmCols = 8, kGemmLx = 8;
constexpr int kAttentionLx = 8;  // queries per work group of vit_attention.comp
constexpr int kLayerNormLx = 8;  // rows per work group of vit_layernorm.comp

int round4(int n) { return (n + 3) / 4 * 4; }
int groups(std::int64_t n, std::int64_t per) { return static_cast<int>((n + per - 1) / per); }
std::size_t floats(std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); }

/// A rows × cols matrix as rows of `ld` floats (ld ≥ cols), the padding zero.
std::vector<float> padded(const float* data, Eigen::Index rows, Eigen::Index cols, int ld) {
  std::vector<float> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld), 0.0f);
  for (Eigen::Index r = 0; r < rows; ++r)
    std::memcpy(out.data() + r * ld, data + r * cols, floats(cols));
  return out;
}
gl::Buffer upload_padded(const Matrix& m, int ld) {
  if (m.cols() == ld) return gl::Buffer(floats(m.size()), m.data());
  const std::vector<float> p = padded(m.data(), m.rows(), m.cols(), ld);
  return gl::Buffer(floats(static_cast<std::int64_t>(p.size())), p.data());
}
gl::Buffer upload(const RowVector& v) { return gl::Buffer(floats(v.size()), v.data()); }
gl::Buffer zeros(std::int64_t n) {
  const std::vector<float> z(static_cast<std::size_t>(n), 0.0f);
  return gl::Buffer(floats(n), z.data());
}

GLint gl_int(GLenum name) {
  GLint v = 0;
  glGetIntegerv(name, &v);
  return v;
}

/// A weight matrix on the GPU: its buffer (rows padded to ld floats) and a buffer texture
/// (RGBA32F) over it, as vit_gemm.comp reads W.
struct GpuMatrix {
  gl::Buffer buffer;
  gl::BufferTexture texture;
  int rows = 0, cols = 0, ld = 0;
  GpuMatrix() = default;
  explicit GpuMatrix(const Matrix& m)
      : buffer(upload_padded(m, round4(static_cast<int>(m.cols())))), texture(buffer, GL_RGBA32F),
        rows(static_cast<int>(m.rows())), cols(static_cast<int>(m.cols())), ld(round4(static_cast<int>(m.cols()))) {}
};

}  // namespace

struct VitGpuRunner::Weights {
  struct Block {
    gl::Buffer ln1_w, ln1_b, b_qkv, b_proj, ls1, ln2_w, ln2_b, b_fc1, b_fc2, ls2;
    GpuMatrix W_qkv, W_proj, W_fc1, W_fc2;
  };
  VitArchitecture arch;
  GpuMatrix W_patch, W_head;
  gl::Buffer b_patch, ones, norm_w, norm_b, b_head;
  std::vector<Block> blocks;
};

VitGpuRunner::VitGpuRunner()
    : gemm_(gl::compile_embedded("vit_gemm.comp", "#define GEMM_LX " + std::to_string(kGemmLx) + "\n#define GEMM_ROWS " +
                                                       std::to_string(kGemmRows) + "\n#define GEMM_COLS " + std::to_string(kGemmCols) + "\n")),
      layernorm_(gl::compile_embedded("vit_layernorm.comp")), distance_sum_(gl::compile_embedded("vit_distance_sum.comp")),
      pool_(gl::compile_embedded("vit_pool.comp")) {
  attention_program(64);  // the common head width, so that a bad shader fails here
}

VitGpuRunner::~VitGpuRunner() = default;

const gl::Program& VitGpuRunner::attention_program(int m) {
  auto it = attention_.find(m);
  if (it == attention_.end()) {
    const std::string defines = "#define HEAD_DIM " + std::to_string(m) + "\n#define ATT_LX " + std::to_string(kAttentionLx) + "\n";
    it = attention_.emplace(m, gl::compile_embedded("vit_attention.comp", defines)).first;
  }
  return it->second;
}

void VitGpuRunner::upload(const VitModel& model) {
  weights_.reset();
  auto w = std::make_unique<Weights>();
  w->arch = model.arch;
  w->W_patch = GpuMatrix(model.W_patch);
  w->b_patch = attnlab::upload(model.b_patch);
  w->ones = attnlab::upload(RowVector::Ones(model.arch.D));
  w->norm_w = attnlab::upload(model.norm_w);
  w->norm_b = attnlab::upload(model.norm_b);
  if (model.arch.classes > 0) {
    w->W_head = GpuMatrix(model.W_head);
    w->b_head = attnlab::upload(model.b_head);
  }
  for (const VitBlock& b : model.blocks) {
    Weights::Block g;
    g.ln1_w = attnlab::upload(b.ln1_w), g.ln1_b = attnlab::upload(b.ln1_b);
    g.W_qkv = GpuMatrix(b.W_qkv), g.b_qkv = attnlab::upload(b.b_qkv);
    g.W_proj = GpuMatrix(b.W_proj), g.b_proj = attnlab::upload(b.b_proj), g.ls1 = attnlab::upload(b.ls1);
    g.ln2_w = attnlab::upload(b.ln2_w), g.ln2_b = attnlab::upload(b.ln2_b);
    g.W_fc1 = GpuMatrix(b.W_fc1), g.b_fc1 = attnlab::upload(b.b_fc1);
    g.W_fc2 = GpuMatrix(b.W_fc2), g.b_fc2 = attnlab::upload(b.b_fc2), g.ls2 = attnlab::upload(b.ls2);
    w->blocks.push_back(std::move(g));
  }
  weights_ = std::move(w);
  model_id_ = model.id;
}

namespace {

/// What one storage binding may hold (larger buffers are bound a chunk of rows at a time) and
/// the offset alignment of a bound range, both in bytes.
struct StorageLimits {
  std::size_t cap = 0, align = 4;
};

StorageLimits storage_limits(std::size_t limit) {
  const std::size_t driver_cap = gl::max_storage_block_bytes();
  StorageLimits s;
  s.cap = limit > 0 ? std::min(limit, driver_cap) : driver_cap;
  s.align = static_cast<std::size_t>(std::max(gl_int(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT), 4));
  return s;
}

/// Refuses, before anything is allocated, a pass whose buffers would exceed the GPU's buffer
/// textures or whose per-token results would not fit one storage binding.
void check_gpu_fits(const StorageLimits& lim, int T, int D, int H, int Hd, int L, int ldD, int ld3, int ldH, int ldP) {
  const std::int64_t max_texels = gl_int(GL_MAX_TEXTURE_BUFFER_SIZE);
  const std::int64_t largest_texture = std::max<std::int64_t>(
      {static_cast<std::int64_t>(T) * ld3 / 4, static_cast<std::int64_t>(T) * ldD, static_cast<std::int64_t>(Hd) * ldD / 4,
       static_cast<std::int64_t>(D) * ldH / 4, static_cast<std::int64_t>(D) * ldP / 4});
  if (largest_texture > max_texels)
    throw Error(text_format(_("the image gives %d tokens: a buffer of %lld texels would exceed the GPU's buffer textures (%lld "
                              "texels); use --resize"),
                            T, static_cast<long long>(largest_texture), static_cast<long long>(max_texels)));
  if (floats(static_cast<std::int64_t>(H) * T) + lim.align > lim.cap ||
      floats(static_cast<std::int64_t>(L) * std::max(T, H)) + lim.align > lim.cap)
    throw Error(text_format(_("the image gives %d tokens: the per-token results would not fit the GPU's %zu KiB storage blocks; "
                              "use --resize"),
                            T, static_cast<std::size_t>(lim.cap >> 10)));
}

void bind_image(GLuint unit, const gl::BufferTexture& texture) {
  glBindImageTexture(unit, texture.id(), 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F);
}

/// Image units the kernels read (RGBA32F image buffers over a buffer texture), unbound at the end.
struct ImageUnits {
  ImageUnits() = default;
  ImageUnits(const ImageUnits&) = delete;
  ImageUnits& operator=(const ImageUnits&) = delete;
  ~ImageUnits() {
    for (GLuint u = 1; u <= 2; ++u) glBindImageTexture(u, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_RGBA32F);
  }
};

/// How one pass binds buffers and dispatches its products and LayerNorms, a chunk of rows at a
/// time where a buffer exceeds one storage binding (counted in `chunked`).
struct Dispatcher {
  gl::ParamBlock& params;
  const gl::Program& gemm_program;
  const gl::Program& layernorm_program;
  StorageLimits lim;
  const gl::Buffer& ones;  ///< D ones: the bias and layer scale of a product without them
  gl::Buffer& norms;       ///< L·T token norms
  int D = 0;
  float eps = 0.0f;
  int& chunked;

  /// Rows of `ld` floats one storage binding holds; throws Error when not even one does.
  int rows_per_chunk(int ld, const char* what) const {
    const std::size_t row = floats(ld);
    if (row + lim.align > lim.cap)
      // TRANSLATORS: %s names what is stored ("an activation", "the attention output").
      throw Error(text_format(_("one row of %s (%zu bytes) does not fit the GPU's %zu KiB storage blocks"), _(what), row,
                              static_cast<std::size_t>(lim.cap >> 10)));
    return static_cast<int>(std::min<std::size_t>((lim.cap - lim.align) / row, 1 << 30));
  }
  /// Binds floats [first, first + count) of `buffer` to storage binding `index`, from the
  /// aligned offset at or below `first`; returns where `first` lies in the bound range (floats).
  std::int32_t bind_floats(GLuint index, const gl::Buffer& buffer, std::int64_t first, std::int64_t count) const {
    const std::size_t begin = floats(first), from = begin / lim.align * lim.align;
    const std::size_t size = std::min(buffer.bytes() - from, begin + floats(count) - from);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, index, buffer.id(), static_cast<GLintptr>(from), static_cast<GLsizeiptr>(size));
    return static_cast<std::int32_t>((begin - from) / sizeof(float));
  }
  void bind_whole(GLuint index, const gl::Buffer& buffer) const {
    if (buffer.bytes() > lim.cap)
      throw Error(text_format(_("internal: a GPU buffer of %zu KiB bound whole"), buffer.bytes() >> 10));
    gl::bind(index, buffer);
  }
  /// C = A Wᵀ (+ epilogue) for rows [0, M) of A (from row a_row) into Out (from row out_row),
  /// in chunks of rows that fit one storage binding.
  void gemm(const gl::BufferTexture& A, int lda, int a_row, const GpuMatrix& W, const gl::Buffer* bias, const gl::Buffer* ls,
            gl::Buffer& out, int ldo, int out_row, int M, int flags) {
    const int K4 = W.ld / 4, Nout = W.rows;
    const int chunk = std::max(kGemmRows, rows_per_chunk(ldo, N_("an activation")) / kGemmRows * kGemmRows);
    if (chunk < M) ++chunked;
    bind_image(1, W.texture);
    bind_image(2, A);
    bind_whole(3, bias ? *bias : ones);
    bind_whole(4, ls ? *ls : ones);
    for (int r0 = 0; r0 < M; r0 += chunk) {
      const int rows = std::min(chunk, M - r0);
      const std::int32_t a_off = (a_row + r0) * lda;
      const std::int32_t o_off = bind_floats(5, out, static_cast<std::int64_t>(out_row + r0) * ldo, static_cast<std::int64_t>(rows) * ldo);
      params.set(gemm_program, GemmParams{rows, Nout, K4, lda, W.ld, ldo, a_off, o_off, flags});
      gl::dispatch(gemm_program, static_cast<GLuint>(groups(Nout, kGemmLx * kGemmCols)), static_cast<GLuint>(groups(rows, kGemmRows)));
    }
  }
  /// LayerNorm of rows [0, rows) of `in` (its texture) into `out`, and/or their norms into
  /// norms[norm_first …] (norm_first < 0: none).
  void layer_norm(const gl::BufferTexture& in, int ld, const gl::Buffer& weight, const gl::Buffer& bias, gl::Buffer* out, int rows,
                  std::int64_t norm_first) {
    const int chunk = rows_per_chunk(ld, N_("an activation"));
    if (chunk < rows) ++chunked;
    in.bind(1);
    bind_whole(2, weight);
    bind_whole(3, bias);
    for (int r0 = 0; r0 < rows; r0 += chunk) {
      const int n = std::min(chunk, rows - r0);
      const std::int32_t y_off = out ? bind_floats(4, *out, static_cast<std::int64_t>(r0) * ld, static_cast<std::int64_t>(n) * ld) : 0;
      if (!out) bind_floats(4, norms, 0, 1);
      const std::int32_t n_off = norm_first >= 0 ? bind_floats(5, norms, norm_first + r0, n) : -1;
      if (norm_first < 0) bind_floats(5, norms, 0, 1);
      params.set(layernorm_program, LayerNormParams{n, D, ld, r0, y_off, n_off, out ? 1 : 0, eps});
      gl::dispatch(layernorm_program, static_cast<GLuint>(groups(n, kLayerNormLx)));
    }
  }
};

/// Layer `l`'s queries and keys from QKV (T rows of ld3 floats) into the pass (the read waits
/// for the product).
void read_queries_and_keys(const gl::Buffer& QKV, int T, int D, int ld3, VitPass& pass) {
  Matrix& Q = pass.Q.emplace_back(T, D);
  Matrix& K = pass.K.emplace_back(T, D);
  QKV.read_mapped(QKV.bytes(), 0, [&](const void* p) {
    const float* qkv = static_cast<const float*>(p);
    for (int t = 0; t < T; ++t) {
      std::memcpy(Q.data() + static_cast<std::ptrdiff_t>(t) * D, qkv + static_cast<std::ptrdiff_t>(t) * ld3, floats(D));
      std::memcpy(K.data() + static_cast<std::ptrdiff_t>(t) * D, qkv + static_cast<std::ptrdiff_t>(t) * ld3 + D, floats(D));
    }
  });
}

/// The token norms (T per layer) and the distance (layers × heads), read once.
void read_norms_and_distance(const gl::Buffer& norms, const gl::Buffer& distance, int L, int T, int H, VitPass& pass) {
  std::vector<float> all(static_cast<std::size_t>(L) * static_cast<std::size_t>(T));
  norms.download(all.data(), floats(static_cast<std::int64_t>(all.size())));
  for (int l = 0; l < L; ++l)
    pass.token_norms.push_back(Eigen::Map<const RowVector>(all.data() + static_cast<std::ptrdiff_t>(l) * T, T));
  pass.distance.resize(L, H);
  distance.download(pass.distance.data(), floats(static_cast<std::int64_t>(L) * H));
}

/// The classifier after the pass: the class token (or the patches' mean) of X through the final
/// LayerNorm and the head into pass.logits.
void classify(Dispatcher& d, const gl::Program& pool, const VitArchitecture& a, const gl::Buffer& norm_w, const gl::Buffer& norm_b,
              const GpuMatrix& W_head, const gl::Buffer& b_head, gl::Buffer& X, int T, VitPass& pass) {
  const int D = a.D, ldD = D;
  gl::Buffer pooled = zeros(ldD), normed = zeros(ldD), out(floats(a.classes));
  const gl::BufferTexture X_scalars(X, GL_R32F), pooled_tex(pooled, GL_RGBA32F), normed_tex(normed, GL_RGBA32F);
  d.params.set(pool, PoolParams{T, D, ldD, a.prefix(), a.pooling == VitPooling::Token ? shader::POOL_TOKEN : shader::POOL_AVERAGE});
  X_scalars.bind(1);
  d.bind_whole(2, pooled);
  gl::dispatch(pool, static_cast<GLuint>(groups(D, 64)));
  d.layer_norm(pooled_tex, ldD, norm_w, norm_b, &normed, 1, -1);
  d.gemm(normed_tex, ldD, 0, W_head, &b_head, nullptr, out, a.classes, 0, 1, kBias);
  pass.logits.resize(static_cast<std::size_t>(a.classes));
  out.download(pass.logits.data(), pass.logits.size() * sizeof(float));
}

}  // namespace

VitPass VitGpuRunner::run(const VitModel& model, const VitInput& input, std::int64_t budget, const std::atomic<bool>* stop) {
  const VitArchitecture& a = model.arch;
  vit_check_budget(a, input, budget);
  const int D = a.D, H = a.heads, dh = D / H, Hd = a.mlp_hidden, pre = a.prefix(), N = input.N(), T = pre + N, L = a.depth;
  const int PP3 = 3 * a.patch * a.patch;
  if (dh > 256) throw Error(text_format(_("the GPU engine takes heads up to 256 wide; this model's are %d"), dh));
  if (dh % 4 != 0)
    throw Error(text_format(_("the GPU engine takes heads whose width is a multiple of 4; this model's are %d"), dh));
  // Row strides in floats: multiples of 4 (vec4 loads), padding zero.
  const int ldD = D, ld3 = 3 * D, ldH = round4(Hd), ldP = round4(PP3);
  const StorageLimits lim = storage_limits(storage_limit_);
  check_gpu_fits(lim, T, D, H, Hd, L, ldD, ld3, ldH, ldP);
  if (model.id != model_id_ || !weights_) upload(model);
  const Weights& w = *weights_;
  chunked_dispatches_ = 0;

  gl::BindingGuard guard;
  const ImageUnits image_units;

  // Activations (rows of ld floats; the MLP's hidden layer padded with zeros).
  const std::vector<float> patch_rows =
      ldP == PP3 ? std::vector<float>() : padded(input.patches.data(), input.patches.rows(), input.patches.cols(), ldP);
  gl::Buffer patches(floats(static_cast<std::int64_t>(N) * ldP), ldP == PP3 ? input.patches.data() : patch_rows.data());
  const Matrix start = vit_initial_tokens(model, Matrix::Zero(N, D), vit_position_embedding(model, input.rows, input.cols));
  gl::Buffer X(floats(start.size()), start.data()), Xn(floats(static_cast<std::int64_t>(T) * ldD)),
      QKV(floats(static_cast<std::int64_t>(T) * ld3)), O(floats(static_cast<std::int64_t>(T) * ldD)),
      hidden = zeros(static_cast<std::int64_t>(T) * ldH), row_dist(floats(static_cast<std::int64_t>(H) * T)),
      distance(floats(static_cast<std::int64_t>(L) * H)), norms(floats(static_cast<std::int64_t>(L) * T));
  const gl::BufferTexture X_tex(X, GL_RGBA32F), QKV_tex(QKV, GL_RGBA32F), patches_tex(patches, GL_RGBA32F),
      Xn_tex(Xn, GL_RGBA32F), O_tex(O, GL_RGBA32F), hidden_tex(hidden, GL_RGBA32F);
  Dispatcher d{params_, gemm_, layernorm_, lim, w.ones, norms, D, a.eps, chunked_dispatches_};

  VitPass pass;
  pass.T = T;
  pass.H = H;
  pass.m = dh;
  pass.path = path();
  pass.Q.reserve(static_cast<std::size_t>(L));
  pass.K.reserve(static_cast<std::size_t>(L));

  // Patch embedding (a conv with kernel = stride = P, as a product) added onto the patch rows,
  // which already hold their position codes; the prefix rows are complete.
  d.gemm(patches_tex, ldP, 0, w.W_patch, &w.b_patch, nullptr, X, ldD, pre, N, kBias | kResidual);
  // k and v through an image buffer: on llvmpipe (Mesa 22) a storage-buffer load at an
  // address that is not a constant is a loop over the lanes, a texel fetch a function call and
  // an image load an inline gather.
  const gl::Program& attention = attention_program(dh);
  const int query_chunk = d.rows_per_chunk(ldD, N_("the attention output"));
  for (int l = 0; l < L; ++l) {
    if (stop && stop->load()) throw Error(_("cancelled"));
    const Weights::Block& b = w.blocks[static_cast<std::size_t>(l)];
    // The previous block's output tokens' norms, with the LayerNorm that reads them.
    d.layer_norm(X_tex, ldD, b.ln1_w, b.ln1_b, &Xn, T, l > 0 ? static_cast<std::int64_t>(l - 1) * T : -1);
    d.gemm(Xn_tex, ldD, 0, b.W_qkv, &b.b_qkv, nullptr, QKV, ld3, 0, T, kBias);
    // Attention per head and chunk of queries, O and the distance's row terms.
    QKV_tex.bind(1);
    bind_image(1, QKV_tex);
    d.bind_whole(3, row_dist);
    if (query_chunk < T) ++chunked_dispatches_;
    for (int q0 = 0; q0 < T; q0 += query_chunk) {
      const int count = std::min(query_chunk, T - q0);
      const std::int32_t o_off = d.bind_floats(2, O, static_cast<std::int64_t>(q0) * ldD, static_cast<std::int64_t>(count) * ldD);
      params_.set(attention, AttentionParams{T, D, ld3, q0, count, o_off, ldD, pre, input.cols, static_cast<float>(a.patch),
                                             1.0f / std::sqrt(static_cast<float>(dh))});
      gl::dispatch(attention, static_cast<GLuint>(groups(count, kAttentionLx)), static_cast<GLuint>(H));
    }
    d.bind_whole(1, row_dist);
    d.bind_whole(2, distance);
    params_.set(distance_sum_, DistanceSumParams{T, H, pre, l * H});
    gl::dispatch(distance_sum_, static_cast<GLuint>(groups(H, 16)));
    read_queries_and_keys(QKV, T, D, ld3, pass);
    d.gemm(O_tex, ldD, 0, b.W_proj, &b.b_proj, &b.ls1, X, ldD, 0, T, kBias | kResidual);
    d.layer_norm(X_tex, ldD, b.ln2_w, b.ln2_b, &Xn, T, -1);
    d.gemm(Xn_tex, ldD, 0, b.W_fc1, &b.b_fc1, nullptr, hidden, ldH, 0, T, kBias | kGelu);
    d.gemm(hidden_tex, ldH, 0, b.W_fc2, &b.b_fc2, &b.ls2, X, ldD, 0, T, kBias | kResidual);
  }
  if (L > 0) d.layer_norm(X_tex, ldD, w.norm_w, w.norm_b, nullptr, T, static_cast<std::int64_t>(L - 1) * T);
  read_norms_and_distance(norms, distance, L, T, H, pass);
  if (a.classes > 0) classify(d, pool_, a, w.norm_w, w.norm_b, w.W_head, w.b_head, X, T, pass);
  ++forward_passes_;
  return pass;
}

}  // namespace attnlab
