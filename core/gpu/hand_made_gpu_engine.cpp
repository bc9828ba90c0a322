#include "core/gpu/hand_made_gpu_engine.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/gpu/context.hpp"
#include "core/hand_made/shader_constants.hpp"

#include <algorithm>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace attnlab {

namespace {

using shader::MODE_EXTERNAL, shader::MODE_OUTPUT, shader::MODE_ROW;
constexpr GLuint kLocal = 64;  // local size of tokenize, project, merge, attend_rows, attend_matrix
// Bytes of A per tile of matrix(): small enough that a tile the kernel has just written is
// still in the CPU's caches when it is copied out, and its buffer's pages are touched once per
// call, not once per row; large enough that the dispatches are few (N = 4096: 8 tiles).
constexpr size_t kMatrixTileBytes = size_t{8} << 20;

GLuint groups(int n, GLuint local) { return (static_cast<GLuint>(n) + local - 1) / local; }

// The kernels' parameter blocks (gl::ParamBlock): the Params of each shader, member for member.
struct TokenizeParams {
  std::int32_t N, cols, K, width, height, P, sincos, add;
  float B;
};
struct ProjectParams {
  std::int32_t N, D, m, stride, w_offset, out_offset;
};
struct AttendParams {
  std::int32_t mode, N, query, head, heads, cols, mask_kind, radius;
  float temperature;
};
struct AttendRowsParams {
  std::int32_t mode, N, head, row_base, row_count, qk_offset, m, stride, cols, mask_kind, radius;
  float temperature;
};
struct AttendMatrixParams {
  std::int32_t N, row_base, row_count, qk_offset, m, stride, cols, mask_kind, radius;
  float temperature;
};
struct PoolMatrixParams {  // pool_matrix.comp
  std::int32_t pass, N, block, side, first, count, pooling, qk_offset, m, stride, cols, mask_kind, radius;
  float temperature;
};
struct MergeParams {
  std::int32_t N, heads;
};
struct ColormapParams {
  std::int32_t offset, count, cols, norm, mask_kind, radius, query;
};

// Asks Linux to back a large fresh allocation with 2 MiB pages (transparent huge pages in
// "madvise" mode, Debian's default): the first write to each 4 KiB page of a 64 MiB matrix
// otherwise costs a page fault, 16384 of them, which measured as about two thirds of the time
// matrix() spent copying A out. Only whole 2 MiB pages inside the block are advised; a no-op
// elsewhere or where the kernel refuses.
void advise_huge_pages([[maybe_unused]] void* data, [[maybe_unused]] size_t bytes) {
#ifdef __linux__
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto addr = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (addr + huge - 1) / huge * huge, end = (addr + bytes) / huge * huge;
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
#endif
}

template <class T>
gl::Buffer make_buffer(const std::vector<T>& v) {
  return gl::Buffer(v.size() * sizeof(T), v.data());
}

gl::Buffer make_buffer(const Matrix& m) {
  return gl::Buffer(static_cast<size_t>(m.size()) * sizeof(float), m.data());
}

// `m` (rows × cols, row-major) uploaded transposed (cols × rows, row-major), a block of columns
// at a time: W_tokenize (R × 3K²) as tokenize.comp reads it, a pixel's R weights side by side,
// without a whole transposed copy on the CPU (at K = 945 W_tokenize alone is 171 MB, counted once
// by the pipeline's memory limit, make_setup).
gl::Buffer make_transposed_buffer(const Matrix& m) {
  gl::Buffer buffer(static_cast<size_t>(m.size()) * sizeof(float));
  constexpr Eigen::Index kBlock = 1 << 16;  // columns an upload: 4 MiB for R = 16
  Matrix part(std::min(kBlock, m.cols()), m.rows());  // one block, reused (no allocation an upload)
  for (Eigen::Index c = 0; c < m.cols(); c += kBlock) {
    const Eigen::Index n = std::min(kBlock, m.cols() - c);
    part.topRows(n) = m.middleCols(c, n).transpose();
    buffer.upload(part.data(), static_cast<size_t>(n * m.rows()) * sizeof(float), static_cast<size_t>(c * m.rows()) * sizeof(float));
  }
  return buffer;
}

}  // namespace

