#pragma once
// Models from the Hugging Face Hub: downloads (libcurl) into huggingface_hub's own cache layout, so that
// Python's downloads are reused and ours are Python's, and the gallery of models that teach.
//
// Every function here may be called from a background thread (the app runs pulls on its scheduler);
// none keeps global state other than libcurl's one-time initialisation. Failures throw attnlab::Error
// with one line a person can act on (a cancelled download throws hub::Cancelled, an Error too).
//
// Sources followed (huggingface_hub, src/huggingface_hub/): constants.py (endpoint, cache folders,
// token path, HF_HUB_OFFLINE), file_download.py (hf_hub_url, get_hf_file_metadata,
// hf_hub_download / _hf_hub_download_to_cache_dir, _create_symlink, _chmod_and_move, http_get with
// resume, try_to_load_from_cache, repo_folder_name), utils/_cache_manager.py (scan_cache_dir).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

namespace attnlab::hub {

/// A download stopped by Transfer::cancel() (or Ctrl-C in `attnlab models pull`). The partial
/// `blobs/<etag>.incomplete` stays in the cache and the next pull resumes it with a Range request.
class Cancelled : public Error {
 public:
  Cancelled() : Error(_("download cancelled (the part already fetched is kept and resumed next time)")) {}
};

/// A model repository on the hub and the revision asked for: `ORG/NAME[@REVISION]`.
struct RepoRef {
  std::string repo_id;            ///< "timm/vit_small_patch16_224.dino"
  std::string revision = "main";  ///< a branch, a tag or a 40-hex commit
  std::string text() const { return revision == "main" ? repo_id : repo_id + "@" + revision; }
};

/// Parses `ORG/NAME[@REVISION]` (also a bare `NAME`, as the hub allows). Throws Error on an empty
/// name, `..`, a backslash, control characters or more than one '/' (huggingface_hub's
/// validate_repo_id rules: letters, digits, '-', '_', '.'; no leading/trailing '-' or '.').
RepoRef parse_repo_ref(std::string_view text);

/// `hf:ORG/NAME[@REVISION]` → the repository; anything else (a path) → nullopt. Throws Error when
/// the text starts with `hf:` but the rest is not a valid repository.
std::optional<RepoRef> parse_hf_model(std::string_view model_argument);

/// Where and how to reach the hub; from_environment() reads the variables huggingface_hub reads.
struct HubConfig {
  std::string endpoint = "https://huggingface.co";  ///< HF_ENDPOINT (trailing '/' removed)
  std::filesystem::path cache_dir;                  ///< HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
  std::optional<std::string> token;                 ///< HF_TOKEN, else the file HF_TOKEN_PATH, else $HF_HOME/token
  bool offline = false;                             ///< HF_HUB_OFFLINE (1/ON/YES/TRUE): the cache only, no request made
  long stall_seconds = 30;    ///< a transfer slower than 1 byte/s for this long fails (ATTNLAB_HUB_STALL_SECONDS)
  long connect_seconds = 10;  ///< connection time-out (huggingface_hub: DEFAULT_ETAG_TIMEOUT = 10)
  int max_redirects = 10;     ///< redirects followed before "redirect loop" (ATTNLAB_HUB_MAX_REDIRECTS)

  /// Reads HF_ENDPOINT, HF_HUB_CACHE, HF_HOME, HF_TOKEN, HF_TOKEN_PATH, HF_HUB_OFFLINE and
  /// ATTNLAB_HUB_STALL_SECONDS / ATTNLAB_HUB_MAX_REDIRECTS (constants.py's rules; the home folder
  /// is %USERPROFILE% on Windows). Never throws; a token file that cannot be read means no token.
  static HubConfig from_environment();
};

/// What a download is doing, copied out of a Transfer (plain values).
struct TransferStatus {
  std::string repo_id;
  std::string file;                ///< the file being fetched now ("" before the first)
  int file_index = 0;              ///< 0-based index of `file` among `file_count`
  int file_count = 0;              ///< files this pull fetches (known after the first metadata request)
  std::uint64_t bytes_done = 0;    ///< bytes of `file` on disk so far (a resumed part included)
  std::uint64_t bytes_total = 0;   ///< `file`'s size from the hub's metadata; 0 while unknown
  std::uint64_t resumed_from = 0;  ///< bytes that were already there from an interrupted download
  double bytes_per_second = 0;     ///< rate over the last seconds (0 while unknown)
  double seconds_left = -1;        ///< estimated from the rate; -1 while unknown
  bool finished = false;           ///< the pull ended (successfully or not)
};

/// Shared between the downloading thread and whoever watches it (the app's window, the CLI's
/// progress line): status() and cancel() may be called from any thread at any moment.
class Transfer {
 public:
  TransferStatus status() const {
    std::lock_guard lock(mutex_);
    return status_;
  }
  /// Asks the download to stop; it throws Cancelled within about a second (libcurl's progress
  /// callback runs at least once a second), even while the
  /// server stalls.
  void cancel() { cancel_.store(true); }
  bool cancelled() const { return cancel_.load(); }
  /// The flag itself (a lock-free atomic), e.g. for a SIGINT handler to set.
  std::atomic<bool>& cancel_flag() { return cancel_; }

