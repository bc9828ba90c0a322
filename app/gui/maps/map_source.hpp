#pragma once
// An attention source as the map views draw it: the rows of a core AttentionSource, the photo
// under its maps, how a row becomes a texture, and the document's choice (SourceChoice: layer,
// head, query, pins) for it. The views that show every head and the pinned queries
// (source_heads_view.cpp, source_pinned_view.cpp) draw a MapSource and never ask which kind it
// is: the chapter's hand-made heads (one layer, six heads, maps coloured on the GPU) and a
// loaded ViT (L layers × H heads, maps coloured from VitRun's rows) are two of them, and a
// new source is one more class here with no change to a view.
#include "app/gui/state/app_state.hpp"
#include "app/gui/state/source_choice.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/maps/map_pictures.hpp"
#include "core/hand_made/attention.hpp"
#include "core/vit/attention_source.hpp"

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

/// What the main map shows of a source for a choice (MapSource::main_map), and the facts its
/// header and an export's sidecar say about it: everything they need travels here.
struct MainMap {
  ImTextureID texture = nullptr;    ///< cols × rows, coloured with the document's colormap and normalization
  std::vector<float> values;        ///< N values in raster order, what the colours say (a_ij, or ||x||)
  std::vector<std::uint8_t> keep;   ///< N: 0 where the key is masked (left out of the scale); empty: all kept
  std::string value_name = "a_ij";  ///< the values' symbol, over the colour bar and in the tooltip
  bool explore = true;              ///< the pointer picks the query (false: a map that no query changes)
  double uniform = 0;               ///< a value the colour bar marks (1/N, for a nearly uniform row); 0: none
  /// The scale the texture and the colour bar use when not the values' own (Compare's one scale
  /// for both maps); nullopt: normalization_range of the kept values.
  std::optional<ValueRange> range;
  // --- what it is: the choice resolved against the source
  int layer = 0;                    ///< 0 … layers − 1
  HeadChoice head;                  ///< the head, or the fusion of heads
  int query = 0;                    ///< the query token, 0 … T − 1 (prefix tokens first)
  std::string shows = "row";        ///< "row" (of A), or what else the source draws ("rollout", "norms", "relevance")
  std::string note;                 ///< what the source says of it beyond the legend ("computing the relevance …")
  // --- facts for the header (each source fills those it has)
  RowFlatness flat;                 ///< of the row: how nearly uniform (the hand-made heads' note)
  bool row_empty = false;           ///< every key masked: the row is 0
  float prefix_share = 0;           ///< the share of the row that went to the prefix tokens (not on the grid)
  std::vector<float> prefix_norms;  ///< with the norms shown: the prefix tokens' (not on the grid)
};

/// What a source is, before anything is drawn from it.
struct SourceInfo {
  bool ready = false;      ///< false while there is nothing to draw (no image, no model run yet)
  std::string empty_text;  ///< what the main map says while not ready ("No image loaded.")
  SourceGrid grid;         ///< the patch grid; covered_w × covered_h: the part of the photo its maps lie over
  int layers = 0, heads = 0;
  /// The query token the source's maps are of in this frame, 0 … T − 1: its choice's, as the
  /// source has taken it (the hand-made heads take a new query at the frame's start, so a hover
  /// later in the frame shows in the next one).
  int query = 0;
};

/// A head's words and colour in labels.
struct HeadInfo {
  std::string label;    ///< "colour", "head 3", "mean of heads"
  std::string tooltip;  ///< what the head is (a hand-made head's summary, a ViT head's mean distance); may be empty
  std::optional<ImU32> colour;  ///< the colour it is drawn in elsewhere (a ViT's mask outlines); nullopt: the text's
  bool shown = false;   ///< the main map shows exactly this layer's head's row (not a fusion, rollout, …)
};

/// One map of a source: its texture and its largest weight.
struct SourceMap {
  ImTextureID texture = nullptr;
  /// nullopt while it is on its way (GPU rows arrive the frame after their map, once their fence
  /// has signalled: the window draws again while pending()).
  std::optional<float> max;
};

/// What a view changed in the choice, for a source that follows up (the ViT: its plain rows
/// again after a map was chosen, its pinned view's tab after a pin).
enum class ChoiceChange { MapChosen, PinAdded };

