// The attention-matrix view's pictures (view_matrix.hpp): A of the main head pooled a band of
// image rows per frame (GL stays on this thread), debounced for large N; fc on the scheduler;
// conv at the size it is drawn. view_matrix.cpp draws them.
#include "app/gui/chapter/view_matrix.hpp"

#include "app/commands/cnn_model.hpp"

namespace attnlab::app::matrix_view {

// Rows whose every key is masked (their weights are all 0): checked with the mask alone, O(N)
// for the chapter's masks (a query sees itself, or the first kept key), never N².
void count_empty_rows(const Mask& mask, int N, int& count, int& first) {
  count = 0;
  first = -1;
  int hint = -1;
  const auto& keep = mask.key_keep();
  for (int j = 0; j < N && hint < 0; ++j)
    if (keep[static_cast<size_t>(j)]) hint = j;
  for (int i = 0; i < N; ++i) {
    bool any = mask.allowed(i, i) || (hint >= 0 && mask.allowed(i, hint));
    for (int j = 0; j < N && !any; ++j) any = mask.allowed(i, j);
    if (any) continue;
    if (first < 0) first = i;
    ++count;
  }
}

void MatrixView::update_attention(const AppState& state, HandMadeSession& hand_made) {
  const Key key{hand_made.generation(), std::clamp(state.hand_made.head.head, 0, kHeadCount - 1), pooling_};
  const int N = hand_made.grid().N();
  a_fresh_ = key == a_key_;
  if (a_fresh_) {
    building_ = false;
    return;
  }
  // A picture that cannot be made (too large for the GPU, …): its reason instead, for this key.
  auto fail = [&](const Error& e) {
    a_key_ = key;
    a_error_ = e.what();
    a_.image = {};
    building_ = false;
  };
  if (!building_ || !(next_key_ == key)) {
    if (!(pending_ == key)) {
      pending_ = key;
      pending_since_ = Clock::now();
    }
    // While a slider is dragged at large N, keep the last picture until the settings rest.
    // (The very first picture is started at once, also for one-shot renders.)
    if (N > kDebounceTokens && a_key_.head >= 0 && Clock::now() - pending_since_ < std::chrono::milliseconds(300)) return;
    try {
      next_ = empty_block_image(N, kMaxSide);
    } catch (const Error& e) {
      fail(e);
      return;
    }
    next_key_ = key;
    building_ = true;
    next_row_ = 0;
    next_ms_ = 0;
  }
  // One frame's share: bands of image rows until about kBandBudgetMs have gone. The GL work
  // already queued (the last frame's drawing, which a software rasterizer runs only when a
  // read-back forces it) is finished first, so that the bands are sized by their own cost.
  glFinish();
  try {
    const auto t0 = Clock::now();
    double spent = 0;
    while (next_row_ < next_.side && spent < kBandBudgetMs) {
      const int count = std::clamp(band_rows_, 1, next_.side - next_row_);
      const auto t = Clock::now();
      hand_made.pool_matrix_rows(key.head, static_cast<Pooling>(key.pooling), next_row_, count, next_);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      next_row_ += count;
      // The next band: as many rows as fit the budget at this band's pace.
      band_rows_ = std::clamp(static_cast<int>(kBandBudgetMs * count / std::max(ms, 0.01)), 1, next_.side);
      spent = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    next_ms_ += spent;
  } catch (const Error& e) {
    fail(e);
    return;
  }
  if (next_row_ < next_.side) return;  // more next frame
  a_.image = std::move(next_);
  ++a_.version;
  a_key_ = key;
  a_error_.clear();
  a_ms_ = next_ms_;
  building_ = false;
  a_fresh_ = true;
  count_empty_rows(hand_made.setup().mask, N, a_empty_rows_, a_first_empty_);
}

void MatrixView::update_structures(HandMadeSession& hand_made, int conv_side) {
  const PatchGrid& g = hand_made.grid();
  const int N = g.N();
  // fc: pure CPU math (no GL), on the scheduler; a new N replaces the job for the old one.
  if (fc_N_ != N)
    fc_job_.update(N, [&] {
      fc_error_.clear();
      scheduler_ = &hand_made.scheduler();
      scheduler_->submit<BlockImage>(
          "matrix:fc", [N](const std::atomic<bool>&) { return fc_structure_image(N, kMaxSide, kFcSeed); },
          [this, N](std::future<BlockImage> result) {
            try {
              fc_.image = result.get();
              ++fc_.version;
              fc_N_ = N;
            } catch (const std::exception& e) {
              fc_error_ = e.what();
            }
          });
    });
  // conv: O(N k²), computed at the size it is drawn so that its thin band is never skipped. With
  // the ResNet's conv1: its kernel (k = its size), one channel pair or the sum of |w| over all.
  const int cs = std::clamp(conv_side, 16, kMaxSide);
  const bool real = use_cnn_ && cnn_;
  const int k = real ? cnn_->stem.k : k_;
  conv_key_.update({g.cols, g.rows, k, cs, real ? static_cast<int>(cnn_->id) : 0, real ? cnn_out_ : 0, real ? cnn_in_ : 0}, [&] {
    conv_.image = conv_structure_image(g, k, real ? resnet_stem_kernel(*cnn_, cnn_out_, cnn_in_) : demo_kernel(k, kKernelSeed), cs);
    ++conv_.version;
  });
}

void MatrixView::update_cnn(AppState& state, HandMadeSession& hand_made) {
  const std::filesystem::path& want = state.cnn_model;
  if (!use_cnn_ || want.empty() || want == cnn_path_ || want == cnn_loading_) return;
  cnn_loading_ = want;
  cnn_error_.clear();
  scheduler_ = &hand_made.scheduler();
  scheduler_->submit<std::shared_ptr<const ResnetModel>>(
      "matrix:cnn", [want](const std::atomic<bool>& stop) { return std::make_shared<const ResnetModel>(open_cnn_model(want, &stop)); },
      [this, want](std::future<std::shared_ptr<const ResnetModel>> result) {
        cnn_loading_.clear();
        cnn_path_ = want;
        try {
          cnn_ = result.get();
          cnn_out_ = std::min(cnn_out_, cnn_->stem.out - 1);
          cnn_in_ = std::min(cnn_in_, cnn_->stem.in - 1);
        } catch (const std::exception& e) {
          cnn_.reset();
          cnn_error_ = e.what();
        }
      });
}

}  // namespace attnlab::app::matrix_view
