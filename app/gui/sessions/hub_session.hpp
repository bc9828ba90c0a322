#pragma once
// Models from the Hugging Face Hub in the app: the gallery window's downloads (core/io/hub.hpp) run
// as one job on the app's scheduler, one at a time, with a progress the window reads every frame
// and a Cancel that stops the transfer at once. A finished pull hands its snapshot folder to the
// main loop, which opens it like any checkpoint; a failed one leaves one line and the loaded
// model as it was.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/gui/state/scheduler.hpp"
#include "core/io/hub.hpp"

namespace attnlab::app {

class HubSession {
 public:
  /// Jobs go to `scheduler` under "hub:pull"; the hub is reached as the environment says
  /// (HF_ENDPOINT, HF_HUB_CACHE / HF_HOME, HF_TOKEN, HF_HUB_OFFLINE: hub::HubConfig).
  explicit HubSession(Scheduler& scheduler);
  /// Stops a download under way (its `.incomplete` part stays in the cache, resumed next time).
  ~HubSession();
  HubSession(const HubSession&) = delete;
  HubSession& operator=(const HubSession&) = delete;

  const hub::HubConfig& config() const { return config_; }

  /// Starts downloading `repo`'s model files into the cache (nothing is fetched that is there
  /// already); a pull under way is cancelled first.
  void pull(const hub::RepoRef& repo);
  /// Stops the pull under way; it ends with "download cancelled".
  void cancel();
  bool busy() const { return scheduler_.busy(kKey); }
  /// The repository being pulled ("" when none).
  const std::string& pulling() const { return pulling_; }
  /// The progress of the pull under way (plain values, copied under the transfer's lock).
  hub::TransferStatus status() const { return transfer_ ? transfer_->status() : hub::TransferStatus{}; }

  /// The snapshot folder of a pull that finished, once (the main loop opens it).
  std::optional<std::filesystem::path> take_finished() { return std::exchange(finished_, std::nullopt); }
  /// The one-line error of a pull that failed or was cancelled, once.
  std::optional<std::string> take_error() { return std::exchange(error_, std::nullopt); }

  /// The gallery's "in the cache" marks (hub::cached_model, one per gallery entry), looked up
  /// again by refresh(): when the window opens and after each pull, not every frame.
  const std::vector<std::optional<std::filesystem::path>>& cached() const { return cached_; }
  void refresh();

 private:
  static constexpr const char* kKey = "hub:pull";
  Scheduler& scheduler_;
  hub::HubConfig config_;
  std::shared_ptr<hub::Transfer> transfer_;  // shared with the job's thread
  std::string pulling_;
  std::optional<std::filesystem::path> finished_;
  std::optional<std::string> error_;
  std::vector<std::optional<std::filesystem::path>> cached_;
};

}  // namespace attnlab::app

namespace attnlab::app {
struct AppState;

/// The Model → Gallery window's contents: the gallery's models (hub::gallery()) with their size,
/// licence and what each shows, "in the cache" marked; Download (then opened) or Open; while a
/// pull runs, its progress bar (bytes, rate, time left) and Cancel. Opening goes through the
/// command queue like any checkpoint; errors come back through HubSession::take_error().
void draw_hub_gallery(AppState& state, HubSession& hub);
}  // namespace attnlab::app
