#pragma once
// The document: every setting a sidecar JSON saves and `render --from` restores (and the app
// remembers between runs), with ONE field table (document.cpp, for_each_field) that gives each
// setting its JSON path, its command-line flag and the commands that take it, and how a flag's
// text is parsed. to_json, apply_json and parse_document_flags all go through that table; the
// defaults are the members' initializers below (and Settings' in core/settings.hpp).
// No window: this is attnlab_commands; the app's AppState (app/gui) is a Document plus its UI state.
#include "core/colormap.hpp"
#include "core/settings.hpp"
#include "core/vit.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::app {

/// A patch in grid coordinates (col, row), 0-based from the top left.
struct Cell {
  int col = 0, row = 0;
  bool operator==(const Cell&) const = default;
};

/// The fused choices of Document::vit_head.
inline constexpr int kVitHeadMean = -1, kVitHeadMax = -2, kVitHeadMin = -3;

struct Document {
  // --- the attention math (core Settings) and the query
  Settings attention;
  Cell query{12, 8};
  bool query_pinned = false;  ///< false: the query follows the mouse over the image
  int main_head = 0;          ///< HeadKind shown in the image view
  std::vector<Cell> pinned;   ///< queries compared side by side (pinned view)

  // --- display
  Colormap colormap = kDefaultColormap;
  Normalization normalization = Normalization::MinMax;
  float opacity = kDefaultOverlayOpacity;  ///< heat map over the photo
  bool show_grid = true;
  bool show_mask = true;   ///< darken the keys the query may not attend to
  float zoom = 1.0f;       ///< 1 = fit the view
  std::array<float, 2> pan{0, 0};  ///< image-view offset in screen pixels

  // --- classroom
  float ui_scale = 1.0f;
  bool presentation = false;
  bool show_controls = true, show_heads = true, show_pinned = true, show_images = true, show_diagnostics = false;

  // --- teaching views (by TeachingView::name) and the guided tour
  std::map<std::string, bool> open_views;
  int tour_step = -1;  ///< index into the teaching views, -1 = no tour

  // --- a real ViT (the loaded checkpoint's layers and heads as the attention source)
  bool vit_source = false;          ///< draw the loaded ViT's attention instead of the hand-made heads
  std::filesystem::path model_path;  ///< the checkpoint (a .safetensors file or a model folder)
  int vit_layer = -1;               ///< 0-based block; -1: the last one
  int vit_head = kVitHeadMean;      ///< ≥ 0: one head; kVitHeadMean/Max/Min: fused over heads
  int vit_token = 0;                ///< query token: 0 CLS, 1… registers; -1: the patch vit_cell
  Cell vit_cell{0, 0};              ///< the patch query on the ViT's grid
  std::vector<Cell> vit_pinned;     ///< patch queries compared side by side (ViT grid)
  int vit_tab = 0;                  ///< the ViT's lower view: 0 distance, 1 pinned queries, 2 attention matrix, 3 step by step
  bool vit_rollout = false;         ///< the main map shows attention rollout up to vit_layer
  bool vit_masks = false;           ///< DINO-style outlines of the patches holding vit_mass of the CLS row
  float vit_mass = 0.6f;            ///< share of the attention mass the outlines keep, 0…1
  bool vit_norms = false;           ///< the main map shows ‖x‖ of the layer's output tokens
  bool bilinear = false;            ///< maps upsampled bilinearly instead of as patch blocks
  int vit_resize = 0;               ///< the input's short side in pixels; 0: the model's trained size
  VitBackend vit_backend = VitBackend::Auto;  ///< which runner does the ViT's forward pass (Diagnostics, --backend)
  std::vector<std::string> recent_models;  ///< most recent first (remembered between runs)

  // --- images and files
  std::filesystem::path image_path;
  std::filesystem::path export_dir = ".";
  bool export_map_only = false;  ///< F12 saves the map and its colour bar only (for slides), not the window

  /// `--mask painted:C,R;…`: the painted keys as patches, until the image's grid is known
  /// (painted_indices turns them into attention.mask.painted). Not saved: the JSON holds the indices.
  std::vector<std::array<int, 2>> painted_cells;
};

/// JSON of every persistent setting (the sidecar of an export, and remembered settings).
nlohmann::json to_json(const Document& d);

/// Applies what `j` holds onto `d` (missing keys keep their values). Throws Error (with the
/// key) on a value of the wrong type or out of range; `d` is unchanged then.
void apply_json(const nlohmann::json& j, Document& d);

/// The commands that take a field's flag (a bit each; a flag lists the commands it belongs to).
enum FlagCommand : unsigned {
  kFlagsRow = 1u,          ///< attnlab row
  kFlagsRender = 2u,       ///< attnlab render and attnlab figure, with the hand-made heads
  kFlagsRenderModel = 4u,  ///< attnlab render --model (a real ViT)
};

/// One flag of the field table, as the tests and the usage check see it.
struct DocumentFlag {
  std::string flag;   ///< --patch
  std::string path;   ///< the JSON path of the field it sets: "patch"
  unsigned commands;  ///< FlagCommand bits
  bool takes_value;   ///< false for a switch (--sincos, --bilinear)
};
/// Every flag the field table defines, in the table's order.
std::vector<DocumentFlag> document_flags();

/// Parses the flags of `command` (one FlagCommand bit) from args into `d`, through the field
/// table, in any order (the last of a repeated flag wins). Options in `known_extra` are the
/// caller's: their values go to `extra` (which may be null when there are none). Throws Error
/// naming the flag for a bad value or a missing one, and for an unknown option
/// ("unknown option 'X'<for_what> (see attnlab --help)"). Returns the flags given.
std::vector<std::string> parse_document_flags(const std::vector<std::string>& args, FlagCommand command, Document& d,
                                              const std::vector<std::string>& known_extra,
                                              std::vector<std::pair<std::string, std::string>>* extra,
                                              std::string_view for_what = "");

}  // namespace attnlab::app
