#include "app/commands/models_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

#include "app/commands/command_flags.hpp"
#include "app/commands/options.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/io/hub.hpp"

namespace attnlab::app {
namespace {

std::atomic<bool>* g_cancel = nullptr;
extern "C" void on_interrupt(int) {
  if (g_cancel) g_cancel->store(true);
}

// While it lives, Ctrl-C (SIGINT) cancels `transfer` instead of killing the program, so that the
// download stops cleanly and leaves only its resumable `.incomplete` part.
class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(hub::Transfer& transfer) {
    g_cancel = &transfer.cancel_flag();
    previous_int_ = std::signal(SIGINT, on_interrupt);
    previous_term_ = std::signal(SIGTERM, on_interrupt);
  }
  ~CancelOnInterrupt() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
    g_cancel = nullptr;
  }
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

// The progress line on stderr: redrawn in place on a terminal, else one line a second at most.
struct ProgressLine {
  bool tty = ::isatty(2) != 0;
  std::chrono::steady_clock::time_point last{};
  std::string last_file;
  bool drawn = false;
  void operator()(const hub::TransferStatus& s) {
    const auto now = std::chrono::steady_clock::now();
    const bool done = s.bytes_total > 0 && s.bytes_done >= s.bytes_total;
    if (tty) {
      std::fprintf(stderr, "\r\033[K%s", hub::format_status(s).c_str());
      drawn = true;
      if (done) {
        std::fputc('\n', stderr);
        drawn = false;
      }
    } else if (done || now - last > std::chrono::seconds(1)) {
      if (done && s.file == last_file) return;  // the final line once per file
      std::fprintf(stderr, "%s\n", hub::format_status(s).c_str());
      last = now;
      if (done) last_file = s.file;
    }
    std::fflush(stderr);
  }
  void end() {
    if (drawn) std::fputc('\n', stderr);
    drawn = false;
  }
};

// "[in the cache] " or as many spaces (one a character), so that the titles line up.
std::string mark(bool cached) {
  // TRANSLATORS: before a gallery model's title in attnlab models when it is downloaded already.
  const std::string tag = std::string(_("[in the cache]")) + " ";
  if (cached) return tag;
  const auto characters =  // UTF-8's lead bytes
      std::count_if(tag.begin(), tag.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  return std::string(static_cast<std::size_t>(characters), ' ');
}

int list_models(const hub::HubConfig& config) {
  std::printf("%s\n", _("Gallery (download with: attnlab models pull REPO):"));
  for (const hub::GalleryEntry& g : hub::gallery()) {
    const bool cached = hub::cached_model(hub::RepoRef{std::string(g.repo_id)}, config).has_value();
    std::printf("  %s%.*s  %.*s  ~%s  %.*s\n      %s\n", mark(cached).c_str(), static_cast<int>(g.title.size()),
                g.title.data(), static_cast<int>(g.repo_id.size()), g.repo_id.data(),
                hub::format_bytes(g.approx_bytes).c_str(), static_cast<int>(g.licence.size()), g.licence.data(),
                _(g.shows.data()));  // marked N_ in core/io/hub.cpp
  }
  const auto repos = hub::scan_cache(config);
  // TRANSLATORS: a heading of attnlab models: the Hugging Face cache folder, and that it holds no models.
  std::printf("\n%s\n", text_format(repos.empty() ? _("In the cache (%s): no models") : _("In the cache (%s):"),
                                     config.cache_dir.string().c_str()).c_str());
  for (const hub::CachedRepo& r : repos) {
    std::printf("  %s  %s\n", r.repo_id.c_str(), hub::format_bytes(r.size_on_disk).c_str());
    for (const hub::CachedRevision& v : r.revisions) {
      std::string refs;
      for (const auto& ref : v.refs) refs += (refs.empty() ? " (" : ", ") + ref;
      if (!refs.empty()) refs += ")";
      // TRANSLATORS: a cached revision in attnlab models: its commit and names (main), its files, their size.
      std::printf("    %s\n", text_format(_("%s%s: %zu file(s), %s"), v.commit.c_str(), refs.c_str(), v.files.size(),
                                         hub::format_bytes(v.size_on_disk).c_str()).c_str());
    }
  }
  if (config.offline) std::printf("\n%s\n", _("HF_HUB_OFFLINE is set: only the cache is used."));
  return 0;
}

}  // namespace

std::string models_usage() {
  std::string text = "  attnlab models           ";
  // TRANSLATORS: --help text: what `attnlab models` alone does (after the command, on its line).
  text += _("the gallery of models that teach, and what the Hugging Face cache holds\n");
  text += R"(  attnlab models pull REPO[@REVISION] [--file F]...
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           download a model (config.json, model.safetensors or
                           pytorch_model.bin, preprocessor_config.json) or the files F into the
                           cache shared with Python; prints the snapshot folder
)");
  text += R"(  attnlab models path REPO[@REVISION]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           print the cached snapshot folder of REPO (no network)
)");
  return text;
}

