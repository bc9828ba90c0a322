// libFuzzer target: what the command line and the remembered settings accept, for every
// command. The first byte picks the parser (its value modulo 8), the rest is NUL-separated
// arguments: 0 the options of `row`, 1 those of `render`/`figure` (parse_query_options), 2 a
// settings JSON (the sidecar read by `render --from` and the app's settings.json; end to end in
// fuzz_render_from), then the commands themselves as `attnlab CMD ARGS…` runs them: 3 `vit`,
// 4 `train`, 5 `video`, 6 `models` (the hub), 7 `render --model …`. Accepted settings of 0–2 are
// then checked against a small image as the commands do, at any patch size K: a K too large for
// the memory budget (256 MiB here) must be refused in one line, any other must be quick.
// Commands 3–7 run in an empty folder of the process's own, with the Hugging Face cache there,
// HF_HUB_OFFLINE set and no reachable endpoint; arguments naming other folders (a '/' or a '\\'
// outside `models`, "..") are skipped, `train --out DIR` finds a file at DIR and `render` gets a --model that is
// missing, so that every command parses and checks its options and then stops at its first
// file, never training, downloading or writing. Every rejection must be one attnlab::Error with
// one line; anything else is a finding.
#include "tests/fuzz/fuzz_support.hpp"
#include "app/commands/models_command.hpp"
#include "app/commands/options.hpp"
#include "app/commands/train_command.hpp"
#include "app/commands/video_command.hpp"
#include "app/commands/vit_command.hpp"
#include "app/gui/state/app_state.hpp"
#include "app/gui/output/render_commands.hpp"
#include "core/base/colormap.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/mask.hpp"
#include "core/base/parse.hpp"
#include "core/hand_made/reference.hpp"
#include "core/hand_made/tokens.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;

const fs::path& folder() { return attnlab::fuzz::temp_folder("cli"); }

// Runs a command in the empty folder (relative names resolve there), emptied again after.
class InFolder {
 public:
  InFolder() : before_(fs::current_path()) {
    std::error_code ec;
    fs::remove_all(folder(), ec);
    fs::create_directories(folder());
    fs::current_path(folder());
  }
  ~InFolder() {
    std::error_code ec;
    fs::current_path(before_, ec);
    fs::remove_all(folder(), ec);
  }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  fs::path before_;
};

[[noreturn]] void broken(const std::string& what) { attnlab::fuzz::report_finding("fuzz_cli_args", what); }

// The settings must fit a 40 × 30 image as `row` checks them before any pixel is read.
void check_against_image(const attnlab::Settings& settings, int col, int row,
                         const std::vector<std::array<int, 2>>& painted) {
  attnlab::Settings s = settings;
  // Any K: refused by the budget check (make_setup) or quick. The largest K the 256 MiB budget
  // accepts here (668, padded) takes about 2 s under the sanitizers; an accepted K that takes 10
  // s means a budget check is missing (K = 2000 padded takes 20 s and 2.3 GiB without it).
  const auto start = std::chrono::steady_clock::now();
  const attnlab::ModelSetup setup = attnlab::make_setup(40, 30, s);
  if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10))
    broken("patch size K=" + std::to_string(s.patch) + " was accepted and took more than 10 s");
  attnlab::token_at(setup.grid, col, row);
  s.mask.painted = attnlab::painted_indices(painted, setup.grid);
}

// Commands 3–7 as `attnlab CMD ARGS…` runs them, stopped at their first file.
void run_command(int mode, std::vector<std::string> args) {
  // models' repository names hold a '/' (ORG/NAME): nothing is downloaded or read there.
  for (const std::string& a : args)
    if ((mode != 6 && (a.find('/') != std::string::npos || a.find('\\') != std::string::npos)) || a.find("..") != std::string::npos) return;
  InFolder in_folder;
  if (mode == 3) {
    attnlab::app::run_vit(args);
  } else if (mode == 4) {
    // --out DIR: a file at DIR, so that train stops after its options ("exists").
    for (std::size_t n = 0; n + 1 < args.size(); ++n)
      if (args[n] == "--out") {
        if (args[n + 1].empty() || args[n + 1] == ".") return;
        std::ofstream(args[n + 1]) << "not a folder";
        std::error_code ec;
        if (!fs::is_regular_file(args[n + 1], ec)) return;  // a name no file can have (too long, …)
      }
    attnlab::app::run_train(args);
  } else if (mode == 5) {
    attnlab::app::run_video(args);  // --list-cameras alone ends well
    return;
  } else if (mode == 6) {
    attnlab::app::run_models(args);  // the list of an empty cache ends well
    return;
  } else {
    args.insert(args.begin(), {"--model", "missing.safetensors"});  // the first --model is the one taken
    attnlab::app::run_render(args);
  }
  // vit, train and render need a file that is not there: only a refusal is expected.
  broken("a command ran to its end without its files");
}

void run(const std::uint8_t* data, std::size_t size) {
  const std::uint8_t mode = data[0] % 8;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode == 2) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return;
    attnlab::app::AppState state;
    attnlab::app::apply_json(j, state);
    check_against_image(state.attention, state.hand_made.cell.col, state.hand_made.cell.row, {});
    return;
  }
  std::vector<std::string> args;
  std::size_t begin = 0;
  for (std::size_t n = 0; n <= text.size() && args.size() < 64; ++n)
    if (n == text.size() || text[n] == '\0') {
      args.push_back(text.substr(begin, n - begin));
      begin = n + 1;
    }
  if (mode >= 3) {
    run_command(mode, args);
    return;
  }
  // render's and figure's own flags beside the document's, as rows of the same table.
  using Text = const std::string&;
  std::vector<attnlab::app::CommandFlag> own;
  if (mode != 0)
    own = {{"--view", true, [](Text, Text) {}},
           {"--size", true, [](Text, Text) {}},
           {"--queries", true, [](Text text, Text flag) { attnlab::parse_cells(text, flag); }}};
  const auto d = attnlab::app::parse_query_options(args, mode == 0 ? attnlab::app::kFlagsRow : attnlab::app::kFlagsRender,
                                                   std::move(own));
  check_against_image(d.attention, d.hand_made.cell.col, d.hand_made.cell.row, d.painted_cells);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("ATTNLAB_MEMORY_BUDGET_MB", "256", 1);
  // The Hugging Face cache in the process's folder, offline, with an endpoint nobody answers.
  const std::string hf = (fs::temp_directory_path() / ("attnlab-fuzz-cli-hf-" + std::to_string(::getpid()))).string();
  setenv("HF_HOME", hf.c_str(), 1);
  setenv("HF_HUB_CACHE", (hf + "/hub").c_str(), 1);
  setenv("HF_HUB_OFFLINE", "1", 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
  unsetenv("HF_TOKEN");
  unsetenv("HUGGING_FACE_HUB_TOKEN");
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("attnlab-fuzz-cli-hf-" + std::to_string(::getpid())), ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  try {
    run(data, size);
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken("an error that is not one line: " + message);
    if (std::getenv("ATTNLAB_FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", message.c_str());
  }
  return 0;
}
