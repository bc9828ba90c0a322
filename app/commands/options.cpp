#include "app/commands/options.hpp"

#include "app/commands/lesson_steps.hpp"
#include "app/commands/models_command.hpp"
#include "app/commands/train_command.hpp"
#include "app/commands/video_command.hpp"
#include "app/commands/cka_command.hpp"
#include "app/commands/explain_command.hpp"
#include "app/commands/vit_command.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <algorithm>
#include <system_error>

namespace attnlab::app {

std::string usage() {
  // TRANSLATORS: the first line of attnlab --help.
  std::string text = _("Attention Lab: attention in vision transformers, live on the GPU.\n");
  text += "\n";
  // TRANSLATORS: a heading of attnlab --help (the command lines follow).
  text += _("Usage:");
  text += "\n";
  text += R"(  attnlab [IMAGE] [--model PATH] [--video VIDEO]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           open the app on IMAGE (default: the bundled safari photo); with
                           --model, a ViT checkpoint (.safetensors, .pth or a folder, or
                           hf:ORG/NAME[@REVISION] from the Hugging Face cache) too; with
                           --video, play VIDEO as Images > Open video does
)");
  text += R"(  attnlab [IMAGE] --hover-bench OUT.json [--model PATH | --train] [--video VIDEO]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           the interactive benchmark: the window replays 300 hovers at
                           K = 16 (with --model: over the ViT's grid, a layer or head
                           step after every tenth; with --train: the same over the Train
                           tab's default model while it trains; with --video: while
                           VIDEO plays), writes frame times and query-to-screen times
                           to OUT.json (never replaced), prints one line and closes
)");
  text += R"(  attnlab row --image IMG --patch K --query COL,ROW [options]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           print row i of the attention matrix A as CSV: H/K lines of
                           W/K weights, in the patch grid's layout (computed on the GPU)
)");
  text += R"(  attnlab render [--image IMG] [--patch K] [--query COL,ROW] [options] [--view NAME]
                 [--size WxH] --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           draw a view of the app without a window (EGL), with a
                           sidecar FILE.json of every setting (default: the app's first
                           picture, the bundled safari photo, K = 16, query 12,8)
)");
  text += R"(  attnlab render [--image IMG] [--patch K] [--query COL,ROW] [options] --view overlay
                 --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           the hand-made heads' map over the whole photo (over the
                           grid's cols*K x rows*K part), no window: exactly one frame
                           of attnlab video without --model (below)
)");
  text += R"(  attnlab render [--image IMG] [--patch K] [--query COL,ROW] [options]
                 --sweep head|query-row|tau|K [--sweep-values V1,V2,...] [--fps F]
                 --out FILE.gif|FILE.mp4 [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           one such overlay per head, column of the query's row,
                           temperature tau (default 0.25,0.5,1,2,4) or patch size K
                           (default 8,12,16,24,32, at most the photo's short side; the
                           query the patch under the first K's query centre), all of
                           the photo's size; --fps default 2; sidecar FILE.json
)");
  text += R"(  attnlab render --model PATH --image IMG [--view map|vit-grid|vit-rollout|vit-mask|
                 vit-norms|vit-distance|vit-pinned|vit-matrix|vit-step|vit-cka|
                 vit-high-norm|vit-relevance|vit-erf|vit-cnn] [--layer L]
                 [--head H|mean|max|min] [--query cls|regN|COL,ROW] [--resize S]
                 [--mass PERCENT] [--bilinear] [--norm-ratio R] [--mark-high-norm]
                 [--cka-examples fashion|photo] [--cka-count N]
                 [--class CLASS|top] [--method NAME] [--beside NAME|none]
                 [--relevance-on-map] [--cnn PATH|random-resnet18]
                 [--cnn-show field|grad-cam|cka|features] [--cnn-channel C] [--size WxH]
                 --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           a real ViT's view as in the app (layers and heads from 0;
                           default: last layer, heads' mean, CLS; S: the input's short
                           side, default the model's trained size; --mass: the share
                           of the CLS row the masks keep, default 60; vit-cka: the
                           layers' similarity over N Fashion-MNIST test images,
                           default 500, or the tokens of IMG; vit-high-norm: the
                           histogram of the patch tokens' norms after the layer;
                           vit-relevance: why the model decided on CLASS (an index,
                           a label or top, the default) by --method (chefer, the
                           default, or attention, rollout, grad-rollout,
                           input-gradient) and how faithful each method is on IMG,
                           --beside a second method drawn beside it with its curves,
                           --relevance-on-map: the map view draws that relevance;
                           vit-erf: the query's receptive field after the layer;
                           vit-cnn: the ViT beside the ResNet --cnn (a checkpoint,
                           or random-resnet18: a ResNet-18 with random weights),
                           --cnn-show field (both receptive fields at matched
                           depth, the default), grad-cam (the ResNet's), cka
                           (ViT layers x ResNet blocks over --cka-count images) or
                           features (channel --cnn-channel of the block's maps))
)");
  text += R"(  attnlab render --model A --compare B --image IMG [--view NAME] [--layer L] [--head H]
                 [--query Q] [--match-layers depth|index] [--one-scale] [--size WxH]
                 --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           the same view of two models side by side (B any model path or
                           hf: name, or hand-made: the chapter's heads, the map view
                           only), each half that model's own picture at half the
                           width, its own colour scale (--one-scale: one for both, the
                           union of their ranges); B's layer is A's by relative
                           depth round(l(L_B-1)/(L_A-1)) (default) or by index, its head
                           A's (the heads' mean where B has fewer), its query CLS, the
                           same register or the patch at the same place on the photo;
                           the sidecar holds B's under "compare", --from redraws the pair
)");
  text += R"(  attnlab render --model PATH --image IMG --view overlay [--layer L] [--head H]
                 [--query Q] [--resize S] [--bilinear] --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           the map over the model's input picture at its own size, no
                           window: exactly one frame of attnlab video (below)
)");
  text += R"(  attnlab render --model PATH --image IMG --sweep layer|head|query-row|tau
                 [--sweep-values T1,T2,...] [--fps F] [--view map|rollout|norms|erf]
                 [--layer L] [--head H] [--query Q] --out FILE.gif|FILE.mp4 [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           an animation of overlaid stills, one frame per layer 0…L−1,
                           head 0…H−1, column of the query's row (query-row), or
                           softmax temperature tau (default 0.25,0.5,1,2,4; tau = 1 is
                           the model); --fps default 2; sidecar FILE.json; --view erf:
                           the query's receptive field, --sweep layer shows it grow
)");
  text += R"(  attnlab render --from FILE.json --out FILE.png [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           draw again what a sidecar describes
)");
  text += R"(  attnlab figure --image IMG --patch K --queries "C1,R1;C2,R2;..." [options]
                 --out FILE.png [--panel PX] [--force]
)";
  // TRANSLATORS: --help text: keep each line's 27-space indent, the flags and the capitals (IMG, PATH).
  text += _(R"(                           input, query/key features and one map per query in a row
                           (the layout of fig. 26.12), for slides
)");
  text += vit_usage() + explain_usage() + cka_usage() + video_usage() + train_usage() + models_usage() + lesson_usage();
  text += "  attnlab --help | --version\n";
  text += "  attnlab [COMMAND] ... --lang CODE\n";
  // TRANSLATORS: --help text: keep each line's 27-space indent and the codes; LANGUAGE, LC_ALL,
  // LC_MESSAGES and LANG are environment variables.
  text += _(R"(                           the program's text in the language CODE (en, de, es, fr,
                           zh_CN), for every command and the window; without it, the
                           first of LANGUAGE, LC_ALL, LC_MESSAGES and LANG that names
                           one, else English
)");
  text += "\n";
  // TRANSLATORS: a heading of attnlab --help; "row", "render" and "figure" are commands.
  text += _("Options of row:");
  text += "\n";
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --image IMG           PNG, JPEG, BMP, TGA, GIF, PSD or PNM file\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --patch K             patch size in pixels, 1..1048576 and at most the image's side (default 16)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --query COL,ROW       the query patch, column and row from 0 at the top left\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _(R"(  --head NAME|H         colour (default, fig. 26.12), position, colour+position, texture,
                        random, custom; or their numbers 0 … 5 (counted from 0)
)");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _(R"(  --mask MASK           none (default), causal (j <= i), strict (j < i), window:R,
                        random:RATIO[:SEED], painted:C,R;C,R;...
)");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --pos MODE            positional codes: none (default), concat (q' = [q; lambda p]), add\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --temperature T       tau, 0.01..100 (default 1): softmax(Q K^T / (tau sqrt(m)))\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --lambda L            weight of the concatenated code, 0..4 (default 1)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --base B              code base B of sin(x / B^k), 1.1..10 (default 2)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --power P             highest power P, 0..15 (default 7): 2(P+1) code values\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --sincos              sine-cosine pairs instead of sines\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --edge crop|pad       what to do with pixels past the last whole patch (default crop)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --seed S              seed of the random projections (default 7)\n");
  text += "\n";
  // TRANSLATORS: a heading of attnlab --help; "row", "render" and "figure" are commands.
  text += _("Options of render and figure (besides those of row):");
  text += "\n";
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _(R"(  --view NAME           map (default), heads, tokenization, question, step, output,
                        permutation, matrix, positional, cost; overlay (render, above)
)");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --size WxH            picture size in pixels (render; default 1200x900)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --panel PX            panel size in pixels (figure; default 320)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --colormap NAME       heat (default), fire, bmy, kbgyw, blue, gray, cb-blue-yellow, cb-red-cyan\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --normalization N     minmax (default), absolute, log\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --opacity A           heat map over the photo, 0..1 (default 0.65)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --bilinear            maps smoothed between patch centres (default: a block a patch)\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _(R"(  --norm-ratio R        1.1..50 (default 4), render --model: a patch token is high-norm
                        when its ||x|| is over R times the layer's median
)");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --mark-high-norm      render --model: outline the high-norm patches on the map\n");
  // TRANSLATORS: an option in --help: keep the flag, its value's name (IMG, K) and the text's column (25th).
  text += _("  --force               replace FILE.png and FILE.json if they exist\n");
  text += "\n";
  // TRANSLATORS: the last lines of attnlab --help.
  text += _(R"(Existing files are never replaced without --force. Bad arguments or files: one line
on stderr, exit code 2, nothing written.
)");
  return text;
}

