#pragma once
// The document: every setting a sidecar JSON saves and `render --from` restores (and the app
// remembers between runs), with ONE field table (document.cpp, for_each_field) that gives each
// setting its JSON path, its command-line flag and the commands that take it, and how a flag's
// text is parsed. to_json, apply_json and parse_document_flags all go through that table; the
// defaults are the members' initializers below (and Settings' in core/base/settings.hpp).
// No window: this is attnlab_commands; the app's AppState (app/gui) is a Document plus its UI state.
#include "app/commands/command_flags.hpp"

#include "core/vit/relevance.hpp"
#include "core/base/colormap.hpp"
#include "core/base/settings.hpp"
#include "core/vit/vit.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace attnlab::app {

/// The patch sizes K (pixels) the patch slider and the [ and ] keys span; the setting itself
/// (and --patch) takes 1 … 2^20, bounded by the image.
inline constexpr int kMinPatchSize = 4, kMaxPatchSize = 128;

/// The temperature τ the window opens with on a first start (no remembered settings; the command
/// line keeps Settings' τ = 1). At τ = 1 (eq. 26.20) the colour head's row for the default query on
/// the giraffe is nearly flat (max/min about 1.2: the scores s_ij/√m spread by about 0.2), the
/// first thing a class would see; at 0.1 the same spread is ten times larger and the row shows
/// the giraffe (max/min at least 5, issue 47; tests/app/test_document.cpp computes it).
inline constexpr float kFirstStartTemperature = 0.1f;

/// A patch in grid coordinates (col, row), 0-based from the top left.
struct Cell {
  int col = 0, row = 0;
  bool operator==(const Cell&) const = default;
};

/// What a source's main map shows, the same struct for every source (the hand-made heads: one
/// layer, six heads; a ViT: L layers × H heads, prefix tokens before its patches). Layers, heads,
/// registers and patches are all counted from 0, as the checkpoint's tensor names (`blocks.0`),
/// the command line and the sidecars count them. The window's keys act on it
/// (app/gui/state/source_choice.hpp), the map views read and write it, the field table saves it.
struct SourceChoice {
  int layer = 0;          ///< 0 … layers − 1; -1: the last layer (what a newly opened ViT shows)
  HeadChoice head{0, HeadFusion::Mean};  ///< head ≥ 0: that head; head < 0: its fusion over all heads
  int prefix_token = -1;  ///< the query when ≥ 0: 0 the CLS token, 1 … the registers (register r is 1 + r); -1: the patch `cell`
  Cell cell{0, 0};        ///< the patch query (col, row of the source's grid) when prefix_token < 0
  bool query_pinned = false;  ///< false: the patch query follows the pointer over the map
  std::vector<Cell> pins;     ///< patch queries compared side by side (the pinned view)
  bool operator==(const SourceChoice&) const = default;
};

/// The examples over which the CKA view compares layers (docs/MATH.md, "Representational
/// similarity (CKA)"): Fashion-MNIST test images (the first `cka_count` of the t10k split), or
/// the photo the source runs on, its tokens as the examples.
enum class CkaExamples { FashionTest, Photo };

/// What the CNN view (issue 50: the ViT beside a ResNet) shows: both models' effective receptive
/// fields at matched depth, the ResNet's Grad-CAM, the CKA between the ViT's layers and the
/// ResNet's blocks (docs/MATH.md, "CKA across two models"), or one channel of the ResNet's
/// feature maps at matched depth.
enum class CnnShow { Field, GradCam, Cka, Features };

/// The CNN view's model naming a ResNet-18 with random weights made in the window
/// (random_resnet_tensors(), seed 0) instead of a checkpoint file.
inline constexpr const char* kCnnRandomResnet18 = "random-resnet18";

/// Which source the window's map views draw: the hand-made heads, a loaded ViT, or the ViT
/// being trained in the window (the Train tab).
enum class ShownSource { HandMade, Vit, Train };

struct Document {
  // --- the attention math (core Settings) and the hand-made heads' choice
  Settings attention;
  /// The hand-made heads: layer 0, heads 0 … 5 (HeadKind), the query a patch.
  SourceChoice hand_made{0, HeadChoice{0, HeadFusion::Mean}, -1, Cell{12, 8}, false, {}};

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
  /// The language of the window's text (issue 52; the Language menu): a catalog's code ("de",
  /// "zh_CN"), "en", or "" for the environment's choice (LANGUAGE, LC_MESSAGES, LANG; --lang).
  std::string language;
  bool presentation = false;
  bool show_controls = true, show_heads = true, show_pinned = true, show_images = true, show_diagnostics = false;

  // --- teaching views (by TeachingView::name) and the guided tour
  std::map<std::string, bool> open_views;
  int tour_step = -1;  ///< index into the teaching views, -1 = no tour

