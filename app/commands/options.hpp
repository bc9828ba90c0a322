#pragma once
// The command line's shared pieces (README, "Command line"): the options of the commands that
// compute attention for one image and one query (`row`, `render`, `figure`), the window's
// arguments, the usage text and the assets folder. No window: this is attnlab_commands.
// Every bad argument or file is one line on stderr and exit code 2; nothing is written.
#include "app/commands/document.hpp"

#include <array>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::app {

/// Exit code for bad arguments or files.
inline constexpr int kExitUsage = 2;

/// Parses the arguments (after the command name) of the commands that compute attention for
/// one image and one query with the hand-made heads: `--image IMG --patch K --query COL,ROW
/// [--head NAME] [--mask MASK] [--pos none|concat|add] [--temperature T] [--lambda L] [--base B]
/// [--power P] [--sincos] [--edge crop|pad] [--seed S]`, and for render and figure (command
/// kFlagsRender) `[--colormap NAME] [--normalization N] [--opacity A]` too: the flags of the
/// document's field table (document.hpp) for `command`, with the caller's own rows `own`
/// (render's --view, --size, …) in the same table (parse_document_flags). --image and --query
/// are required, unless `defaults` is kLikeTheApp (render): then the app's first picture is the
/// default, the bundled safari photo and the document's query. Throws Error naming the first
/// bad argument.
enum class QueryDefaults { kRequired, kLikeTheApp };
Document parse_query_options(const std::vector<std::string>& args, FlagCommand command, std::vector<CommandFlag> own = {},
                             QueryDefaults defaults = QueryDefaults::kRequired);

/// The window's arguments: `[IMAGE] [--model PATH] [--video VIDEO] [--hover-bench OUT.json [--train]]` in any
/// order, read through the window's flag table (gui_flag_names). Throws Error with one line for
/// an unknown option, a second image, --model, --video or --hover-bench without a path or given
/// twice, and --train without --hover-bench or with --model or --video.
struct GuiArgs {
  std::string image, model;
  std::string video;        ///< --video VIDEO: played from the start (Images → Open video)
  std::string hover_bench;  ///< --hover-bench OUT.json: replay the hover benchmark, write OUT.json, quit
  bool train = false;       ///< --train: the benchmark replays over the Train tab's model while it trains
  std::string language;     ///< --lang CODE (main.cpp takes it for every command): the window's language, saved
};
GuiArgs parse_gui_args(const std::vector<std::string>& args);

/// The flags of the window's table (parse_gui_args): the dispatcher opens the window when the
/// arguments hold one of them.
std::vector<CommandFlagName> gui_flag_names();

/// The usage text of the whole program.
std::string usage();

/// The bundled assets folder (photos and the Fashion-MNIST ViT): PREFIX/share/attnlab beside
/// an installed PREFIX/bin/attnlab, else the nearest assets/ above the executable (a build
/// tree inside the source tree), else the source tree's assets/ compiled in.
std::filesystem::path assets_dir();

}  // namespace attnlab::app
