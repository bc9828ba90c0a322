#pragma once
// The app's link to core: one HandMadeModel (core/hand_made/hand_made.hpp), the GPU engine when the
// window's context has compute shaders, otherwise the CPU reference (slower, same numbers),
// chosen once in the constructor; nothing here or in a view asks which. Caches what the views
// read, keyed by the generation it depends on, and owns the textures the views draw. The query
// is an argument of every call that depends on it (the document chooses it: hand_made_query,
// app_state.hpp); the session only remembers which query's rows it holds and which it asked for.
#include "app/gui/state/memo.hpp"
#include "app/gui/state/scheduler.hpp"
#include "app/gui/state/ui_common.hpp"
#include "core/hand_made/hand_made.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

namespace attnlab::app {

class HeatmapPainter;

class HandMadeSession {
 public:
  /// Uses the GPU engine if the current context allows it; else says why in fallback_reason().
  /// `scheduler`: the owner's one scheduler (the App's, the headless renderer's), which must
  /// outlive the session; the teaching views submit their jobs to it.
  explicit HandMadeSession(Scheduler& scheduler);
  ~HandMadeSession();
  HandMadeSession(const HandMadeSession&) = delete;
  HandMadeSession& operator=(const HandMadeSession&) = delete;

  /// "GPU: <renderer>" or "CPU reference".
  const std::string& name() const { return name_; }
  /// The one scheduler of the views' background work (scheduler.hpp), as the session's owner
  /// handed it over: the owner drains it each frame (before begin_frame) and stops it.
  Scheduler& scheduler() { return scheduler_; }
  /// "GPU" or "CPU reference", for a view's note of where its numbers came from.
  std::string short_name() const { return model_->short_name(); }
  /// Why the GPU path is not used (empty when it is).
  const std::string& fallback_reason() const { return fallback_reason_; }

  /// Replaces the image, keeping the settings. Throws Error (nothing changed) if they do not
  /// fit it (e.g. K larger than the image).
  void set_image(const Image& image, const Settings& settings);
  /// Applies settings; throws Error (nothing changed) if invalid for the image.
  void set_settings(const Settings& settings);

  bool has_image() const { return image_.width > 0; }
  const Image& image() const { return image_; }
  const Settings& settings() const { return settings_; }
  const ModelSetup& setup() const { return *setup_; }
  const PatchGrid& grid() const { return setup_->grid; }
  /// Bumped by every change of image or settings (not of the query, which is an argument):
  /// views cache on it, with the query where what they cache depends on it.
  unsigned generation() const { return generation_; }

  /// Row `query` of A for every head, for what the CPU shows of it (numbers, tooltips, the
  /// colour bar): when the rows held are another query's (same image and settings), those
  /// rows (latest_rows(q).query says which) while row `query` is computed; begin_frame()
  /// collects it the frame after, when the GPU has finished, so no frame waits on a read-back
  /// (the maps are coloured on the GPU). After a change of image or settings, the new rows at
  /// once. Throws Error for a query outside the grid or no image.
  const RowSet& latest_rows(int query);
  /// Row `query` for every head now, waiting for the GPU if need be (exports, one-shot renders).
  const RowSet& rows_blocking(int query);
  /// True while rows asked for by latest_rows() have not arrived: the window should draw another frame.
  bool rows_pending() const;
  /// At the start of every frame, before any view (after the owner drained the scheduler): the
  /// rows asked for in the last frame, if the GPU has them ready.
  void begin_frame();
  /// Row `query` for every head, not kept (for pinned comparisons).
  RowSet rows_of(int query);
  /// Milliseconds the last row pass took (including the read-back).
  double row_pass_ms() const { return row_ms_; }

  // What the teaching views read (cached until the image or settings change).
  /// The head input X = [T | P], N × D (TokenLayout, then the positional code).
  const Matrix& tokens();
  /// A head's Q, K (N × m') and V (N × 3).
  const HeadQKV& qkv(int head);
  /// T_out = A V of a head (eq. 26.21), N × 3.
  const Matrix& output(int head);
  /// The heads' outputs merged by W_MSA (eqs. 26.27–26.28), N × 3.
  const Matrix& merged_output();
  /// The full A of a head, N × N, for exporting it at full resolution (a view draws
  /// pool_matrix_rows instead). Throws Error when it is too large (HandMadeModel::max_matrix_bytes).
  const Matrix& matrix(int head);
  /// Image rows [first, first + count) of the pooled A of a head into `image`
  /// (HandMadeModel::pool_matrix_rows: image from empty_block_image(grid().N(), max_side));
  /// not cached, the caller keeps the image. Never N² values in memory.
  void pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image);
  /// Row of A for a token that is not in the image (question token): `x` is 1 × D like a row
  /// of tokens(). Returns weights and logits s/(τ√m'), N each, unmasked.
  std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x);

  /// Texture of a head's heat map of row `query` (cols × rows, masked keys transparent): the
  /// main map's (one texture per head; another query or style paints it again).
  ImTextureID heatmap(int query, int head, const HeatmapStyle& style);
  /// Heat map of a head's row for another query (pinned comparisons), coloured where the row
  /// is (on the GPU: nothing read back); cached per query until the image or settings change.
  /// Throws Error for a query outside the grid or no image.
  ImTextureID pinned_map(int query, int head, const HeatmapStyle& style);
  /// The largest kept weight of the row pinned_map() drew last for `query`; nullopt before,
  /// and until the GPU's copy of it has arrived (begin_frame fetches it after its fence).
  std::optional<float> pinned_map_max(int query) const;
  /// True while a pinned map's largest weight is on its way (the window should draw again).
  bool pinned_pending() const;
  /// Forgets the pinned maps of queries not in `queries` (unpinned patches).
  void keep_pinned(const std::vector<int>& queries);
  /// The photo (image_.width × image_.height), linear filtered.
  ImTextureID photo() const { return photo_.im(); }
  /// cols × rows: opaque black where the key is masked for `query`, transparent elsewhere.
  ImTextureID mask_overlay(int query);

 private:
  Scheduler& scheduler_;  // the owner's; jobs hold no reference into the hand-made session
  std::unique_ptr<HandMadeModel> model_;
  std::unique_ptr<HeatmapPainter> painter_;  // the main map's textures (hand_made.cpp)
  std::optional<ModelSetup> setup_;
  Image image_;
  Settings settings_;
  unsigned generation_ = 1;
  std::string name_, fallback_reason_;
  // The rows of one query (RowSet::query) and the generation they were computed under.
  Memo<std::pair<unsigned, int>, RowSet> rows_;
  int requested_query_ = -1;  // the query whose rows the model is computing (prepare_rows); -1: none
  double row_ms_ = 0;
  GuiTexture photo_;
  Memo<std::pair<unsigned, int>, GuiTexture> mask_tex_;  // keyed by the generation and query it shows
  // The painter's texture of each pinned query, keyed by the generation, head and style it shows.
  std::map<int, Memo<std::tuple<unsigned, int, HeatmapStyle>, ImTextureID>> pinned_maps_;
  // Read-backs for the teaching views, each keyed by the generation it was read under.
  std::map<std::string, Memo<unsigned, Matrix>> cache_;
  std::map<int, Memo<unsigned, HeadQKV>> qkv_cache_;
  void check_query(int query) const;  // throws Error with no image or a query outside the grid
  template <class F>
  const Matrix& cached(const std::string& key, F&& compute);
};

}  // namespace attnlab::app