/// An attention source as the map views draw it. The data a view draws: info(), the document's
/// choice for it (views read and write it directly), head_info(), draw_photo(), map(),
/// main_map(); and what the source adds: its header lines, its overlays, painting, the widgets
/// under its heads. 12 methods.
class MapSource {
 public:
  virtual ~MapSource() = default;

  // --- the data a view draws
  /// Whether there is anything to draw, the grid, layers and heads; the rest is only asked when ready.
  virtual SourceInfo info() const = 0;
  /// The document's choice for this source: layer, head, query, pins (Document::hand_made, ::vit).
  virtual SourceChoice& choice() = 0;
  /// Head `head` (or a fusion) of `layer` in words and colour.
  virtual HeadInfo head_info(int layer, HeadChoice head) const = 0;
  /// The photo under the maps, its (0,0) at `origin`, `scale` screen pixels per photo pixel:
  /// the covered part (info().grid), padding past the image black.
  virtual void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) = 0;
  /// The map of token `query`'s row in `layer` for `head` (cols × rows, the document's colormap
  /// and normalization, filtered as the document says) and its largest weight. Throws Error
  /// outside the source.
  virtual SourceMap map(int layer, HeadChoice head, int query) = 0;
  /// The maps of pinned queries not in `queries` (tokens) may be forgotten.
  virtual void keep_pinned(const std::vector<int>& queries) = 0;
  /// The main map for `choice`: its texture, the numbers behind it and the facts its header shows.
  virtual MainMap main_map(const SourceChoice& choice) = 0;

  // --- what the source adds
  /// The lines above the main map: what it shows (query, layer, head) and what it leaves out.
  virtual void draw_map_header(const MainMap& map) = 0;
  /// Drawn over the heat map, under the grid and the outlines (masked keys, DINO-style masks),
  /// the photo's (0,0) at `origin`, `scale` screen pixels per photo pixel; `canvas` is the
  /// canvas's top left. A source may note there what it drew (an export's sidecar).
  virtual void draw_overlays(const MainMap&, ImDrawList*, ImVec2 /*origin*/, float /*scale*/, ImVec2 /*canvas*/) {}
  /// A left button over patch `cell`: true when the source takes it (painting a mask; `down`:
  /// the button is held, `erase`: Shift) instead of the query.
  virtual bool paint(Cell, bool /*down*/, bool /*erase*/) { return false; }
  /// Widgets the source adds under its heads' maps (the hand-made custom head's W_q and W_k).
  virtual void draw_head_settings() {}
  /// A view changed the choice (a map chosen, a pin added).
  virtual void changed(ChoiceChange) {}
};

/// The chapter's hand-made heads (HandMadeSession's HandMadeModel): one layer, six heads, the
/// document's hand_made choice; maps coloured on the GPU where the engine runs, largest weights
/// read after their fence.
class HandMadeMapSource final : public MapSource {
 public:
  HandMadeMapSource(AppState& state, HandMadeSession& hand_made) : state_(state), hand_made_(hand_made) {}
  SourceInfo info() const override;
  SourceChoice& choice() override { return state_.hand_made; }
  HeadInfo head_info(int layer, HeadChoice head) const override;
  void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) override;
  SourceMap map(int layer, HeadChoice head, int query) override;
  void keep_pinned(const std::vector<int>& queries) override;
  MainMap main_map(const SourceChoice& choice) override;
  void draw_map_header(const MainMap& map) override;
  void draw_overlays(const MainMap& map, ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) override;
  bool paint(Cell cell, bool down, bool erase) override;
  void draw_head_settings() override;

 private:
  AppState& state_;
  HandMadeSession& hand_made_;
};