bool same_tokens(const Settings& a, const Settings& b) {
  return a.patch == b.patch && a.edge == b.edge && a.seed == b.seed && a.pos.B == b.pos.B && a.pos.P == b.pos.P &&
         a.pos.sincos == b.pos.sincos && (a.pos.mode == PosMode::Add) == (b.pos.mode == PosMode::Add);
}

bool same_projections(const Settings& a, const Settings& b) {
  return same_tokens(a, b) && a.pos.mode == b.pos.mode && a.pos.lambda == b.pos.lambda &&
         a.custom.W_q == b.custom.W_q && a.custom.W_k == b.custom.W_k;
}

struct HandMadeGpuEngine::Buffers {
  gl::Program tokenize, project, attend, attend_rows, attend_matrix, merge, colormap;
  gl::ParamBlock params;
  gl::Texture image;
  gl::Buffer X, W_tok, W_pos;
  gl::Buffer W, head_info, Q, K, V;
  std::vector<int> qk_offset, m, stride;  // per head, in floats; rows of Q, K padded to stride
  gl::BufferTexture Q_tex, K_tex, V_tex, keep_tex;  // the same buffers through the texture path
  gl::Buffer keep, rows, aux, outputs, merged, W_MSA;
  gl::Buffer other_rows, other_aux;  // heatmap_into's row pass
  std::array<gl::Buffer, kColormapCount> luts;
  std::array<gl::Texture, kHeadCount> heatmaps;
  struct Shown {
    int query;
    HeatmapStyle style;
    bool operator==(const Shown&) const = default;
  };
  std::array<std::optional<Shown>, kHeadCount> heatmap_shown;  // what each texture shows now
  gl::Program pool_matrix;                       // compiled on first use (pool_matrix_rows)
  gl::Buffer pool_partial, pool_stats, pool_values, pool_flags;  // one band's partials, row statistics, pixels
};

HandMadeGpuEngine::HandMadeGpuEngine() : gpu_(std::make_unique<Buffers>()) {
  check_compute_support();
  gpu_->tokenize = gl::compile_embedded("tokenize.comp");
  gpu_->project = gl::compile_embedded("project.comp");
  gpu_->attend = gl::compile_embedded("attend.comp");
  gpu_->attend_rows = gl::compile_embedded("attend_rows.comp");
  gpu_->attend_matrix = gl::compile_embedded("attend_matrix.comp");
  gpu_->merge = gl::compile_embedded("merge.comp");
  gpu_->colormap = gl::compile_embedded("colormap.comp");
  for (int c = 0; c < kColormapCount; ++c) {
    const auto table = colormap_table(static_cast<Colormap>(c));
    gpu_->luts[c] = gl::Buffer(table.size_bytes(), table.data());
  }
}

HandMadeGpuEngine::HandMadeGpuEngine(const Image& image, const Settings& settings) : HandMadeGpuEngine() {
  set_image(image, settings);
}

HandMadeGpuEngine::~HandMadeGpuEngine() = default;

void HandMadeGpuEngine::rebuild_setup(const Settings& s, int width, int height) {
  install_setup(make_setup(width, height, s));  // make_setup throws before anything changes
}

void HandMadeGpuEngine::install_setup(ModelSetup fresh) {
  const bool grid_changed = !setup_ || setup_->grid.cols != fresh.grid.cols || setup_->grid.rows != fresh.grid.rows;
  setup_.emplace(std::move(fresh));
  if (grid_changed) {
    for (auto& t : gpu_->heatmaps) t = gl::Texture();
  }
  for (auto& st : gpu_->heatmap_shown) st.reset();
}

void HandMadeGpuEngine::set_image(const Image& image) { set_image(image, settings_); }

