#pragma once
// Compare (View → Compare, issue 48, SPEC §12): a second model B beside the ViT's map in the
// window, on the same image, its layer, head and query following the ViT's (A's). The window's
// pair and `attnlab render --model A --compare B` share the matching (matched_choice) and the
// sidecar's "compare" entry, so that `render --from` redraws an export of the pair.
#include "app/commands/source_choice.hpp"
#include "app/gui/maps/map_source.hpp"
#include "app/gui/sessions/hand_made_session.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "app/gui/state/app_state.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace attnlab::app {

/// Compare's B (the document's compare.model, the command line's --compare) naming the chapter's
/// hand-made heads instead of a model file.
inline constexpr const char* kCompareHandMade = "hand-made";

/// Where a ViT's input sits on `photo` (CompareSide): its choice's shape, its patch P and the
/// input pixels per photo pixel of its resize (`resize` the short side; 0: the model's trained
/// size), for matched_choice.
CompareSide compare_side(const VitRun& run, int resize, const Image& photo);
/// The hand-made heads' side: one layer, six heads that do not fuse, no prefix token, the grid
/// of patches of K photo pixels (scale 1).
CompareSide compare_side(const PatchGrid& hand_made);

/// What the hand-made heads' map drew in a Compare half, for the sidecar (the hand_made_drawn
/// entry): the query token, the head, the grid (no prefix), where patch (0,0)'s corner lies and
/// a patch's size in window pixels, and the row's N weights the colours say ("values_of": the
/// query they are of, the last one's for a frame while the new query's are computed).
nlohmann::json hand_made_drawn(const ViewGeometry& geometry, HandMadeSession& hand_made, const SourceChoice& choice);

/// A model's name for Compare's labels: a checkpoint folder's name (or the folder of a file named
/// model.safetensors, as Hugging Face folders have it), else the file's name.
std::string compared_model_name(const std::filesystem::path& path);

/// What a sidecar says of one model's drawing: its file, SHA-256, and what its views drew
/// (vit_drawn, cka_drawn, high_norm_drawn, those not null in `state`'s report).
nlohmann::json drawn_entries(const AppState& state, const VitSession& vit);

/// The sidecar's "compare" entry for side B, under the document's own "compare" key (its
/// fields model, match_layers and one_scale, which apply_json reads back): B's drawn_entries,
/// its model path, its choice as matched, how layers were matched, one scale
/// or not (`b_state`'s document, B's copy of A's), and the half's width in pixels. `render
/// --from` reads it back (read_compare_entry).
nlohmann::json compare_entry(const AppState& b_state, const VitSession& b, int width);

/// Model B of the window's Compare: its session (jobs under "vit:compare"), its map source, and
/// its copy of the document, whose choice follows A's every frame (a click or key on B's half
/// moves A's, so both). Errors come back in one line each through poll(); A is never touched
/// by them. B may be the hand-made heads (compare.model "hand-made"): the window's own
/// hand-made session on B's copy of the document, with B's own choice (the Hand-made tab's
/// stays as it was).
class VitCompare {
 public:
  explicit VitCompare(Scheduler& scheduler) : vit_(scheduler, "vit:compare"), map_(state_, vit_) { map_.set_compact(true); }
  VitCompare(const VitCompare&) = delete;
  VitCompare& operator=(const VitCompare&) = delete;

  /// Keeps B on `a.compare_model` with `image`, the image A runs on, whose number `serial` the
  /// caller bumps whenever A is run on another image or input size: opens B when the path
  /// changes, runs it again on a new serial once its last job is done, forgets it when the path
  /// is empty.
  void follow(const AppState& a, const Image& image, unsigned serial);
  /// B's load or run error since the last call ("cannot open model B: ..."); the path that
  /// failed is kept, so that it is not tried again every frame.
  std::optional<std::string> poll();
  bool busy() const { return vit_.busy(); }
  /// B's run, or nullptr while it loads (or when Compare is off, or B is the hand-made heads).
  const VitRun* run() const { return opened_.empty() || hand_made() ? nullptr : vit_.run(); }
  /// True when B is the hand-made heads.
  bool hand_made() const { return opened_ == kCompareHandMade; }
  const VitSession& session() const { return vit_; }
  /// B's choice as last drawn (matched to A's).
  const SourceChoice& choice() const { return hand_made() ? state_.hand_made : state_.vit; }

  /// Draws B's main map into the current region: the document as A's (`a`), B's choice
  /// matched_choice of A's on `photo`; B's own hover, click or key moves A's choice. Forwards a
  /// redraw B's view asks for to `a`. Fills report() with B's sidecar entry. `bar`: where B's
  /// colour bar goes (draw_source_map). `hand_made` is the window's hand-made session, on the
  /// photo A runs on (B's when B is the hand-made heads).
  void draw(AppState& a, const VitRun& a_run, HandMadeSession& hand_made, ColourBarPlace bar);
  /// The sidecar's "compare" entry of the last draw(); null when B was not drawn.
  const nlohmann::json& report() const { return report_; }
  /// B's map source (Compare's one scale sets its range and reads its own).
  VitMapSource& map() { return map_; }
  /// Where B's map was drawn in the last draw() (invalid when it was not).
  const ViewGeometry& geometry() const { return geometry_; }
  void clear_report() { report_ = nullptr; }

 private:
  void draw_hand_made(AppState& a, const VitRun& a_run, HandMadeSession& hand_made, ColourBarPlace bar, float width);
  // B's choice `b` (in state_) for this frame, from `b_before` and A's; `map` drawn; a pointer
  // on B's half moves A's query.
  void match_and_draw(AppState& a, SourceChoice& b, const SourceChoice& b_before, const CompareSide& side_a, const CompareSide& side_b,
                      MapSource& map, ColourBarPlace bar);

  AppState state_;
  VitSession vit_;
  VitMapSource map_;
  ViewGeometry geometry_;
  std::filesystem::path opened_;  // the path B was opened from; empty: none
  std::optional<SourceChoice> a_from_b_;  // A's choice as B's pointer last set it (match_and_draw)
  unsigned serial_ = 0;           // the image serial B last ran on
  nlohmann::json report_;
};

/// Compare's one colour scale: the union of the two maps' own ranges (lowest of the lows,
/// highest of the highs; SPEC §12).
ValueRange joined_range(ValueRange a, ValueRange b);

/// The View → Compare window's contents: model B by path or from the recent models, how layers
/// are matched, one colour scale or one each, swap A and B (S), stop comparing. `a` is the ViT's session (model A); without a
/// model A it says to open one first. A path is taken as typed: a bad one comes back from
/// VitCompare::poll() as a banner, and Compare is off again.
void draw_compare_panel(AppState& state, const VitSession& a, const VitCompare& compare);

/// Asks for models A and B to be swapped (the S key, the Compare window's button): A opens B's
/// path with B's choice (the same place on the photo), B opens A's. Nothing happens unless both
/// are set.
void swap_compared_models(AppState& state);

}  // namespace attnlab::app