std::filesystem::path assets_dir() {
  std::error_code ec;
  const auto exe = platform::executable_path();
  if (!exe.empty()) {
    // Installed (cmake --install, the .deb): PREFIX/bin/attnlab beside PREFIX/share/attnlab.
    const auto installed = exe.parent_path().parent_path() / ATTNLAB_INSTALL_DATADIR;
    if (std::filesystem::exists(installed / "safari.jpg", ec)) return installed;
    // A build tree inside the source tree (build/bin/attnlab): the nearest assets/ above it.
    for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (std::filesystem::exists(dir / "assets" / "safari.jpg", ec)) return dir / "assets";
  }
  // A build tree elsewhere: the source tree it was built from.
  return std::filesystem::path(ATTNLAB_ASSETS_DIR);
}

Document parse_query_options(const std::vector<std::string>& args, FlagCommand command, std::vector<CommandFlag> own,
                             QueryDefaults defaults) {
  Document d;
  const auto given = parse_document_flags(args, command, d, std::move(own));
  if (defaults == QueryDefaults::kLikeTheApp) {  // the app's first picture: safari, K 16, query (12,8)
    if (d.image_path.empty()) d.image_path = (assets_dir() / "safari.jpg").string();
    return d;
  }
  if (d.image_path.empty()) throw Error(_("--image IMG is required"));
  if (std::find(given.begin(), given.end(), flag_of_field("hand_made.cell")) == given.end())
    throw Error(_("--query COL,ROW is required"));
  return d;
}