void HandMadeGpuEngine::set_image(const Image& image, const Settings& settings) {
  if (image.empty()) throw Error(_("the image is empty"));
  GLint max_tex = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_tex);
  if (image.width > max_tex || image.height > max_tex)
    throw Error(text_format(_("the image is %dx%d pixels; this GPU takes at most %d per side"), image.width, image.height,
                            static_cast<int>(max_tex)));
  std::optional<ModelSetup> fresh;  // a video's next frame (same size, same settings) keeps the setup
  if (!fits(image.width, image.height, settings)) fresh.emplace(make_setup(image.width, image.height, settings));  // throws: nothing changed yet
  gl::Texture tex(image.width, image.height, GL_RGB32F);
  tex.upload(GL_RGB, GL_FLOAT, image.rgb.data());
  if (fresh) install_setup(std::move(*fresh));
  settings_ = settings;
  gpu_->image = std::move(tex);
  image_w_ = image.width;
  image_h_ = image.height;
  tokens_dirty_ = qkv_dirty_ = true;
  rows_query_ = -1;
  outputs_fresh_.fill(false);
  for (auto& st : gpu_->heatmap_shown) st.reset();  // the maps shown were of the old image (also when the setup is kept)
  upload_mask();
}

void HandMadeGpuEngine::set_settings(const Settings& s) {
  if (!has_image()) {
    validate(s);
    settings_ = s;
    return;
  }
  const bool tokens_same = same_tokens(s, settings_), proj_same = same_projections(s, settings_);
  const Settings old = settings_;
  if (!proj_same || s.mask != old.mask || s.temperature != old.temperature) {
    rebuild_setup(s, image_w_, image_h_);  // throws: nothing changed
  }
  settings_ = s;
  if (!tokens_same) tokens_dirty_ = true;
  if (!proj_same) qkv_dirty_ = true;
  rows_query_ = -1;
  outputs_fresh_.fill(false);
  upload_mask();
  for (auto& st : gpu_->heatmap_shown) st.reset();
}

void HandMadeGpuEngine::check_query(int query) const {
  if (!has_image()) throw Error(_("no image loaded"));
  if (query < 0 || query >= N())
    throw Error(text_format(_("query token %d is outside [0,%d)"), query, N()));
}

void HandMadeGpuEngine::upload_mask() {
  const auto& keep8 = setup_->mask.key_keep();
  std::vector<std::uint32_t> keep(keep8.begin(), keep8.end());
  if (gpu_->keep.bytes() == keep.size() * 4) {
    gpu_->keep.upload(keep.data(), keep.size() * 4);
  } else {
    gpu_->keep = make_buffer(keep);
    gpu_->keep_tex = gl::BufferTexture(gpu_->keep, GL_R32UI);
  }
}

void HandMadeGpuEngine::ensure_tokens() {
  if (!has_image()) throw Error(_("no image loaded"));
  if (!tokens_dirty_) return;
  const auto& g = setup_->grid;
  const int np = static_cast<int>(setup_->P.cols());
  const int D = TokenLayout::d + np;
  gl::BindingGuard guard;
  gpu_->X = gl::Buffer(static_cast<size_t>(g.N()) * D * sizeof(float));
  gpu_->W_tok = make_transposed_buffer(setup_->W_tokenize);  // 3K² × R: a pixel's weights side by side (tokenize.comp)
  gpu_->W_pos = make_buffer(setup_->W_pos);
  const auto& p = gpu_->tokenize;
  gpu_->params.set(p, TokenizeParams{g.N(), g.cols, g.K, image_w_, image_h_, settings_.pos.P, settings_.pos.sincos ? 1 : 0,
                                     settings_.pos.mode == PosMode::Add ? 1 : 0, settings_.pos.B});
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, gpu_->image.id());
  gl::bind(0, gpu_->X);
  gl::bind(1, gpu_->W_tok);
  gl::bind(2, gpu_->W_pos);
  gl::dispatch(p, groups(g.N(), kLocal));
  ++counts_.tokenize;
  tokens_dirty_ = false;
  qkv_dirty_ = true;
}

