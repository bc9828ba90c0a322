#include "app/gui/backend.hpp"

#include "core/error.hpp"
#include "core/gpu/context.hpp"

#include <chrono>

namespace attnlab::app {

Backend::Backend() {
  try {
    const GlInfo info = check_compute_support();
    engine_ = std::make_unique<AttentionEngine>();
    name_ = "GPU: " + info.renderer;
  } catch (const Error& e) {
    engine_.reset();
    fallback_reason_ = e.what();
    name_ = "CPU reference";
  }
}

void Backend::set_image(const Image& image, const Settings& settings) {
  ModelSetup setup = make_setup(image.width, image.height, settings);  // throws before any change
  if (engine_) {
    engine_->set_settings(settings);  // validated above against this image's size
    engine_->set_image(image);
  } else {
    reference_.emplace(image, settings);
  }
  setup_.emplace(std::move(setup));
  image_ = image;
  settings_ = settings;
  std::vector<std::uint8_t> px(image.rgb.size());
  for (size_t n = 0; n < px.size(); ++n) px[n] = static_cast<std::uint8_t>(std::lround(image.rgb[n] * 255.0f));
  photo_.set(image.width, image.height, 3, px, true);
  query_ = std::min(query_, setup_->grid.N() - 1);
  if (engine_) engine_->set_query(query_);
  cpu_rows_valid_ = false;
  ++generation_;
  ++settings_generation_;
}

void Backend::set_settings(const Settings& settings) {
  if (!has_image()) throw Error("no image loaded");
  ModelSetup setup = make_setup(image_.width, image_.height, settings);  // throws before any change
  if (engine_) {
    engine_->set_settings(settings);
  } else {
    reference_.emplace(image_, settings);
  }
  setup_.emplace(std::move(setup));
  settings_ = settings;
  query_ = std::clamp(query_, 0, setup_->grid.N() - 1);
  if (engine_) engine_->set_query(query_);
  cpu_rows_valid_ = false;
  ++generation_;
  ++settings_generation_;
}

void Backend::set_query(int i) {
  if (!has_image()) throw Error("no image loaded");
  if (i < 0 || i >= grid().N()) throw Error("query token " + std::to_string(i) + " is outside the grid");
  if (i == query_) return;
  if (engine_) engine_->set_query(i);
  query_ = i;
  cpu_rows_valid_ = false;
  ++generation_;
}

const RowSet& Backend::rows() {
  if (engine_) {
    const auto t0 = std::chrono::steady_clock::now();
    const unsigned before = static_cast<unsigned>(engine_->counts().row);
    const RowSet& r = engine_->rows();
    if (static_cast<unsigned>(engine_->counts().row) != before)
      row_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  if (!cpu_rows_valid_) {
    const auto t0 = std::chrono::steady_clock::now();
    cpu_rows_ = rows_for(query_);
    cpu_rows_valid_ = true;
    row_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return cpu_rows_;
}

RowSet Backend::rows_for(int query) {
  if (engine_) {
    const int keep = engine_->query();
    engine_->set_query(query);
    RowSet r = engine_->rows();
    engine_->set_query(keep);
    return r;
  }
  RowSet r;
  r.query = query;
  r.N = grid().N();
  r.weights.resize(static_cast<size_t>(kHeadCount) * r.N);
  r.logits.resize(r.weights.size());
  for (int h = 0; h < kHeadCount; ++h) {
    const RowResult row = reference_->row(h, query);
    std::copy(row.weights.data(), row.weights.data() + r.N, r.weights.begin() + static_cast<std::ptrdiff_t>(h) * r.N);
    std::copy(row.logits.data(), row.logits.data() + r.N, r.logits.begin() + static_cast<std::ptrdiff_t>(h) * r.N);
    r.empty[h] = row.empty;
  }
  return r;
}

template <class F>
const Matrix& Backend::cached(const std::string& key, F&& compute) {
  if (!has_image()) throw Error("no image loaded");
  Cached& c = cache_[key];
  if (c.generation != settings_generation_) {
    c.value = compute();
    c.generation = settings_generation_;
  }
  return c.value;
}

const Matrix& Backend::tokens() {
  return cached("tokens", [&] { return engine_ ? engine_->tokens() : reference_->X(); });
}

const HeadQKV& Backend::qkv(int head) {
  if (!has_image()) throw Error("no image loaded");
  auto& c = qkv_cache_[head];
  if (c.first != settings_generation_) {
    c.second = engine_ ? engine_->qkv(head) : reference_->qkv(head);
    c.first = settings_generation_;
  }
  return c.second;
}

const Matrix& Backend::output(int head) {
  return cached("output" + std::to_string(head), [&] { return engine_ ? engine_->output(head) : reference_->output(head); });
}

const Matrix& Backend::merged_output() {
  return cached("merged", [&] { return engine_ ? engine_->merged_output() : reference_->merged_output(); });
}

const Matrix& Backend::matrix(int head) {
  // One A at a time: at N = 4096 each is 64 MiB.
  std::erase_if(cache_, [&](const auto& e) { return e.first.starts_with("matrix") && e.first != "matrix" + std::to_string(head); });
  return cached("matrix" + std::to_string(head), [&] {
    if (engine_) return engine_->matrix(head);
    const size_t bytes = static_cast<size_t>(grid().N()) * grid().N() * 4;
    if (bytes > AttentionEngine::max_matrix_bytes())
      throw Error("the full attention matrix needs " + std::to_string(bytes >> 20) + " MiB; choose a larger patch size");
    return reference_->matrix(head);
  });
}

std::pair<std::vector<float>, std::vector<float>> Backend::row_for_token(int head, const RowVector& x) {
  if (!has_image()) throw Error("no image loaded");
  if (engine_) return engine_->row_for_token(head, x);
  const Matrix Wq = query_key_weights(setup_->heads[head].W_q, settings_.pos, static_cast<int>(setup_->P.cols()));
  if (x.size() != Wq.cols()) throw Error("a question token needs " + std::to_string(Wq.cols()) + " values");
  const RowResult r = attention_row_for(x * Wq.transpose(), reference_->qkv(head).K, settings_.temperature);
  return {std::vector<float>(r.weights.data(), r.weights.data() + r.weights.size()),
          std::vector<float>(r.logits.data(), r.logits.data() + r.logits.size())};
}

ImTextureID Backend::heatmap(int head, const HeatmapStyle& style) {
  if (engine_) return GuiTexture::to_im(engine_->heatmap(head, style).id());
  auto& key = cpu_heatmap_key_[head];
  if (key.first != generation_ || !(key.second == style)) {
    const RowSet& r = rows();
    const auto& keep_mask = setup_->mask;
    std::vector<std::uint8_t> keep(static_cast<size_t>(r.N));
    for (int j = 0; j < r.N; ++j) keep[j] = keep_mask.allowed(query_, j);
    const auto px = apply_colormap(r.head(head), keep, style.colormap, style.normalization);
    cpu_heatmaps_[head].set(grid().cols, grid().rows, 4, px, false);
    key = {generation_, style};
  }
  return cpu_heatmaps_[head].im();
}

ImTextureID Backend::heatmap_for(int query, int head, const HeatmapStyle& style) {
  PinnedMap& e = pinned_maps_[query];
  if (e.generation != settings_generation_ || e.head != head || !(e.style == style)) {
    const RowSet r = rows_for(query);
    std::vector<std::uint8_t> keep(static_cast<size_t>(r.N));
    const auto row = r.head(head);
    e.max = 0;
    for (int j = 0; j < r.N; ++j) {
      keep[j] = setup_->mask.allowed(query, j);
      if (keep[j]) e.max = std::max(e.max, row[static_cast<size_t>(j)]);
    }
    const auto px = apply_colormap(row, keep, style.colormap, style.normalization);
    e.texture.set(grid().cols, grid().rows, 4, px, false);
    e.generation = settings_generation_;
    e.head = head;
    e.style = style;
  }
  return e.texture.im();
}

ImTextureID Backend::mask_overlay() {
  if (mask_generation_ != generation_) {
    const auto& g = grid();
    std::vector<std::uint8_t> px(static_cast<size_t>(g.N()) * 4, 0);
    for (int j = 0; j < g.N(); ++j)
      if (!setup_->mask.allowed(query_, j)) px[static_cast<size_t>(j) * 4 + 3] = 255;
    mask_tex_.set(g.cols, g.rows, 4, px, false);
    mask_generation_ = generation_;
  }
  return mask_tex_.im();
}

}  // namespace attnlab::app