std::filesystem::path model_argument_path(const std::string& argument) {
  if (!hub::parse_hf_model(argument)) return argument;
  const hub::HubConfig config = hub::HubConfig::from_environment();
  hub::Transfer transfer;
  ProgressLine line;
  CancelOnInterrupt interrupt(transfer);
  try {
    auto p = hub::resolve_model_argument(argument, config, &transfer, [&](const hub::TransferStatus& s) { line(s); });
    line.end();
    return p;
  } catch (...) {
    line.end();
    throw;
  }
}

int run_models(const std::vector<std::string>& args) {
  const hub::HubConfig config = hub::HubConfig::from_environment();
  if (args.empty()) return list_models(config);
  const std::string& sub = args[0];
  if (sub == "pull") {
    std::optional<hub::RepoRef> repo;
    hub::PullOptions options;
    const std::vector<CommandFlag> flags = {
        {"--file", true, [&options](const std::string& t, const std::string&) { options.files.push_back(t); },
         // TRANSLATORS: what a flag's missing value is, after "--file needs ".
         N_("a file name (e.g. model.safetensors)")},  // repeatable: each one a file
    };
    // TRANSLATORS: the end of "unknown option 'X'".
    FlagRules rules{N_(" for models pull")};
    rules.positional = [&repo](const std::string& a) {
      if (repo) throw Error(text_format(_("one repository at a time: '%s' is one too many"), a.c_str()));
      repo = hub::parse_repo_ref(a);
    };
    parse_flags(std::vector<std::string>(args.begin() + 1, args.end()), flags, rules);
    if (!repo) throw Error(_("models pull needs a repository, e.g. attnlab models pull timm/vit_small_patch16_224.dino"));
    hub::Transfer transfer;
    ProgressLine line;
    options.transfer = &transfer;
    options.on_progress = [&](const hub::TransferStatus& s) { line(s); };
    CancelOnInterrupt interrupt(transfer);
    std::filesystem::path snapshot;
    try {
      snapshot = hub::pull_model(*repo, config, options);
    } catch (const hub::Cancelled& e) {
      line.end();
      std::fprintf(stderr, "attnlab: %s\n", e.what());  // i18n: English (the program's name before the message)
      return 130;
    } catch (...) {
      line.end();
      throw;
    }
    line.end();
    std::printf("%s\n", snapshot.string().c_str());
    return 0;
  }
  if (sub == "path") {
    if (args.size() != 2) throw Error(_("models path takes one repository: attnlab models path ORG/NAME[@REVISION]"));
    const hub::RepoRef repo = hub::parse_repo_ref(args[1]);
    const auto p = hub::cached_model(repo, config);
    if (!p)
      // TRANSLATORS: the repository, the cache folder, the repository again (the command that downloads it).
      throw Error(text_format(_("'%s' is not in the cache (%s): attnlab models pull %s"), repo.text().c_str(),
                              config.cache_dir.string().c_str(), repo.text().c_str()));
    std::printf("%s\n", p->string().c_str());
    return 0;
  }
  throw Error(text_format(_("unknown models command '%s' (use pull or path; see attnlab --help)"), sub.c_str()));
}

}  // namespace attnlab::app