void HandMadeGpuEngine::ensure_qkv() {
  ensure_tokens();
  if (!qkv_dirty_) return;
  const int N = this->N();
  const int np = static_cast<int>(setup_->P.cols());
  const int D = TokenLayout::d + np;
  // Every head's W_q', W_k' (concat mode appends λ·[0 | I] over the P columns of X), then W_v,
  // packed into one buffer; Q and K of all heads share offsets in their two buffers.
  std::vector<float> W;
  std::vector<int> w_q_off, w_k_off, w_v_off;
  std::vector<std::int32_t> info;
  gpu_->qk_offset.clear();
  gpu_->m.clear();
  gpu_->stride.clear();
  int qk_total = 0;
  auto append = [&](const Matrix& M, std::vector<int>& offs) {
    offs.push_back(static_cast<int>(W.size()));
    W.insert(W.end(), M.data(), M.data() + M.size());
    return static_cast<int>(M.rows());
  };
  for (int h = 0; h < kHeadCount; ++h) {
    const Head& head = setup_->heads[h];
    const int m = append(query_key_weights(head.W_q, settings_.pos, np), w_q_off);
    append(query_key_weights(head.W_k, settings_.pos, np), w_k_off);
    append(head.W_v, w_v_off);
    const int stride = (m + 3) / 4 * 4;  // vec4 rows for attend_rows.comp
    gpu_->qk_offset.push_back(qk_total);
    gpu_->m.push_back(m);
    gpu_->stride.push_back(stride);
    info.insert(info.end(), {qk_total, m, h * N * 3, stride});
    qk_total += N * stride;
  }
  gl::BindingGuard guard;
  gpu_->W = make_buffer(W);
  gpu_->head_info = make_buffer(info);
  gpu_->Q = gl::Buffer(static_cast<size_t>(qk_total) * sizeof(float));
  gpu_->K = gl::Buffer(static_cast<size_t>(qk_total) * sizeof(float));
  gpu_->V = gl::Buffer(static_cast<size_t>(kHeadCount) * N * 3 * sizeof(float));
  gpu_->Q_tex = gl::BufferTexture(gpu_->Q, GL_RGBA32F);
  gpu_->K_tex = gl::BufferTexture(gpu_->K, GL_RGBA32F);
  gpu_->V_tex = gl::BufferTexture(gpu_->V, GL_RGB32F);
  const auto& p = gpu_->project;
  gl::bind(0, gpu_->X);
  gl::bind(1, gpu_->W);
  for (int h = 0; h < kHeadCount; ++h) {
    const struct {
      int w_off, m, stride, out_off;
      const gl::Buffer* out;
    } jobs[3] = {{w_q_off[h], gpu_->m[h], gpu_->stride[h], gpu_->qk_offset[h], &gpu_->Q},
                 {w_k_off[h], gpu_->m[h], gpu_->stride[h], gpu_->qk_offset[h], &gpu_->K},
                 {w_v_off[h], 3, 3, h * N * 3, &gpu_->V}};
    for (const auto& j : jobs) {
      gpu_->params.set(p, ProjectParams{N, D, j.m, j.stride, j.w_off, j.out_off});
      gl::bind(2, *j.out);
      gl::dispatch(p, groups(N, kLocal));
    }
  }
  ++counts_.project;
  qkv_dirty_ = false;
  rows_query_ = -1;
  outputs_fresh_.fill(false);
}

void HandMadeGpuEngine::set_attend_params(int mode, int head, int query) {
  gpu_->params.set(gpu_->attend, AttendParams{mode, N(), query, head, kHeadCount, grid().cols,
                                              static_cast<int>(settings_.mask.kind), settings_.mask.radius,
                                              settings_.temperature});
  gl::bind(3, gpu_->head_info);
  // Texture units 1, 2, 4: the samplers' bindings in attend.comp.
  gpu_->Q_tex.bind(1);
  gpu_->K_tex.bind(2);
  gpu_->keep_tex.bind(4);
}

void HandMadeGpuEngine::set_rows_pass_params(int mode, int head, int row_base, int row_count) {
  gpu_->params.set(gpu_->attend_rows,
                   AttendRowsParams{mode, N(), head, row_base, row_count, gpu_->qk_offset[head], gpu_->m[head],
                                    gpu_->stride[head], grid().cols, static_cast<int>(settings_.mask.kind),
                                    settings_.mask.radius, settings_.temperature});
  // Texture units 1..4: the samplers' bindings in attend_rows.comp.
  const gl::BufferTexture* textures[] = {&gpu_->Q_tex, &gpu_->K_tex, &gpu_->V_tex, &gpu_->keep_tex};
  for (GLuint u = 0; u < 4; ++u) textures[u]->bind(u + 1);
}

