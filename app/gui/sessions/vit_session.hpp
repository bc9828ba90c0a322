#pragma once
// The loaded ViT in the app: loading a checkpoint and running it on the current image happen on
// the app's scheduler (a ViT-B file is 350 MB, its forward pass seconds on the CPU), with a stage
// the model panel shows as progress, and can be cancelled. Until a job is done the previous
// model, image and maps stay; a failed job leaves them as they were. Also owns the textures
// the ViT views draw: the photo the source ran on and the maps, keyed by what they show.
#include "app/gui/state/memo.hpp"
#include "app/gui/state/ui_common.hpp"
#include "app/gui/state/scheduler.hpp"
#include "core/gpu/vit_backend.hpp"
#include "core/vit/faithfulness.hpp"
#include "core/vit/vit_run.hpp"

#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace attnlab::app {

/// Textures of maps (one value per patch, coloured on the CPU), each in a named slot and
/// remade only when the slot's key (what the map shows and how) changes.
class MapTextures {
 public:
  /// The texture in `slot`, made from `rgba()` (cols × rows RGBA8 pixels) when `key` differs
  /// from the slot's last key.
  ImTextureID get(const std::string& slot, const std::string& key, int cols, int rows,
                  const std::function<std::vector<std::uint8_t>()>& rgba, bool smooth);
  void clear() { slots_.clear(); }
  /// Drops the slots whose name `drop` says yes to.
  void erase_if(const std::function<bool(const std::string& slot)>& drop) {
    std::erase_if(slots_, [&](const auto& s) { return drop(s.first); });
  }

 private:
  struct Slot {
    std::string key;
    GuiTexture texture;
  };
  std::map<std::string, Slot> slots_;
};

struct CnnViewState;  // the CNN view's (app/gui/cnn/cnn_view.cpp)

/// The numbers behind the ViT views' pictures, derived from a session's source and kept with it:
/// each tab (the ViT tab, the Train tab's runs A and B) draws its own session, so none remakes
/// another's. Each is remade when its key changes (state/memo.hpp).
struct VitViewData {
  /// The matrix view's A (vit/vit_matrix_view.cpp), pooled by the maximum to `side` × `side`,
  /// and its colour range; key: model id, generation, layer, head, colormap, normalization.
  struct PooledMatrix {
    std::vector<float> values;
    ValueRange range;
  };
  Memo<std::string, PooledMatrix> matrix;
  /// The distance view's mean distance of a uniform head in pixels (vit/vit_distance_view.cpp);
  /// key: the grid's columns, rows and patch size.
  Memo<std::array<int, 3>, double> uniform_distance;
  /// What the gradient views computed on the scheduler for this session's source
  /// (vit/vit_relevance_view.cpp, vit/vit_field_view.cpp). Shared with their jobs'
  /// continuations, which hold it weakly: a result arriving after the session is gone is dropped.
  struct Gradients {
    /// The class-relevance maps: key "generation|class", the class explained (the likeliest
    /// resolved), one map per method of kRelevanceMethods (N values each), or the job's error;
    /// `*_pending` the key of a job on its way (not asked for again).
    std::string maps_key, maps_error, maps_pending;
    int klass = -1;
    std::vector<std::vector<float>> maps;
    /// Faithfulness of each method on this image (deletion, insertion; random last): key as
    /// the maps'.
    std::string curves_key, curves_error, curves_pending;
    std::vector<FaithfulnessCurves> curves;
    /// The effective receptive field: key "generation|layer|token", input height × width.
    std::string field_key, field_error, field_pending;
    Matrix field;
  };
  std::shared_ptr<Gradients> gradients = std::make_shared<Gradients>();
  /// The CNN view's ResNet beside this session's ViT and what its jobs computed
  /// (app/gui/cnn/cnn_view.cpp defines it; made by the view when first drawn). Its jobs'
  /// continuations hold it weakly.
  std::shared_ptr<CnnViewState> cnn;
};

class VitSession {
 public:
  /// Jobs go to `scheduler` under `key` ("vit:run"; the Train tab's runs "train:a:run", "train:b:run"), which
  /// must outlive the session.
  explicit VitSession(Scheduler& scheduler, std::string key = "vit:run") : scheduler_(scheduler), key_(std::move(key)) {}
  ~VitSession() { scheduler_.cancel(key_); }  // its continuation would reach this session
  VitSession(const VitSession&) = delete;
  VitSession& operator=(const VitSession&) = delete;