  // --- a real ViT (the loaded checkpoint's layers and heads as the attention source)
  ShownSource source = ShownSource::HandMade;  ///< the source the map views draw (the ViT once a model has run)
  std::filesystem::path model_path;  ///< the checkpoint (a .safetensors file or a model folder)
  /// The ViT's choice: the last layer, the heads' mean and the CLS query until changed.
  SourceChoice vit{-1, HeadChoice{-1, HeadFusion::Mean}, 0, Cell{0, 0}, false, {}};
  /// The ViT's lower view by its name among the views that work on a ViT (app/gui/maps/view.hpp,
  /// the registry app/gui/views/view_registry.cpp): distance, pinned, matrix, step, cka,
  /// high-norm; a name this version lacks shows the first. (Saved as a
  /// number, `vit.tab`, before issue 48: migrate_json reads it.)
  std::string vit_view = "distance";
  bool vit_rollout = false;         ///< the main map shows attention rollout up to vit.layer
  bool vit_masks = false;           ///< DINO-style outlines of the patches holding vit_mass of the CLS row
  float vit_mass = 0.6f;            ///< share of the attention mass the outlines keep, 0…1
  bool vit_norms = false;           ///< the main map shows ‖x‖ of the layer's output tokens
  float vit_norm_ratio = 4.0f;      ///< a patch is high-norm over this × the layer's median patch norm (core/vit/token_norms.hpp)
  bool vit_mark_high_norm = false;  ///< outline the high-norm patches on the main map
  /// Why the model decided (the relevance view, SPEC §13): the class explained ("top": the
  /// likeliest; an index; or a label of the model's config.json) and the method.
  std::string relevance_class = "top";
  RelevanceMethod relevance_method = RelevanceMethod::Chefer;
  std::optional<RelevanceMethod> relevance_beside;  ///< a second method drawn beside (Why?), none by default
  bool relevance_on_map = false;  ///< the main map shows that relevance instead of a row of A
  bool bilinear = false;            ///< maps upsampled bilinearly instead of as patch blocks
  int vit_resize = 0;               ///< the input's short side in pixels; 0: the model's trained size
  VitBackend vit_backend = VitBackend::Auto;  ///< which runner does the ViT's forward pass (Diagnostics, --backend)
  std::vector<std::string> recent_models;  ///< most recent first (remembered between runs)
  std::vector<std::string> recent_lessons;  ///< lesson files opened or saved, most recent first (remembered between runs)
  /// Compare (View → Compare, issue 48, SPEC §12): a second model B drawn beside the ViT's map,
  /// on the same image, its layer, head and query following the ViT's (matched_choice in
  /// app/commands/source_choice.hpp). Empty: one model.
  std::filesystem::path compare_model;
  bool compare_by_index = false;  ///< B's layer is A's by index (clamped), else by relative depth
  bool compare_one_scale = false;  ///< both maps coloured over one scale (the union of their ranges), else each its own

  // --- the CKA view (representational similarity between layers), for the ViT and the Train tab
  CkaExamples cka_examples = CkaExamples::FashionTest;  ///< what the examples are
  int cka_count = 500;              ///< Fashion-MNIST test images used (the first ones of the split), 2…10000

  // --- the CNN view (issue 50, SPEC §14): a ResNet beside the ViT
  /// The ResNet: a checkpoint (torchvision's or timm's names), kCnnRandomResnet18, or empty: none.
  std::filesystem::path cnn_model;
  CnnShow cnn_show = CnnShow::Field;  ///< what the view shows of the two
  int cnn_channel = 0;                ///< the feature map shown (CnnShow::Features): a channel of the block, clamped to its count

  // --- the ViT being trained in the window (the Train tab; its shape and run are not saved)
  /// Its choice: as the ViT's, the last layer, the heads' mean and the CLS query until changed.
  /// The same choice for both runs (the side-by-side view compares them on it).
  SourceChoice train{-1, HeadChoice{-1, HeadFusion::Mean}, 0, Cell{0, 0}, false, {}};
  int train_run = 0;               ///< which run the map views show: 0 run A, 1 run B ("a", "b" in the JSON)
  int train_probe = 0;             ///< the probe both runs' maps are of: Fashion-MNIST test image 0 … 9999
  bool train_probe_photo = false;  ///< the probe is the photo the window has open, made as the data are, instead

  // --- images and files
  std::filesystem::path image_path;
  /// The folder the user chose for saves (F12, F9, F8: Controls → Export, the folder dialog,
  /// ATTNLAB_EXPORT_DIR), absolute; empty: none chosen, saves go to the default folder,
  /// <Pictures>/attnlab (export_folder(), app/gui/state/app_state.hpp). Settings written before
  /// issue 47 hold "." there, never a user's choice: read as empty (migrate_json).
  std::filesystem::path export_dir;
  bool export_map_only = false;  ///< F12 saves the map and its colour bar only (for slides), not the window

  /// `--mask painted:C,R;…`: the painted keys as patches, until the image's grid is known
  /// (painted_indices turns them into attention.mask.painted). Not saved: the JSON holds the indices.
  std::vector<std::array<int, 2>> painted_cells;
};

/// The choice of the source the map views draw.
inline SourceChoice& shown_choice(Document& d) {
  return d.source == ShownSource::Vit ? d.vit : d.source == ShownSource::Train ? d.train : d.hand_made;
}
inline const SourceChoice& shown_choice(const Document& d) {
  return d.source == ShownSource::Vit ? d.vit : d.source == ShownSource::Train ? d.train : d.hand_made;
}