void HandMadeGpuEngine::row_pass(int query, gl::Buffer& rows, gl::Buffer& aux) {
  ensure_qkv();
  const int N = this->N();
  gl::BindingGuard guard;
  if (rows.bytes() != static_cast<size_t>(kHeadCount) * N * 4) {
    rows = gl::Buffer(static_cast<size_t>(kHeadCount) * N * 4);
    aux = gl::Buffer((static_cast<size_t>(kHeadCount) * N + kHeadCount) * 4);
  }
  set_attend_params(MODE_ROW, 0, query);
  gl::bind(5, rows);
  gl::bind(6, aux);
  gl::dispatch(gpu_->attend, kHeadCount);
}

void HandMadeGpuEngine::colour_row(const gl::Buffer& rows, int head, int query, const HeatmapStyle& style, gl::Texture& out) {
  const auto& g = grid();
  if (!out.id() || out.width() != g.cols || out.height() != g.rows) out = gl::Texture(g.cols, g.rows, GL_RGBA8);
  gl::BindingGuard guard;
  const auto& p = gpu_->colormap;
  gpu_->params.set(p, ColormapParams{head * N(), N(), g.cols, static_cast<int>(style.normalization),
                                     static_cast<int>(settings_.mask.kind), settings_.mask.radius, query});
  gl::bind(0, rows);
  gl::bind(1, gpu_->luts[static_cast<int>(style.colormap)]);
  gl::bind(2, gpu_->keep);
  glBindImageTexture(0, out.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8);
  gl::dispatch(p, 1);
  ++counts_.heatmap;
}

void HandMadeGpuEngine::dispatch_rows(int query) {
  check_query(query);
  ensure_qkv();  // may mark the rows stale
  if (rows_query_ == query) return;
  row_pass(query, gpu_->rows, gpu_->aux);
  rows_fence_ = gl::Fence::now();
  ++counts_.row;
  rows_query_ = query;
  rows_read_ = false;
}

bool HandMadeGpuEngine::rows_ready(int query) {
  if (!has_image() || rows_query_ != query || qkv_dirty_) return false;
  return rows_read_ || rows_fence_.signalled();
}

const RowSet& HandMadeGpuEngine::rows(int query) {
  dispatch_rows(query);
  if (rows_read_) return rows_;
  const bool done = rows_fence_.signalled();  // the copies below wait for nothing
  const int N = this->N();
  rows_.query = query;
  rows_.N = N;
  rows_.weights.resize(static_cast<size_t>(kHeadCount) * N);
  std::vector<float> aux(static_cast<size_t>(kHeadCount) * N + kHeadCount);
  gpu_->rows.download(rows_.weights.data(), rows_.weights.size() * 4);
  gpu_->aux.download(aux.data(), aux.size() * 4);
  if (done) gl::count_fenced(2);
  rows_.logits.assign(aux.begin(), aux.begin() + static_cast<std::ptrdiff_t>(kHeadCount) * N);
  for (int h = 0; h < kHeadCount; ++h) rows_.empty[h] = aux[static_cast<size_t>(kHeadCount) * N + h] != 0.0f;
  rows_read_ = true;
  return rows_;
}

Matrix HandMadeGpuEngine::head_weights_q(int head) const {
  return query_key_weights(setup_->heads[head].W_q, settings_.pos, static_cast<int>(setup_->P.cols()));
}

int HandMadeGpuEngine::head_m(int head) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  ensure_qkv();
  return gpu_->m[head];
}

std::pair<std::vector<float>, std::vector<float>> HandMadeGpuEngine::row_for_token(int head, const RowVector& x) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  ensure_qkv();
  const Matrix Wq = head_weights_q(head);
  if (x.size() != Wq.cols())
    throw Error(text_format(_("a question token needs %lld values, got %lld"), static_cast<long long>(Wq.cols()),
                            static_cast<long long>(x.size())));
  const RowVector q = x * Wq.transpose();  // eq. 26.11: q = W_q t
  const int N = this->N();
  gl::BindingGuard guard;
  gl::Buffer qbuf(static_cast<size_t>(q.size()) * 4, q.data());
  gl::Buffer out(static_cast<size_t>(kHeadCount) * N * 4), aux((static_cast<size_t>(kHeadCount) * N + kHeadCount) * 4);
  set_attend_params(MODE_EXTERNAL, head, 0);  // the query is q_ext, not a token
  gl::bind(5, out);
  gl::bind(6, aux);
  gl::bind(7, qbuf);
  gl::dispatch(gpu_->attend, 1);
  // The single work group wrote head `head`'s slice (h = u_head in this mode).
  std::vector<float> w(static_cast<size_t>(N)), l(static_cast<size_t>(N));
  out.download(w.data(), w.size() * 4, static_cast<size_t>(head) * N * 4);
  aux.download(l.data(), l.size() * 4, static_cast<size_t>(head) * N * 4);
  return {std::move(w), std::move(l)};
}

