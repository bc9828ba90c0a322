// The gallery's downloads on the app's scheduler (hub_session.hpp).
#include "app/gui/sessions/hub_session.hpp"
#include "core/base/translate.hpp"

namespace attnlab::app {

HubSession::HubSession(Scheduler& scheduler) : scheduler_(scheduler), config_(hub::HubConfig::from_environment()) {}

HubSession::~HubSession() {
  if (transfer_) transfer_->cancel();  // the transfer ends within a fraction of a second, even on a stalled server
  scheduler_.cancel(kKey);             // its continuation would reach this session
}

void HubSession::pull(const hub::RepoRef& repo) {
  if (transfer_) transfer_->cancel();
  transfer_ = std::make_shared<hub::Transfer>();
  pulling_ = repo.text();
  auto transfer = transfer_;
  const hub::HubConfig config = config_;
  scheduler_.submit<std::filesystem::path>(
      kKey,
      [repo, config, transfer](const std::atomic<bool>& stop) {
        hub::PullOptions options;
        options.transfer = transfer.get();
        // The scheduler's stop (a newer pull, the window closing) cancels the transfer too.
        options.on_progress = [&stop, transfer](const hub::TransferStatus&) {
          if (stop.load()) transfer->cancel();
        };
        return hub::pull_model(repo, config, options);
      },
      [this](std::future<std::filesystem::path> result) {
        try {
          finished_ = result.get();
        } catch (const std::exception& e) {
          // TRANSLATORS: %s is a Hugging Face repository (owner/name), then the reason.
          error_ = text_format(_("cannot download %s: %s"), pulling_.c_str(), e.what());
        }
        pulling_.clear();
        refresh();
      });
}

void HubSession::cancel() {
  if (transfer_) transfer_->cancel();  // the job ends with hub::Cancelled, reported as its error
}

void HubSession::refresh() {
  const auto models = hub::gallery();
  cached_.assign(models.size(), std::nullopt);
  for (std::size_t i = 0; i < models.size(); ++i)
    cached_[i] = hub::cached_model(hub::RepoRef{std::string(models[i].repo_id)}, config_);
}

}  // namespace attnlab::app