/// A head as the JSON has it: its number (from 0), or "mean", "max", "min" for a fusion of heads.
nlohmann::json head_choice_json(HeadChoice head);

/// JSON of every persistent setting (the sidecar of an export, and remembered settings).
nlohmann::json to_json(const Document& d);

/// Applies what `j` holds onto `d` (missing keys keep their values). Settings saved before issue 28
/// (`query`, `query_pinned`, `main_head` as `head`, `pinned`, `vit.source`, `vit.head` as −1/−2/−3
/// for mean/max/min, `vit.pinned`) and before issue 47 (`export_dir` "." for the default folder) are
/// read as what they were (migrate_json). Throws Error (with the
/// key) on a value of the wrong type or out of range; `d` is unchanged then.
void apply_json(const nlohmann::json& j, Document& d);

/// `j` with the keys of settings saved before issue 28 moved to where the document keeps them
/// now (and their values translated); keys already in the new places win. An `export_dir` of "."
/// (written before issue 47, never a user's choice) becomes "", the default folder.
nlohmann::json migrate_json(const nlohmann::json& j);

/// How a window shows one setting of the field table (document.cpp, for_each_field): the widget
/// that app/gui/state/setting_widgets.hpp draws from it, and for a number the range that both the
/// widget and the setting's command-line flag accept (the same numbers, written once: the
/// field's FieldRange, copied here by setting_ref). The table writes its text in English, marked
/// N_() (label, help, a format with words, choices); setting_ref returns it in the language in use.
struct FieldUi {
  enum class Widget {
    Slider,    ///< a number on a slider from lo to hi
    Input,     ///< a number typed (a seed)
    Checkbox,  ///< a bool, or a choice of two (checked: the second)
    Combo,     ///< a choice from a list (`choices`); Radio in a view that asks for it
  };
  const char* label = "";        ///< the widget's label, the same wherever it is drawn
  const char* help = "";         ///< the help marker's text beside it ("": none)
  double lo = 0, hi = 0;         ///< a number's range: the widget's and the flag's (its FieldRange)
  const char* format = "";       ///< printf format of a number on a slider ("%d px", "%.2f"); "": ImGui's
  bool log = false;              ///< a logarithmic slider
  double drag_lo = 0, drag_hi = 0;  ///< a slider's span when narrower than lo … hi (0, 0: lo … hi)
  Widget widget = Widget::Slider;
  std::vector<std::string> choices = {};  ///< a choice's labels, by the value's number (enum order)
};

/// A number setting's range, written once in the field table (document.cpp, for_each_field):
/// its command-line flag (FieldUi-less fields too), its widget (FieldUi::lo and hi are these)
/// and apply_json take these numbers.
struct FieldRange {
  double lo = 0, hi = 0;
  /// What apply_json does with a saved value outside lo … hi.
  enum class OnRead {
    Refuse,   ///< refuses the file: Error "setting 'PATH' is out of range (LO … HI)"
    Default,  ///< the default comes back (a view's state: the UI scale, the zoom)
    Keep,     ///< kept for the attention's own checks (core validate, wider: a sidecar holds what the math takes)
  } on_read = OnRead::Refuse;
};

/// The range of the number setting at JSON path `path` ("cka.count": 2 … 10000, images), as
/// the field table writes it. Throws Error for a path the table lacks or gives no range.
FieldRange field_range(std::string_view path);

/// A choice setting (an enum, a head) as its number: choices[get()] is the current label.
struct ChoiceRef {
  std::function<int()> get;
  std::function<void(int)> set;
};

/// One setting of a document that has UI hints: its JSON path, its hints, and its value.
struct SettingRef {
  std::string path;
  FieldUi ui;
  std::variant<int*, float*, bool*, std::uint32_t*, ChoiceRef> value;
};

/// The setting at JSON path `path` ("pos.P") of `d`, pointing into `d`, its hints' text (label,
/// help, format, choices) translated into the language in use now: call it when drawing, and keep
/// nothing of it across frames. Throws Error for a path the field table lacks or one it gives no UI hints.
SettingRef setting_ref(Document& d, std::string_view path);

/// The JSON paths of every setting with UI hints, in the table's order.
std::vector<std::string> setting_paths();

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

/// The flag of the field at JSON path `path` (hand_made.cell → --query); "" when the table
/// gives it none.
std::string flag_of_field(std::string_view path);

/// Parses the flags of `command` (one FlagCommand bit) from args into `d`, through one table:
/// the field table's flags of `command` and the caller's own rows `own` (--out, --view, …; the
/// same name in both is an internal error), in any order (the last of a repeated document flag
/// wins). Throws Error naming the flag for a bad value or a missing one, and parse_flags'
/// errors for anything else (`rules`: "unknown option 'X'<for_what> (see attnlab --help)"); `d`
/// is unchanged then. Returns the flags given, the caller's too, in order.
std::vector<std::string> parse_document_flags(const std::vector<std::string>& args, FlagCommand command, Document& d,
                                              std::vector<CommandFlag> own = {}, const FlagRules& rules = {});

}  // namespace attnlab::app