Matrix HandMadeGpuEngine::matrix(int head) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  ensure_qkv();
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  const auto start = Clock::now();
  const int N = this->N();
  const size_t total = static_cast<size_t>(N) * N * sizeof(float);
  if (total > max_matrix_bytes())
    throw Error(text_format(_("the full attention matrix of %d tokens needs %zu MiB, more than the limit of %zu MiB; choose a "
                              "larger patch size"),
                            N, total >> 20, max_matrix_bytes() >> 20));
  check_memory(total, std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               text_format(_("the full attention matrix of %d tokens"), N), _("choose a larger patch size"));
  const size_t row_bytes = static_cast<size_t>(N) * sizeof(float);
  int tile_rows = static_cast<int>(std::max<size_t>(1, std::min(kMatrixTileBytes, gl::max_storage_block_bytes()) / row_bytes));
  if (matrix_tile_rows_ > 0) tile_rows = std::min(tile_rows, matrix_tile_rows_);
  tile_rows = std::min(tile_rows, N);
  MatrixTimings timings;
  Matrix A(N, N);  // not initialised: every entry is written below
  advise_huge_pages(A.data(), total);
  gl::BindingGuard guard;
  gl::Buffer tile(static_cast<size_t>(tile_rows) * row_bytes);
  gl::Buffer sums(static_cast<size_t>(tile_rows) * sizeof(float));
  std::vector<float> S(static_cast<size_t>(tile_rows));
  gpu_->Q_tex.bind(1);  // the samplers' bindings in attend_matrix.comp
  gpu_->K_tex.bind(2);
  gpu_->keep_tex.bind(4);
  gl::bind(5, tile);
  gl::bind(6, sums);
  timings.cpu_ms += ms_since(start);
  double kernel_ms = 0;
  bool gpu_timed = true;
  for (int base = 0; base < N; base += tile_rows) {
    const int count = std::min(tile_rows, N - base);
    const auto kernel_start = Clock::now();
    gpu_->params.set(gpu_->attend_matrix,
                     AttendMatrixParams{N, base, count, gpu_->qk_offset[head], gpu_->m[head], gpu_->stride[head],
                                        grid().cols, static_cast<int>(settings_.mask.kind), settings_.mask.radius,
                                        settings_.temperature});
    gl::TimerQuery timer;
    timer.begin();
    gl::dispatch(gpu_->attend_matrix, groups(count, kLocal));
    timer.end();
    glFinish();  // the read-back below would wait anyway; this splits kernel and copy times
    timings.kernel_wall_ms += ms_since(kernel_start);
    if (const auto t = timer.milliseconds()) kernel_ms += *t;
    else gpu_timed = false;
    const auto copy_start = Clock::now();
    sums.download(S.data(), static_cast<size_t>(count) * sizeof(float));
    // a_ij = e_ij / S_i (eq. 26.20): the division that ends the softmax, made while the tile is
    // copied out of the mapped buffer, so the CPU passes over each weight once.
    tile.read_mapped(static_cast<size_t>(count) * row_bytes, 0, [&](const void* p) {
      const float* e = static_cast<const float*>(p);
      for (int r = 0; r < count; ++r) {
        const float s = S[static_cast<size_t>(r)];
        A.row(base + r) = Eigen::Map<const RowVector>(e + static_cast<size_t>(r) * N, N) * (s > 0 ? 1.0f / s : 0.0f);
      }
    });
    timings.readback_ms += ms_since(copy_start);
    ++timings.tiles;
  }
  timings.kernel_ms = gpu_timed ? kernel_ms : std::numeric_limits<double>::quiet_NaN();
  ++counts_.full;
  timings.total_ms = ms_since(start);
  matrix_timings_ = timings;
  return A;
}

