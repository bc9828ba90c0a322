// libFuzzer target: what the command line and the remembered settings accept.
// The first byte picks the parser: the arguments of `row`, of `render`/`figure` (NUL-separated
// after the first byte), or a settings JSON (the sidecar read by `render --from` and the app's
// settings.json). Accepted settings are then checked against a small image as the commands do.
// Every rejection must be one attnlab::Error with one line; anything else is a finding.
#include "app/commands/options.hpp"
#include "app/gui/app_state.hpp"
#include "core/colormap.hpp"
#include "core/error.hpp"
#include "core/mask.hpp"
#include "core/parse.hpp"
#include "core/reference.hpp"
#include "core/tokens.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_cli_args: %s\n", what);
  std::abort();
}

// The settings must fit a 40 × 30 image as `row` checks them before any pixel is read.
void check_against_image(const attnlab::Settings& settings, int col, int row,
                         const std::vector<std::array<int, 2>>& painted) {
  attnlab::Settings s = settings;
  if (s.patch > 40) return;  // refused by make_setup below; small K keeps each run fast
  const attnlab::ModelSetup setup = attnlab::make_setup(40, 30, s);
  attnlab::token_at(setup.grid, col, row);
  s.mask.painted = attnlab::painted_indices(painted, setup.grid);
}

void run(const std::uint8_t* data, std::size_t size) {
  const std::uint8_t mode = data[0] % 3;
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
  std::vector<std::pair<std::string, std::string>> extra;
  const auto d = mode == 0 ? attnlab::app::parse_query_options(args, attnlab::app::kFlagsRow, {}, nullptr)
                           : attnlab::app::parse_query_options(args, attnlab::app::kFlagsRender, {"--view", "--size", "--queries"}, &extra);
  for (const auto& [name, value] : extra)
    if (name == "--queries") attnlab::parse_cells(value, "--queries");
  check_against_image(d.attention, d.hand_made.cell.col, d.hand_made.cell.row, d.painted_cells);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  try {
    run(data, size);
  } catch (const attnlab::Error& e) {
    const std::string message = e.what();
    if (message.empty() || message.find('\n') != std::string::npos) broken(("an error that is not one line: " + message).c_str());
  }
  return 0;
}
