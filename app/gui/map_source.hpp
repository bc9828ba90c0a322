#pragma once
// An attention source as the map views draw it: the rows of a core AttentionSource, the photo
// under its maps, how a row becomes a texture, and the document's choice of layer, head, query
// and pinned queries for it. The views that show every head and the pinned queries
// (source_heads_view.cpp, source_pinned_view.cpp) draw a MapSource and never ask which kind it
// is: the chapter's hand-made heads (one layer, six heads, maps coloured on the GPU) and a
// loaded ViT (L layers × H heads, maps coloured from VitRun's rows) are two of them, and a
// new source is one more class here with no change to a view.
#include "app/gui/app_state.hpp"
#include "app/gui/ui_common.hpp"
#include "app/gui/views.hpp"
#include "core/attention.hpp"
#include "core/attention_source.hpp"

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

class HandMadeSession;
class VitSession;

/// What the main map shows of a source for the document's choice (MapSource::main_map).
struct MainMap {
  ImTextureID texture = nullptr;    ///< cols × rows, coloured with the document's colormap and normalization
  std::vector<float> values;        ///< N values in raster order, what the colours say (a_ij, or ||x||)
  std::vector<std::uint8_t> keep;   ///< N: 0 where the key is masked (left out of the scale); empty: all kept
  std::string value_name = "a_ij";  ///< the values' symbol, over the colour bar and in the tooltip
  bool explore = true;              ///< the pointer picks the query (false: a map that no query changes)
  double uniform = 0;               ///< a value the colour bar marks (1/N, for a nearly uniform row); 0: none
};

class MapSource {
 public:
  virtual ~MapSource() = default;

  /// False while there is nothing to draw (no image yet, no model run yet); the rest of the
  /// interface is only asked when true.
  virtual bool ready() const = 0;
  /// The patch grid; covered_w × covered_h is the part of the photo its maps lie over, in photo pixels.
  virtual SourceGrid grid() const = 0;
  virtual int layers() const = 0;
  virtual int heads() const = 0;
  /// "colour", "head 3", "mean of heads": a head (or a fusion of heads) in labels.
  virtual std::string head_label(HeadChoice head) const = 0;
  /// What a map of `layer`, `head` is, for its tooltip (the head's one-line summary, a ViT
  /// head's mean attention distance); may be empty.
  virtual std::string map_tooltip(int layer, int head) const = 0;
  /// The colour a head is drawn in elsewhere (a ViT's mask outlines and distance plot), for
  /// its label; nullopt: the text colour.
  virtual std::optional<ImU32> head_colour(int) const { return std::nullopt; }

  // --- the document's choice for this source
  virtual int layer() const = 0;        ///< the layer the main map shows, 0 … layers() − 1
  virtual HeadChoice head() const = 0;  ///< the head (or fusion of heads) the main map shows
  virtual int query() const = 0;        ///< the query token, 0 … T − 1 (prefix tokens first)
  /// True when the main map shows exactly `layer`, `head`'s row (not a fusion, rollout, …).
  virtual bool showing(int layer, int head) const = 0;
  virtual std::vector<Cell>& pinned() = 0;  ///< the pinned patch queries (col, row of the grid)
  /// A click on `layer`, `head`'s map: the main map shows it.
  virtual void choose(int layer, int head) = 0;
  /// A click on a pinned map: patch `cell` becomes the query and stays it (query_pinned).
  virtual void choose_query(Cell cell) = 0;

  // --- pictures
  /// The photo under the maps, its (0,0) at `origin`, `scale` screen pixels per photo pixel:
  /// the covered part (grid()), padding past the image black.
  virtual void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) = 0;
  /// The map of token `query`'s row in `layer` for `head` (cols × rows, the document's colormap
  /// and normalization, filtered as the document says). Throws Error outside the source.
  virtual ImTextureID map(int layer, HeadChoice head, int query) = 0;
  /// The largest weight of that row; nullopt while it is on its way (GPU rows arrive the frame
  /// after their map, once their fence has signalled: the window draws again while pending()).
  virtual std::optional<float> map_max(int layer, HeadChoice head, int query) = 0;
  /// The maps of pinned queries not in `queries` (tokens) may be forgotten.
  virtual void keep_pinned(const std::vector<int>& queries) = 0;
  /// Widgets the source adds under its heads' maps (the hand-made custom head's W_q and W_k).
  virtual void draw_head_settings() {}

  // --- the main map (source_map_view.cpp)
  /// What the main map says when !ready() ("No image loaded.").
  virtual std::string empty_text() const = 0;
  /// The main map for the document's choice: its texture and the numbers behind it.
  virtual MainMap main_map() = 0;
  /// The lines above the main map: what it shows (query, layer, head) and what it leaves out.
  virtual void draw_map_header(const MainMap& map) = 0;
  /// The pointer is over patch `cell` and the query is not pinned: the query may follow it.
  virtual void hover_query(Cell cell) = 0;
  /// A left button over patch `cell`: true when the source takes it (painting a mask; `down`:
  /// the button is held, `erase`: Shift) instead of the query.
  virtual bool paint(Cell, bool /*down*/, bool /*erase*/) { return false; }
  /// A patch was pinned (right click) or unpinned.
  virtual void pins_changed(bool /*added*/) {}
  /// Drawn over the heat map, under the grid and the outlines (masked keys, DINO-style masks),
  /// the photo's (0,0) at `origin`, `scale` screen pixels per photo pixel; `canvas` is the
  /// canvas's top left.
  virtual void draw_overlays(ImDrawList*, ImVec2 /*origin*/, float /*scale*/, ImVec2 /*canvas*/) {}
  /// The main map was drawn there (for what an export's sidecar says it drew).
  virtual void drew_map(const MainMap&, ImVec2 /*origin*/, float /*scale*/) {}
};