namespace {

/// The window's flags, each bound to its option of `g`.
std::vector<CommandFlag> gui_flags(GuiArgs& g) {
  using Text = const std::string&;
  return {
      // hf:ORG/NAME[@REV]: the cached snapshot
      {"--model", true, [&g](Text t, Text) { g.model = model_argument_path(t).string(); },
       // TRANSLATORS: what a flag's missing value is, after "--model needs ".
       N_("a path (a .safetensors or .pth file, or its folder)"), true},
      // TRANSLATORS: what a flag's missing value is, after "--hover-bench needs ".
      {"--hover-bench", true, [&g](Text t, Text) { g.hover_bench = t; }, N_("the path of its JSON report"), true},
      // TRANSLATORS: what a flag's missing value is, after "--video needs ".
      {"--video", true, [&g](Text t, Text) { g.video = t; }, N_("the path of a video file"), true},
      {"--train", false, [&g](Text, Text) { g.train = true; }},
  };
}

}  // namespace

std::vector<CommandFlagName> gui_flag_names() {
  GuiArgs g;
  return flag_names(gui_flags(g));
}

GuiArgs parse_gui_args(const std::vector<std::string>& args) {
  GuiArgs out;
  FlagRules rules;
  rules.positional = [&out](const std::string& a) {
    if (!out.image.empty())
      throw Error(text_format(_("one image at a time: '%s' is one too many (see attnlab --help)"), a.c_str()));
    out.image = a;
  };
  parse_flags(args, gui_flags(out), rules);
  if (out.train && out.hover_bench.empty()) throw Error(_("--train goes with --hover-bench OUT.json (see attnlab --help)"));
  if (out.train && !out.model.empty()) throw Error(_("--train replays over the model being trained: no --model with it"));
  if (out.train && !out.video.empty()) throw Error(_("--train replays over the Fashion-MNIST probe: no --video with it"));
  return out;
}

}  // namespace attnlab::app