void HandMadeGpuEngine::set_matrix_tile_rows(int rows) {
  if (rows < 0) throw Error(text_format(_("a tile cannot have %d rows"), rows));
  matrix_tile_rows_ = rows;
}

void HandMadeGpuEngine::pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image) {
  if (!has_image()) throw Error(_("no image loaded"));
  check_pool_rows(N(), head, first, count, image);
  if (count == 0) return;
  ensure_qkv();
  if (!gpu_->pool_matrix.id()) gpu_->pool_matrix = gl::compile_embedded("pool_matrix.comp");
  const int N = this->N(), b = image.block, S = image.side;
  // Sub-bands whose per-block partials ((m, s) per matrix row and column block, b·S·8 bytes per
  // image row) stay within 16 MiB and one storage block: O(N·S/b) at most, never N².
  const size_t partial_per_row = static_cast<size_t>(b) * static_cast<size_t>(S) * 8;
  const size_t limit = std::min<size_t>(size_t{16} << 20, gl::max_storage_block_bytes());
  const size_t by_groups = static_cast<size_t>(std::max(1, 65535 / b));  // matrix rows are dispatch groups along y
  const int sub = static_cast<int>(std::clamp<size_t>(std::min(limit / partial_per_row, by_groups), 1, static_cast<size_t>(count)));
  gl::BindingGuard guard;
  const gl::BufferTexture* textures[] = {&gpu_->Q_tex, &gpu_->K_tex, &gpu_->keep_tex};  // units 1..3 of the shader
  for (GLuint u = 0; u < 3; ++u) textures[u]->bind(u + 1);
  const auto& p = gpu_->pool_matrix;
  std::vector<std::uint32_t> flags;
  for (int band = first; band < first + count; band += sub) {
    const int n = std::min(sub, first + count - band);                 // image rows of this sub-band
    const int rows = std::min(N, (band + n) * b) - band * b;           // its matrix rows
    const size_t pixels = static_cast<size_t>(n) * static_cast<size_t>(S);
    // Grown when a band needs more, never shrunk.
    if (gpu_->pool_partial.bytes() < static_cast<size_t>(rows) * S * 8)
      gpu_->pool_partial = gl::Buffer(static_cast<size_t>(rows) * S * 8);
    if (gpu_->pool_stats.bytes() < static_cast<size_t>(rows) * 8) gpu_->pool_stats = gl::Buffer(static_cast<size_t>(rows) * 8);
    if (gpu_->pool_values.bytes() < pixels * 4) {
      gpu_->pool_values = gl::Buffer(pixels * 4);
      gpu_->pool_flags = gl::Buffer(pixels * 4);
    }
    gl::bind(4, gpu_->pool_partial);
    gl::bind(5, gpu_->pool_stats);
    gl::bind(6, gpu_->pool_values);
    gl::bind(7, gpu_->pool_flags);
    auto params = [&](int pass) {
      return PoolMatrixParams{pass, N, b, S, band, n, static_cast<int>(pooling), gpu_->qk_offset[head], gpu_->m[head],
                              gpu_->stride[head], grid().cols, static_cast<int>(settings_.mask.kind), settings_.mask.radius,
                              settings_.temperature};
    };
    gpu_->params.set(p, params(shader::POOL_PASS_PARTIAL));
    gl::dispatch(p, groups(S, kLocal), static_cast<GLuint>(rows));
    gpu_->params.set(p, params(shader::POOL_PASS_ROWS));
    gl::dispatch(p, groups(rows, kLocal));
    gpu_->params.set(p, params(shader::POOL_PASS_IMAGE));
    gl::dispatch(p, groups(S, kLocal), static_cast<GLuint>(n));
    const size_t at = static_cast<size_t>(band) * static_cast<size_t>(S);
    gpu_->pool_values.download(image.values.data() + at, pixels * 4);
    flags.resize(pixels);
    gpu_->pool_flags.download(flags.data(), pixels * 4);
    for (size_t t = 0; t < pixels; ++t) image.all_zero[at + t] = flags[t] ? 1 : 0;
  }
}

