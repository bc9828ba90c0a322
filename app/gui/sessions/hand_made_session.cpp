#include "app/gui/sessions/hand_made_session.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/gpu/hand_made_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <span>

namespace attnlab::app {

/// Colours a head's row into the texture the main map draws: the GPU engine's colormap pass
/// (no read-back) or, for the CPU reference, apply_colormap and an upload.
class HeatmapPainter {
 public:
  virtual ~HeatmapPainter() = default;
  /// The main map of `head` for `query`; `generation` changes whenever the image or settings
  /// do. `rows` gives row `query` of every head on the CPU (waiting if need be): only a painter
  /// that colours on the CPU calls it.
  virtual ImTextureID paint(int query, int head, const HeatmapStyle& style, const ModelSetup& setup, unsigned generation,
                            const std::function<const RowSet&()>& rows) = 0;
  /// A pinned query's map (another query than the main one), kept per query until painted
  /// again. `rows` computes that query's rows on the CPU (only a CPU painter calls it).
  virtual ImTextureID paint_pinned(int query, int head, const HeatmapStyle& style, const ModelSetup& setup,
                                   const std::function<RowSet()>& rows) = 0;
  /// The largest weight of the row paint_pinned() drew last for `query`; nullopt while it is
  /// still on its way from the GPU (collect() fetches it once its fence has signalled).
  virtual std::optional<float> pinned_max(int query) const = 0;
  /// Each frame, before the views: what the GPU finished since (pinned maxima).
  virtual void collect() {}
  /// Drops the pinned maps of queries not in `keep`.
  virtual void keep_pinned(const std::vector<int>& keep) = 0;
};

namespace {

// The largest weight of a row (masked weights are exactly 0, so they never win).
float row_max(std::span<const float> row) {
  float m = 0;
  for (const float v : row) m = std::max(m, v);
  return m;
}

// Drops the entries of a per-query map whose query is not in `keep`.
template <class T>
void keep_only(std::map<int, T>& by_query, const std::vector<int>& keep) {
  std::erase_if(by_query, [&](const auto& e) { return std::find(keep.begin(), keep.end(), e.first) == keep.end(); });
}

class GpuPainter final : public HeatmapPainter {
 public:
  explicit GpuPainter(HandMadeGpuEngine& engine) : engine_(engine) {}
  ImTextureID paint(int query, int head, const HeatmapStyle& style, const ModelSetup&, unsigned,
                    const std::function<const RowSet&()>&) override {
    return GuiTexture::to_im(engine_.heatmap(query, head, style).id());  // usually the row pass latest_rows asked for
  }

  ImTextureID paint_pinned(int query, int head, const HeatmapStyle& style, const ModelSetup&,
                           const std::function<RowSet()>&) override {
    Pinned& p = pinned_[query];
    engine_.heatmap_into(query, head, style, p.texture, p.row);  // on the GPU, nothing read back
    p.fence = gl::Fence::now();
    p.max.reset();
    return GuiTexture::to_im(p.texture.id());
  }
  std::optional<float> pinned_max(int query) const override {
    const auto it = pinned_.find(query);
    return it == pinned_.end() ? std::nullopt : it->second.max;
  }
  void collect() override {
    for (auto& [query, p] : pinned_) {
      if (p.max || !p.fence.signalled()) continue;
      std::vector<float> row(p.row.bytes() / 4);
      p.row.download(row.data(), p.row.bytes());  // done on the GPU: a copy, no wait
      gl::count_fenced(1);
      p.max = row_max(row);
    }
  }
  void keep_pinned(const std::vector<int>& keep) override { keep_only(pinned_, keep); }