  /// Starts loading the checkpoint at `path` (a .safetensors file or a folder) and running it
  /// on `image`; a job under way is cancelled first.
  void open(const std::filesystem::path& path, const Image& image, int resize);
  /// Runs the loaded model on another image (or input size); nothing happens without a model.
  void run_on(const Image& image, int resize);
  /// Shows a model that ran elsewhere (the Train panel's snapshot, run on its probe image in the
  /// training job): `run` becomes the source at once, `label` what the map's header names it.
  void show(std::shared_ptr<const VitModel> model, std::shared_ptr<const VitRun> run, const Image& image, const std::string& label);
  /// Forgets the model and its source (the Train panel's reset).
  void clear();
  /// Asks the job under way to stop; the model and maps from before stay.
  void cancel();
  /// Which runner the next jobs ask for (vit_backend.hpp); auto by default.
  void set_backend(VitBackend backend) { backend_ = backend; }
  VitBackend backend() const { return backend_; }
  /// Why the current source's runner was chosen ("auto: llvmpipe … is a software rasterizer; …").
  const std::string& backend_why() const { return why_; }

  /// The one-line error of the last job that failed (not of one cancelled), once; the previous
  /// model stays then. A finished job's result is taken when the scheduler is drained.
  std::optional<std::string> poll() { return std::exchange(error_, std::nullopt); }
  bool busy() const { return scheduler_.busy(key_); }
  /// True while a gradient view's job (the relevance maps, their faithfulness curves, the
  /// receptive field) is under way: a sweep's frame waits for it.
  bool gradients_busy() const {
    return scheduler_.busy(relevance_job()) || scheduler_.busy(curves_job()) || scheduler_.busy(field_job());
  }
  /// The scheduler keys of those jobs (app/gui/sessions/vit_gradient_jobs.cpp, the Field view).
  std::string relevance_job() const { return "relevance:" + key_; }
  std::string curves_job() const { return "relevance:" + key_ + ":curves"; }
  std::string field_job() const { return "erf:" + key_; }
  /// What the job under way is doing ("reading the checkpoint" …) and how far, 0…1.
  std::string stage() const;
  float progress() const;

  /// The source of the last finished job (null before the first).
  const VitRun* run() const { return run_.get(); }
  /// The same, shared: a job of a view keeps it alive while it works on it.
  const std::shared_ptr<const VitRun>& run_ptr() const { return run_; }
  /// The scheduler its jobs go to, and its own job's key ("vit:run", "train:a:run"): a view's
  /// jobs for this session go to the same scheduler under keys naming it.
  Scheduler& scheduler() { return scheduler_; }
  const std::string& key() const { return key_; }
  /// The checkpoint file read (the .safetensors inside a folder) and its SHA-256.
  const std::filesystem::path& file() const { return file_; }
  const std::filesystem::path& opened_path() const { return opened_; }
  const std::string& sha256() const { return sha256_; }
  const std::string& info() const { return info_; }
  /// What the map's header names the model: the checkpoint's file name, or show()'s label.
  std::string label() const { return label_.empty() ? file_.filename().string() : label_; }
  /// Bumped by every finished job: textures key on it.
  unsigned generation() const { return generation_; }

  /// The image the current source ran on, as it was given (null before the first job): the CKA
  /// view's photo examples.
  const std::shared_ptr<const Image>& image() const { return image_; }
  /// The photo the current source ran on (its whole image, linear filtered).
  ImTextureID photo() const { return photo_.im(); }
  int photo_width() const { return photo_.width(); }
  int photo_height() const { return photo_.height(); }
  MapTextures& textures() { return textures_; }
  VitViewData& view_data() { return view_data_; }

 private:
  struct Result {
    std::shared_ptr<const VitModel> model;
    std::shared_ptr<const VitRun> run;
    Image image;
    std::filesystem::path opened, file;
    std::string sha256, info, why;
  };
  void start(std::optional<std::filesystem::path> path, const Image& image, int resize);
  void take(Result r);  // a finished job's result becomes the session's model and source

  Scheduler& scheduler_;
  std::string key_;
  std::string label_;
  std::optional<std::string> error_;
  std::shared_ptr<std::atomic<int>> stage_ = std::make_shared<std::atomic<int>>(0);
  bool loading_model_ = false;
  std::shared_ptr<const VitModel> model_;
  std::shared_ptr<const VitRun> run_;
  std::shared_ptr<const Image> image_;
  std::filesystem::path opened_, file_;
  std::string sha256_, info_, why_;
  VitBackend backend_ = VitBackend::Auto;
  unsigned generation_ = 0;
  GuiTexture photo_;
  MapTextures textures_;
  VitViewData view_data_;
};

}  // namespace attnlab::app
