#pragma once
// What `attnlab video`, `render --view overlay` and `render --sweep` draw (issue 40): a source's
// map over a picture, coloured and blended on the CPU (core/io/overlay.hpp), from a ViT
// (make_vit_overlay) or from the hand-made heads (make_hand_made_overlay). The commands' loops
// (app/commands/video_command.cpp) are written once over this interface.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/commands/document.hpp"
#include "app/commands/source_choice.hpp"
#include "core/io/image.hpp"

namespace attnlab::app {

/// The ViT's choice as the command line gives it (--layer, --head, --query: ChoiceFlags, checked
/// against the model once it is loaded, app/commands/source_choice.hpp; not given: the last
/// layer, the heads' mean, the CLS token), and what the map shows: map (a row of A), rollout (the
/// rollout row up to the layer) or norms (the layer's token norms).
struct OverlayChoices {
  ChoiceFlags choice;
  std::string view = "map";
};

/// What `render --sweep` varies: layer 0…L−1, head 0…H−1, the query along its row (query-row:
/// the patch query's row, every column), the softmax temperature τ, or (the hand-made heads
/// only) the patch size K; `values` (comma-separated) for tau and K.
struct SweepRequest {
  std::string kind;    ///< layer, head, query-row, tau, K
  std::string values;  ///< tau's values (default 0.25,0.5,1,2,4), K's (default 8,12,16,24,32)
  double fps = 2;
};

/// One overlaid picture: width × height × 3 bytes of RGB.
struct OverlayPicture {
  std::vector<std::uint8_t> rgb;
  int width = 0, height = 0;
};

/// A source of maps over pictures: set an image, then draw its base choice or a sweep's frames.
class OverlaySource {
 public:
  virtual ~OverlaySource() = default;
  /// Takes the image the next pictures are of (a ViT's forward pass runs here). Throws Error.
  virtual void set_image(const Image& image) = 0;
  /// Plans a sweep over the current image; returns its values, one per frame (the sidecar's
  /// "values"). Throws Error for a kind or value this source cannot sweep.
  virtual nlohmann::json plan_sweep(const SweepRequest& sweep) = 0;
  /// The picture of the base choice (`frame` < 0) or of the planned sweep's frame `frame`.
  /// Throws Error.
  virtual OverlayPicture draw(int frame) = 0;
  /// The sidecar's common part: the document, the program, the source and its choice.
  virtual nlohmann::json sidecar() const = 0;
  /// Bytes a picture's work may use (core/base/budget.hpp): a video's frames are refused above it.
  virtual std::int64_t memory_budget() const = 0;
};

/// A ViT's map (the model d.model_path on the runner d.vit_backend, the input scaled to
/// d.vit_resize or the model's trained size) over the model's input picture: the image scaled
/// and cropped to whole patches, so the picture's size is the input's. Sweeps: layer, head,
/// query-row, tau (softmax(s_ij/τ) over the model's own scores, τ = 1 being the model). Throws
/// Error for an unknown view, a missing or bad model.
std::unique_ptr<OverlaySource> make_vit_overlay(const Document& d, const OverlayChoices& choices);

/// The hand-made heads' row of A for the query d.hand_made.cell of head d.hand_made.head under
/// d.attention (computed by HandMadeRows, app/commands/row_command.hpp: the GPU engine in one
/// headless context, or the CPU reference) over the WHOLE image: the map covers the grid's
/// top-left cols·K × rows·K pixels (the pixels past the last whole patch stay the photo's own;
/// a padded grid is drawn where it is over the photo), so every frame of a video or sweep,
/// whatever K, has the image's size. Sweeps: head (0 … 5), query-row, tau (the document's
/// temperature), K (each value at most the image's short side; the query the patch holding the
/// centre of the first K's query patch). Layer is refused (one layer). `query_centred`: the
/// query is the middle patch (cols/2, rows/2) of each image's grid instead of d's (a video
/// without --query).
std::unique_ptr<OverlaySource> make_hand_made_overlay(const Document& d, bool query_centred);

}  // namespace attnlab::app