/// The chapter's hand-made heads (HandMadeSession's HandMadeModel): one layer, six heads, the query and
/// pinned cells of the document (AppState::query, main_head, pinned); maps coloured on the GPU
/// where the engine runs, largest weights read after their fence.
class HandMadeMapSource final : public MapSource {
 public:
  HandMadeMapSource(AppState& state, HandMadeSession& backend) : state_(state), backend_(backend) {}
  bool ready() const override;
  SourceGrid grid() const override;
  int layers() const override { return 1; }
  int heads() const override;
  std::string head_label(HeadChoice head) const override;
  std::string map_tooltip(int layer, int head) const override;
  int layer() const override { return 0; }
  HeadChoice head() const override { return HeadChoice{state_.main_head, HeadFusion::Mean}; }
  int query() const override;
  bool showing(int layer, int head) const override { return layer == 0 && head == state_.main_head; }
  std::vector<Cell>& pinned() override { return state_.pinned; }
  void choose(int layer, int head) override;
  void choose_query(Cell cell) override;
  void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) override;
  ImTextureID map(int layer, HeadChoice head, int query) override;
  std::optional<float> map_max(int layer, HeadChoice head, int query) override;
  void keep_pinned(const std::vector<int>& queries) override;
  void draw_head_settings() override;
  std::string empty_text() const override { return "No image loaded."; }
  MainMap main_map() override;
  void draw_map_header(const MainMap& map) override;
  void hover_query(Cell cell) override { state_.query = cell; }
  bool paint(Cell cell, bool down, bool erase) override;
  void draw_overlays(ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) override;

 private:
  AppState& state_;
  HandMadeSession& backend_;
  RowFlatness flat_;  // of the main map's row, from main_map() for its header
};

/// A loaded ViT (VitSession's VitRun): its layers and heads, the document's vit_* choices,
/// maps coloured from the source's rows (the forward pass ran on the CPU) and kept in the
/// session's textures.
class VitMapSource final : public MapSource {
 public:
  VitMapSource(AppState& state, VitSession& vit) : state_(state), vit_(vit) {}
  bool ready() const override;
  SourceGrid grid() const override;
  int layers() const override;
  int heads() const override;
  std::string head_label(HeadChoice head) const override;
  std::string map_tooltip(int layer, int head) const override;
  std::optional<ImU32> head_colour(int head) const override;
  int layer() const override;
  HeadChoice head() const override;
  int query() const override;
  bool showing(int layer, int head) const override;
  std::vector<Cell>& pinned() override { return state_.vit_pinned; }
  void choose(int layer, int head) override;
  void choose_query(Cell cell) override;
  void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) override;
  ImTextureID map(int layer, HeadChoice head, int query) override;
  std::optional<float> map_max(int layer, HeadChoice head, int query) override;
  void keep_pinned(const std::vector<int>& queries) override;
  std::string empty_text() const override { return "No model loaded: open one in the Model tab of the controls."; }
  MainMap main_map() override;
  void draw_map_header(const MainMap& map) override;
  void hover_query(Cell cell) override;
  void pins_changed(bool added) override;
  void draw_overlays(ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) override;
  void drew_map(const MainMap& map, ImVec2 origin, float scale) override;

 private:
  // One query's rows of A in one layer, every head (H × T, vit_attention_rows), computed once
  // per (layer, query) and model run: the L × H thumbnails, the main map and its prefix share
  // are read from them, so a frame that changes nothing computes no row and a new query costs
  // one row per layer and head, not one per map and frame.
  const std::vector<float>& attention_rows(int layer, int query);
  std::vector<float> cached_patch_row(int layer, HeadChoice head, int query);

  AppState& state_;
  VitSession& vit_;
  unsigned rows_generation_ = 0;                             // vit_.generation() the rows below are of
  std::map<std::pair<int, int>, std::vector<float>> rows_;  // (layer, query) → H × T weights
  float share_ = 0;                  // of the main map's row, the share that went to the prefix tokens
  std::vector<float> prefix_norms_;  // with the norms shown: the prefix tokens' (not on the grid)
};

/// Draws the map `heat()` over the source's photo into a box of `size` at the cursor (keeping the
/// covered part's aspect), `outlines` around those patches, a frame when `selected`; `heat` is
/// not called when the box is scrolled away. Returns true when clicked. `id` is the ImGui id
/// and the recorded widget's name.
bool source_thumbnail(const std::string& id, MapSource& source, const std::function<ImTextureID()>& heat, const AppState& state,
                      ImVec2 size, const std::vector<Cell>& outlines, bool selected);
/// The patch a query token is (col, row), or nullopt for a prefix token.
std::optional<Cell> query_cell(const SourceGrid& grid, int token);

/// The main map of a source: the photo, the map of the document's layer, head and query over
/// it, the source's overlays, the grid, the pinned patches and the query outlined, the colour
/// bar with the real values; hover explores, a click pins the query (again: lets it follow the
/// pointer), a right click pins a patch for comparison, the wheel zooms, middle-drag pans.
/// Fills `geometry` with where it drew.
void draw_source_map(AppState& state, MapSource& source, ViewGeometry& geometry);
/// Every head's map for the source's query, side by side: one layer in rows of two or three
/// with the heads' names and largest weights, several layers as a layers × heads table. A click
/// makes a map the main one; the source's head settings follow.
void draw_heads_grid(AppState& state, MapSource& source);
/// The maps of the source's pinned queries side by side (the main map's layer and head), each
/// with its largest weight; a click makes one the query. Pin the current query, or clear.
void draw_pinned_maps(AppState& state, MapSource& source);

}  // namespace attnlab::app