void HandMadeGpuEngine::ensure_output(int head) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  ensure_qkv();
  if (outputs_fresh_[head]) return;
  const int N = this->N();
  gl::BindingGuard guard;
  if (gpu_->outputs.bytes() != static_cast<size_t>(kHeadCount) * N * 3 * 4) {
    gpu_->outputs = gl::Buffer(static_cast<size_t>(kHeadCount) * N * 3 * 4);
    outputs_fresh_.fill(false);
  }
  set_rows_pass_params(MODE_OUTPUT, head, 0, N);
  gl::bind(5, gpu_->outputs);
  gl::dispatch(gpu_->attend_rows, groups(N, kLocal));
  ++counts_.output;
  outputs_fresh_[head] = true;
}

Matrix HandMadeGpuEngine::output(int head) {
  ensure_output(head);
  const int N = this->N();
  Matrix out(N, 3);
  gpu_->outputs.download(out.data(), static_cast<size_t>(N) * 3 * 4, static_cast<size_t>(head) * N * 3 * 4);
  return out;
}

Matrix HandMadeGpuEngine::merged_output() {
  for (int h = 0; h < kHeadCount; ++h) ensure_output(h);  // every head's T_out, computed once per change
  const int N = this->N();
  gl::BindingGuard guard;
  gpu_->W_MSA = make_buffer(setup_->W_MSA);
  gpu_->merged = gl::Buffer(static_cast<size_t>(N) * 3 * 4);
  const auto& p = gpu_->merge;
  gpu_->params.set(p, MergeParams{N, kHeadCount});
  gl::bind(0, gpu_->outputs);
  gl::bind(1, gpu_->W_MSA);
  gl::bind(2, gpu_->merged);
  gl::dispatch(p, groups(N, kLocal));
  Matrix out(N, 3);
  gpu_->merged.download(out.data(), static_cast<size_t>(N) * 3 * 4);
  return out;
}

Matrix HandMadeGpuEngine::tokens() {
  ensure_tokens();
  const int D = TokenLayout::d + static_cast<int>(setup_->P.cols());
  Matrix X(N(), D);
  gpu_->X.download(X.data(), static_cast<size_t>(X.size()) * 4);
  return X;
}

HeadQKV HandMadeGpuEngine::qkv(int head) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  ensure_qkv();
  const int N = this->N(), m = gpu_->m[head], stride = gpu_->stride[head];
  Matrix Qp(N, stride), Kp(N, stride);
  const size_t off = static_cast<size_t>(gpu_->qk_offset[head]) * 4;
  gpu_->Q.download(Qp.data(), static_cast<size_t>(N) * stride * 4, off);
  gpu_->K.download(Kp.data(), static_cast<size_t>(N) * stride * 4, off);
  HeadQKV out{Qp.leftCols(m), Kp.leftCols(m), Matrix(N, 3)};
  gpu_->V.download(out.V.data(), static_cast<size_t>(N) * 3 * 4, static_cast<size_t>(head) * N * 3 * 4);
  return out;
}

const gl::Texture& HandMadeGpuEngine::heatmap(int query, int head, const HeatmapStyle& style) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  check_query(query);
  auto& tex = gpu_->heatmaps[head];
  const Buffers::Shown shown{query, style};
  if (gpu_->heatmap_shown[head] == shown && tex.id()) return tex;
  dispatch_rows(query);  // colours the rows where they are: nothing read back
  colour_row(gpu_->rows, head, query, style, tex);
  gpu_->heatmap_shown[head] = shown;
  return tex;
}

void HandMadeGpuEngine::heatmap_into(int query, int head, const HeatmapStyle& style, gl::Texture& out, gl::Buffer& row) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  check_query(query);
  row_pass(query, gpu_->other_rows, gpu_->other_aux);
  ++counts_.row;
  colour_row(gpu_->other_rows, head, query, style, out);
  const int N = this->N();
  if (row.bytes() != static_cast<size_t>(N) * 4) row = gl::Buffer(static_cast<size_t>(N) * 4);
  gl::copy(gpu_->other_rows, row, static_cast<size_t>(head) * N * 4, 0, static_cast<size_t>(N) * 4);
}

std::vector<std::uint8_t> HandMadeGpuEngine::heatmap_pixels(int query, int head, const HeatmapStyle& style) {
  const auto& tex = heatmap(query, head, style);
  std::vector<std::uint8_t> px(static_cast<size_t>(tex.width()) * tex.height() * 4);
  tex.download_rgba8(px);
  return px;
}

}  // namespace attnlab
