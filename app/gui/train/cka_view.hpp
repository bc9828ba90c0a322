#pragma once
// The representational similarity view (issue 29, item 5; the deck's CKA slide): the linear CKA
// (Kornblith et al. 2019) between every representation of model A (rows: "input", L0 … — the
// tokens entering block 0 and leaving each block) and every one of model B (columns) over the
// same examples, as a heatmap with its values and a colour bar 0…1. A = B gives one model's
// layer × layer matrix (the loaded ViT, the model being trained); two models (two trained runs)
// are the same request with another B. The tokens come from the CPU path's own forward pass
// (core/vit/vit_similarity.hpp), computed as a job on the app's scheduler, never in a frame, with
// progress and Cancel; the last result is kept under its request's key (models + examples).
#include "app/gui/maps/view.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/state/scheduler.hpp"
#include "app/gui/sessions/vit_session.hpp"
#include "core/io/fashion_mnist.hpp"
#include "core/io/image.hpp"
#include "core/vit/vit.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::app {

/// What one CKA matrix is of.
struct CkaRequest {
  std::shared_ptr<const VitModel> a, b;  ///< rows and columns; b may be a (one model's layer × layer matrix)
  std::string a_name, b_name;            ///< what the view calls them (the checkpoint, "being trained: step 120 …")
  CkaExamples examples = CkaExamples::FashionTest;
  int count = 500;                       ///< Fashion-MNIST test images, the first of the t10k split
  std::shared_ptr<const Image> photo;    ///< the photo the source ran on (examples Photo: its tokens)
  int resize = 0;                        ///< the photo's short side as the source ran it (0: the model's trained size)
  /// What the result is kept under: both models' load ids, the examples (kind, count, or the
  /// photo and its size).
  std::string key() const;
  /// "500 Fashion-MNIST test images", "the tokens of the photo (W × H)".
  std::string examples_text() const;
};

/// A finished matrix.
struct CkaResult {
  std::string key;                        ///< CkaRequest::key() of what it is
  Eigen::MatrixXd cka;                    ///< (A's depth + 1) × (B's depth + 1)
  std::vector<std::string> rows, cols;    ///< vit_cka_labels() of A and of B
  std::string a_name, b_name, examples;   ///< as requested; examples_text()
  bool same_model = true;                 ///< A and B were one model
  std::int64_t tokens = 0;                ///< examples (tokens) in all
  double seconds = 0;                     ///< the job's wall time
};

/// The job behind one CKA view: one request at a time under its scheduler key ("cka:vit",
/// "cka:train"); a new one replaces what runs. Main thread only.
class CkaJob {
 public:
  CkaJob(Scheduler& scheduler, std::string key) : scheduler_(scheduler), key_(std::move(key)) {}
  ~CkaJob() { scheduler_.cancel(key_); }  // its continuation would reach this job
  CkaJob(const CkaJob&) = delete;
  CkaJob& operator=(const CkaJob&) = delete;

  /// Starts computing `r` on the scheduler (a job under way is cancelled). The Fashion-MNIST
  /// test split is read by the first job that needs it and kept.
  void start(const CkaRequest& r);
  void cancel();
  bool busy() const { return scheduler_.busy(key_); }
  /// The key of the request under way (empty when none).
  const std::string& running_key() const { return running_key_; }
  /// Images passed through a model so far, over all there are to pass (0…1).
  float progress() const;
  /// The last finished matrix (null before one).
  const CkaResult* result() const { return result_ ? &*result_ : nullptr; }
  /// The key of the last request that failed (not cancelled) and its one-line error.
  const std::string& failed_key() const { return failed_key_; }
  const std::string& error() const { return error_; }
  /// The error of the last failed job, once (for the banner).
  std::optional<std::string> poll_error() { return std::exchange(new_error_, std::nullopt); }

 private:
  Scheduler& scheduler_;
  std::string key_;
  std::string running_key_, failed_key_, error_;
  std::optional<std::string> new_error_;
  std::shared_ptr<std::atomic<int>> done_ = std::make_shared<std::atomic<int>>(0), total_ = std::make_shared<std::atomic<int>>(1);
  std::optional<CkaResult> result_;
  std::shared_ptr<const Image> photo_;  // the result's photo, kept so that no other image takes its address (its key)
  std::shared_ptr<const FashionMnistSplit> test_;
};

/// The request for a session's model against itself (the loaded ViT, the model being trained):
/// its model, its label, its photo as it ran at `resize` (the document's examples are the
/// view's to set). No model: a request with none.
CkaRequest cka_request(const VitSession& session, int resize);

/// Draws the CKA view of `request` (no model: a line saying so): one line on what CKA is and
/// what to look for, the choice of examples (the document's cka.examples and cka.count), the
/// heatmap of the job's result with rows and columns labelled, values in the cells where they
/// fit and a colour bar 0…1, hovering a cell names its pair; progress and Cancel while it runs;
/// a job that fails (over the memory budget, no data set) is a banner, the last matrix stays.
/// `auto_start`: a request without its result starts at once (the loaded model); otherwise
/// only the first one does, and a button computes the current model again (the model being
/// trained changes every chunk). Records what it drew in state.report.cka_drawn.
void draw_cka_view(AppState& state, CkaJob& job, const CkaRequest& request, bool auto_start);

/// The similarity view as a view of the one interface (app/gui/maps/view.hpp): it needs a ViT's
/// pass and the source's similarity job, and calls ViewSource::draw_similarity.
std::unique_ptr<View> make_similarity_view();

/// The heatmap of `r`: rows A's representations, columns B's, a cell per pair coloured 0…1 with
/// its value written when it fits, the colour bar beside it; a hovered cell is named. Also the
/// CNN view's (app/gui/cnn/cnn_view.cpp), with a ResNet's blocks as the columns.
void draw_cka_heatmap(const AppState& state, const CkaResult& r);

}  // namespace attnlab::app