  // Written by the downloader only.
  template <typename F>
  void update(F&& change) {
    std::lock_guard lock(mutex_);
    change(status_);
  }

 private:
  mutable std::mutex mutex_;
  TransferStatus status_;
  std::atomic<bool> cancel_{false};
};

/// What pull_model() fetches and whom it tells.
struct PullOptions {
  /// Files to fetch. Empty: the model's files — `config.json` (required), `model.safetensors`, or
  /// `pytorch_model.bin` when the repository has no safetensors file, and `preprocessor_config.json`
  /// when the repository has one (a 404 on an optional file is fine).
  std::vector<std::string> files;
  Transfer* transfer = nullptr;  ///< progress and cancel; may be null
  /// Called on the downloading thread at most ~10 times a second and once at each file's end.
  std::function<void(const TransferStatus&)> on_progress;
};

/// Downloads one file of a repository into the cache, as huggingface_hub's hf_hub_download() does,
/// and returns `snapshots/<commit>/<filename>`. HEAD for the metadata (commit, etag, size); the blob
/// fetched into `blobs/<etag>.incomplete` (resumed with Range), its size and, for LFS files
/// (64-hex etag), SHA-256 checked, then moved to `blobs/<etag>`; the snapshot entry is a relative
/// symbolic link (a copy where links fail); `refs/<revision>` holds the commit. Under the lock
/// `.locks/models--ORG--NAME/<etag>.lock`. A file already in the cache is not fetched again.
/// Offline (config.offline): the cached file or Error. Throws Error: not found (404), gated or
/// private (401/403: "set HF_TOKEN"), server error, wrong size or hash, redirect loop, stalled
/// connection, disk full; Cancelled when cancelled.
std::filesystem::path download_file(const RepoRef& repo, const std::string& filename, const HubConfig& config,
                                    Transfer* transfer = nullptr,
                                    const std::function<void(const TransferStatus&)>& on_progress = {});

/// Fetches a model's files (see PullOptions::files) and returns the snapshot folder, which load_vit()
/// opens as it is. Throws as download_file().
std::filesystem::path pull_model(const RepoRef& repo, const HubConfig& config, const PullOptions& options = {});

/// The cached snapshot folder of `repo` if it holds a model (config.json and model.safetensors or
/// pytorch_model.bin), without any request: `refs/<revision>` → commit (or the revision itself when
/// it is a commit). This is the gallery's "in the cache" mark. Never throws.
std::optional<std::filesystem::path> cached_model(const RepoRef& repo, const HubConfig& config);

/// huggingface_hub's try_to_load_from_cache(): the cached path of one file, or nullopt. Never throws.
std::optional<std::filesystem::path> try_to_load_from_cache(const RepoRef& repo, const std::string& filename,
                                                            const HubConfig& config);

/// `--model` as every command takes it: `hf:ORG/NAME[@REV]` → the cached snapshot folder, pulled
/// first when it is not in the cache (offline: Error "not in the cache"); anything else is returned
/// as the path it names. Throws as pull_model().
std::filesystem::path resolve_model_argument(std::string_view model_argument, const HubConfig& config,
                                             Transfer* transfer = nullptr,
                                             const std::function<void(const TransferStatus&)>& on_progress = {});

/// One revision of a cached repository (huggingface_hub's CachedRevisionInfo).
struct CachedRevision {
  std::string commit;
  std::vector<std::string> refs;   ///< branch/tag names whose refs/ file points at it
  std::vector<std::string> files;  ///< relative to the snapshot folder
  std::filesystem::path snapshot;
  std::uint64_t size_on_disk = 0;  ///< the blobs its files point at
};

/// One cached repository (huggingface_hub's CachedRepoInfo): models only.
struct CachedRepo {
  std::string repo_id;
  std::filesystem::path folder;    ///< models--ORG--NAME
  std::uint64_t size_on_disk = 0;  ///< every blob (complete ones; `.incomplete` parts not counted)
  std::vector<CachedRevision> revisions;
};

/// Every model repository in the cache, as huggingface_hub's scan_cache_dir() sees it (sorted by
/// name). An absent cache folder gives an empty list; unreadable entries are skipped. Never throws.
std::vector<CachedRepo> scan_cache(const HubConfig& config);

/// A model of the gallery (static data).
struct GalleryEntry {
  std::string_view title;      ///< "DINO ViT-S/16"
  std::string_view repo_id;    ///< "timm/vit_small_patch16_224.dino"
  std::uint64_t approx_bytes;  ///< the weights' size, roughly
  std::string_view licence;    ///< "Apache-2.0"
  std::string_view shows;      ///< one line on what it teaches (English, marked N_: show it as _(shows.data()))
  bool resnet = false;         ///< a ResNet (core/cnn): it opens beside the ViT (the CNN view), not as the ViT
};

/// The gallery of models that teach (DINO, DINOv2 with and without registers, DeiT, ViT; and two
/// ResNets to set beside them).
std::span<const GalleryEntry> gallery();

/// "86 MB", "1.2 GB", "512 B" (decimal units, as the hub shows sizes).
std::string format_bytes(std::uint64_t bytes);

/// One progress line: "model.safetensors 12.3 MB / 86.7 MB, 4.1 MB/s, 18 s left".
std::string format_status(const TransferStatus& status);

}  // namespace attnlab::hub