/// A loaded ViT (VitSession's VitRun): its layers and heads, the document's vit choice, maps
/// coloured from the source's rows (the forward pass ran on the CPU) and kept in the session's
/// textures.
/// The same class shows the ViT being trained (the Train tab): `which` says whose choice it reads
/// (Document::vit or ::train) and where it records what its main map drew (FrameReport's
/// vit_drawn or train_drawn); rollout, norms and masks are the ViT panel's switches for both.
class VitMapSource final : public MapSource {
 public:
  VitMapSource(AppState& state, VitSession& vit, ShownSource which = ShownSource::Vit) : state_(state), vit_(vit), which_(which) {}
  SourceInfo info() const override;
  SourceChoice& choice() override { return which_ == ShownSource::Train ? state_.train : state_.vit; }
  const SourceChoice& choice() const { return which_ == ShownSource::Train ? state_.train : state_.vit; }
  HeadInfo head_info(int layer, HeadChoice head) const override;
  void draw_photo(ImDrawList* dl, ImVec2 origin, float scale) override;
  SourceMap map(int layer, HeadChoice head, int query) override;
  void keep_pinned(const std::vector<int>& queries) override;
  MainMap main_map(const SourceChoice& choice) override;
  void draw_map_header(const MainMap& map) override;
  void draw_overlays(const MainMap& map, ImDrawList* dl, ImVec2 origin, float scale, ImVec2 canvas) override;
  void changed(ChoiceChange what) override;
  /// A line the header shows in the model line's place (the Train tab before Start: the maps are
  /// the untrained model's, press Start), in the note's colour; empty: the model line.
  void set_note(std::string note) { note_ = std::move(note); }
  /// Compare's halves (vit_compare.hpp): the header is only what the map shows (layer, head,
  /// query), wrapped; the row's numbers and the model's line are left out (the half's label names
  /// the model), so that two maps keep their room on a projector.
  void set_compact(bool compact) { compact_ = compact; }
  /// Compare's one colour scale: the main map's texture and colour bar span `range` instead of
  /// the values' own (nullopt: their own again).
  void set_range(std::optional<ValueRange> range) { range_ = range; }
  /// The values' own range (the document's normalization over the kept values) of the last
  /// main_map(): what Compare joins into one scale.
  ValueRange own_range() const { return own_range_; }
  /// The values' symbol of the last main_map() (a_ij, or ||x|| with the norms shown): what
  /// Compare's one bar under both maps is labelled.
  const std::string& value_name() const { return value_name_; }

 private:
  // One query's rows of A in one layer, every head (H × T, vit_attention_rows), computed once
  // per (layer, query) and model run: the L × H thumbnails, the main map and its prefix share
  // are read from them, so a frame that changes nothing computes no row and a new query costs
  // one row per layer and head, not one per map and frame.
  const std::vector<float>& attention_rows(int layer, int query);
  std::vector<float> cached_patch_row(int layer, HeadChoice head, int query);

  AppState& state_;
  VitSession& vit_;
  ShownSource which_;
  std::string note_;
  bool compact_ = false;
  std::optional<ValueRange> range_;
  ValueRange own_range_;
  std::string value_name_ = "a_ij";
  unsigned rows_generation_ = 0;                             // vit_.generation() the rows below are of
  std::map<std::pair<int, int>, std::vector<float>> rows_;  // (layer, query) → H × T weights
};

/// Draws the map `heat()` over the source's photo into a box of `size` at the cursor (keeping the
/// covered part's aspect), `outlines` around those patches, a frame when `selected`; `heat` is
/// not called when the box is scrolled away. Returns true when clicked. `id` is the ImGui id
/// and the recorded widget's name.
bool source_thumbnail(const std::string& id, MapSource& source, const std::function<ImTextureID()>& heat, const AppState& state,
                      ImVec2 size, const std::vector<Cell>& outlines, bool selected);
/// The patch a query token is (col, row), or nullopt for a prefix token.
std::optional<Cell> query_cell(const SourceGrid& grid, int token);

/// The main map of a source: the photo, the map of the source's choice (layer, head, query) over
/// it, the source's overlays, the grid, the pinned patches and the query outlined, the colour
/// bar with the real values; hover explores, a click pins the query (again: lets it follow the
/// pointer), a right click pins a patch for comparison, the wheel zooms, middle-drag pans.
/// Fills `geometry` with where it drew. `bar` says where the colour bar goes: right of the map
/// (colour_bar), under it (colour_bar_below), or nowhere (a map whose scale another map's bar
/// shows: Compare's one scale).
enum class ColourBarPlace { Right, Below, None };
void draw_source_map(AppState& state, MapSource& source, ViewGeometry& geometry, ColourBarPlace bar = ColourBarPlace::Right);
/// Every head's map for the source's query, side by side: one layer in rows of two or three
/// with the heads' names and largest weights, several layers as a layers × heads table. A click
/// makes a map the main one; the source's head settings follow.
void draw_heads_grid(AppState& state, MapSource& source);
/// The maps of the source's pinned queries side by side (the main map's layer and head), each
/// with its largest weight; a click makes one the query. Pin the current query, or clear.
void draw_pinned_maps(AppState& state, MapSource& source);

}  // namespace attnlab::app