 private:
  HandMadeGpuEngine& engine_;
  struct Pinned {
    gl::Texture texture;
    gl::Buffer row;  // the head's row of weights, for its largest value
    gl::Fence fence;
    std::optional<float> max;
  };
  std::map<int, Pinned> pinned_;
};

class CpuPainter final : public HeatmapPainter {
 public:
  ImTextureID paint(int query, int head, const HeatmapStyle& style, const ModelSetup& setup, unsigned generation,
                    const std::function<const RowSet&()>& exact_rows) override {
    auto& key = keys_[static_cast<size_t>(head)];
    const Key want{generation, query, style};
    if (!(key == want)) {
      const RowSet& rows = exact_rows();
      std::vector<std::uint8_t> keep(static_cast<size_t>(rows.N));
      for (int j = 0; j < rows.N; ++j) keep[static_cast<size_t>(j)] = setup.mask.allowed(rows.query, j);
      const auto px = apply_colormap(rows.head(head), keep, style.colormap, style.normalization);
      textures_[static_cast<size_t>(head)].set(setup.grid.cols, setup.grid.rows, 4, px, false);
      key = want;
    }
    return textures_[static_cast<size_t>(head)].im();
  }

  ImTextureID paint_pinned(int query, int head, const HeatmapStyle& style, const ModelSetup& setup,
                           const std::function<RowSet()>& rows) override {
    const RowSet r = rows();
    std::vector<std::uint8_t> keep(static_cast<size_t>(r.N));
    for (int j = 0; j < r.N; ++j) keep[static_cast<size_t>(j)] = setup.mask.allowed(query, j);
    const auto px = apply_colormap(r.head(head), keep, style.colormap, style.normalization);
    auto& p = pinned_[query];
    p.first.set(setup.grid.cols, setup.grid.rows, 4, px, false);
    p.second = row_max(r.head(head));
    return p.first.im();
  }
  std::optional<float> pinned_max(int query) const override {
    const auto it = pinned_.find(query);
    return it == pinned_.end() ? std::nullopt : std::optional<float>(it->second.second);
  }
  void keep_pinned(const std::vector<int>& keep) override { keep_only(pinned_, keep); }

 private:
  std::map<int, std::pair<GuiTexture, float>> pinned_;
  std::array<GuiTexture, kHeadCount> textures_;
  struct Key {  // what a main-map texture shows
    unsigned generation = 0;
    int query = -1;
    HeatmapStyle style;
    bool operator==(const Key&) const = default;
  };
  std::array<Key, kHeadCount> keys_{};
};

}  // namespace

HandMadeSession::HandMadeSession(Scheduler& scheduler) : scheduler_(scheduler) {
  try {
    auto gpu = std::make_unique<GpuHandMade>();
    painter_ = std::make_unique<GpuPainter>(gpu->engine());
    model_ = std::move(gpu);
  } catch (const Error& e) {
    fallback_reason_ = e.what();
    model_ = make_reference_model();
    painter_ = std::make_unique<CpuPainter>();
  }
  name_ = model_->name();
}

HandMadeSession::~HandMadeSession() = default;

void HandMadeSession::set_image(const Image& image, const Settings& settings) {
  // The setup depends on the size and the settings only: a video's next frame keeps it.
  const bool same_setup = setup_ && image.width == image_.width && image.height == image_.height && settings == settings_;
  std::optional<ModelSetup> setup;
  if (!same_setup) setup.emplace(make_setup(image.width, image.height, settings));  // throws before any change
  model_->set_image(image, settings);
  if (setup) setup_.emplace(std::move(*setup));
  image_ = image;
  settings_ = settings;
  photo_.set_photo(image, true);
  ++generation_;
  requested_query_ = -1;  // other numbers: latest_rows reads them at once
}

void HandMadeSession::set_settings(const Settings& settings) {
  if (!has_image()) throw Error(_("no image loaded"));
  ModelSetup setup = make_setup(image_.width, image_.height, settings);  // throws before any change
  model_->set_settings(settings);
  setup_.emplace(std::move(setup));
  settings_ = settings;
  ++generation_;
  requested_query_ = -1;
}

void HandMadeSession::check_query(int query) const {
  if (!has_image()) throw Error(_("no image loaded"));
  if (query < 0 || query >= grid().N()) throw Error(text_format(_("query token %d is outside the grid"), query));
}

const RowSet& HandMadeSession::latest_rows(int query) {
  check_query(query);
  if (rows_.fresh({generation_, query})) return *rows_.last();
  const auto* held = rows_.key();
  if (!held || held->first != generation_) return rows_blocking(query);  // other image or settings: other numbers, at once
  if (requested_query_ != query) {
    model_->prepare_rows(query);
    requested_query_ = query;
  }
  return *rows_.last();  // the last query's, until this one's arrive
}

const RowSet& HandMadeSession::rows_blocking(int query) {
  check_query(query);
  return rows_.get({generation_, query}, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    RowSet rows = model_->rows(query);
    if (requested_query_ == query) requested_query_ = -1;  // asked for and now here
    row_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return rows;
  });
}

bool HandMadeSession::rows_pending() const {
  return requested_query_ >= 0;
}

void HandMadeSession::begin_frame() {
  painter_->collect();
  if (!rows_pending()) return;
  const int query = requested_query_;
  if (model_->rows_ready(query)) rows_blocking(query);  // the GPU is done: a copy, no wait
  else model_->prepare_rows(query);  // again, if another query's rows were asked for since (nothing when in flight)
}

RowSet HandMadeSession::rows_of(int query) {
  check_query(query);
  return model_->rows(query);
}

template <class F>
const Matrix& HandMadeSession::cached(const std::string& key, F&& compute) {
  if (!has_image()) throw Error(_("no image loaded"));
  return cache_[key].get(generation_, [&] { return Matrix(compute()); });
}

const Matrix& HandMadeSession::tokens() {
  return cached("tokens", [&] { return model_->tokens(); });
}

const HeadQKV& HandMadeSession::qkv(int head) {
  if (!has_image()) throw Error(_("no image loaded"));
  return qkv_cache_[head].get(generation_, [&] { return model_->qkv(head); });
}

const Matrix& HandMadeSession::output(int head) {
  return cached("output" + std::to_string(head), [&] { return model_->output(head); });
}

const Matrix& HandMadeSession::merged_output() {
  return cached("merged", [&] { return model_->merged_output(); });
}

const Matrix& HandMadeSession::matrix(int head) {
  // One A at a time: at N = 4096 each is 64 MiB.
  std::erase_if(cache_, [&](const auto& e) { return e.first.starts_with("matrix") && e.first != "matrix" + std::to_string(head); });
  return cached("matrix" + std::to_string(head), [&] { return model_->matrix(head); });
}

void HandMadeSession::pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image) {
  if (!has_image()) throw Error(_("no image loaded"));
  model_->pool_matrix_rows(head, pooling, first, count, image);
}

std::pair<std::vector<float>, std::vector<float>> HandMadeSession::row_for_token(int head, const RowVector& x) {
  if (!has_image()) throw Error(_("no image loaded"));
  return model_->row_for_token(head, x);
}

ImTextureID HandMadeSession::heatmap(int query, int head, const HeatmapStyle& style) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  check_query(query);
  return painter_->paint(query, head, style, *setup_, generation_, [&]() -> const RowSet& { return rows_blocking(query); });
}

ImTextureID HandMadeSession::pinned_map(int query, int head, const HeatmapStyle& style) {
  check_query(query);
  return pinned_maps_[query].get({generation_, head, style}, [&] {
    return painter_->paint_pinned(query, head, style, *setup_, [&] { return rows_of(query); });
  });
}

std::optional<float> HandMadeSession::pinned_map_max(int query) const { return painter_->pinned_max(query); }

void HandMadeSession::keep_pinned(const std::vector<int>& queries) {
  keep_only(pinned_maps_, queries);
  painter_->keep_pinned(queries);
}

bool HandMadeSession::pinned_pending() const {
  for (const auto& [query, e] : pinned_maps_)
    if (!painter_->pinned_max(query)) return true;
  return false;
}

ImTextureID HandMadeSession::mask_overlay(int query) {
  check_query(query);
  return mask_tex_.get({generation_, query}, [&](GuiTexture& texture) {
    const auto& g = grid();
    std::vector<std::uint8_t> px(static_cast<size_t>(g.N()) * 4, 0);
    for (int j = 0; j < g.N(); ++j)
      if (!setup_->mask.allowed(query, j)) px[static_cast<size_t>(j) * 4 + 3] = 255;
    texture.set(g.cols, g.rows, 4, px, false);
  }).im();
}

}  // namespace attnlab::app
