// The document (the settings an export's sidecar saves and --from restores) through its one
// field table (app/commands/document.cpp): every field written is read back, under the same name,
// and a bad value is refused with its name while the state stays as it was. No window needed.
// The command line's flags go through the same table: each sets the field JSON reads.
#include "app/commands/models_command.hpp"
#include "app/commands/options.hpp"
#include "app/commands/train_command.hpp"
#include "app/commands/vit_command.hpp"
#include "app/gui/state/app_state.hpp"
#include "core/base/error.hpp"
#include "core/hand_made/attention.hpp"
#include "core/hand_made/reference.hpp"
#include "core/io/image.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::app;

namespace {

// Every leaf of a JSON object under its dotted path ("vit.cell.col").
void leaves(const nlohmann::json& j, const std::string& path, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) leaves(v, path.empty() ? k : path + "." + k, out);
  } else {
    out[path] = j;
  }
}

// A state with every saved setting away from its default.
AppState changed() {
  AppState s;
  Settings& a = s.attention;
  s.image_path = "/photos/zebra.jpg";
  a.patch = 25;
  a.edge = EdgeMode::Pad;
  a.temperature = 0.25f;
  a.seed = 11;
  s.hand_made.head = HeadChoice{3, HeadFusion::Mean};
  s.hand_made.cell = {4, 9};
  s.hand_made.query_pinned = true;
  s.hand_made.pins = {{1, 2}, {3, 4}};
  a.mask = {.kind = MaskKind::Window, .radius = 4, .ratio = 0.3f, .seed = 5, .painted = {7, 8}};
  a.pos = {.mode = PosMode::Concat, .B = 3.0f, .P = 5, .sincos = true, .lambda = 2.5f};
  a.custom.W_q[1] = 0.5f;
  a.custom.W_k[3] = -1.0f;
  s.colormap = Colormap::Kbgyw;
  s.normalization = Normalization::Log;
  s.opacity = 0.4f;
  s.show_grid = false;
  s.show_mask = false;
  s.zoom = 2.0f;
  s.pan = {10, -20};
  s.ui_scale = 1.5f;
  s.language = "zh_CN";
  s.presentation = true;
  s.show_controls = s.show_heads = s.show_pinned = s.show_images = false;
  s.show_diagnostics = true;
  s.open_views = {{"step", true}};
  s.tour_step = 2;
  s.source = ShownSource::Vit;
  s.model_path = "/models/dino";
  s.vit.layer = 4;
  s.vit.head = HeadChoice{-1, HeadFusion::Max};
  s.vit.prefix_token = -1;
  s.vit.cell = {6, 7};
  s.vit.query_pinned = true;
  s.vit.pins = {{2, 2}};
  s.train.layer = 1;  // the model being trained (the Train tab)
  s.train.head = HeadChoice{2, HeadFusion::Mean};
  s.train.prefix_token = -1;
  s.train.cell = {3, 1};
  s.train.query_pinned = true;
  s.train.pins = {{1, 2}};
  s.vit_view = "cka";
  s.cka_examples = CkaExamples::Photo;  // the similarity view's examples
  s.cka_count = 120;
  s.train_run = 1;  // run B
  s.train_probe = 17;
  s.train_probe_photo = true;
  s.vit_rollout = s.vit_masks = s.vit_norms = s.bilinear = true;
  s.vit_mass = 0.8f;
  s.vit_norm_ratio = 6.5f;
  s.relevance_class = "zebra";
  s.relevance_method = RelevanceMethod::InputGradient;
  s.relevance_beside = RelevanceMethod::Rollout;
  s.relevance_on_map = true;
  s.vit_mark_high_norm = true;
  s.vit_resize = 448;
  s.vit_backend = VitBackend::Cpu;
  s.recent_models = {"/models/dino", "/models/deit"};
  s.recent_lessons = {"/lessons/giraffe.attnlab"};
  s.compare_model = "/models/dinov2_reg";
  s.compare_by_index = true;
  s.compare_one_scale = true;
  s.cnn_model = kCnnRandomResnet18;  // the CNN view's ResNet and what it shows
  s.cnn_show = CnnShow::Cka;
  s.cnn_channel = 7;
  s.export_dir = "/tmp/slides";
  s.export_map_only = true;
  return s;
}

TEST(Document, EveryFieldWrittenIsReadBackUnderTheSameName) {
  const nlohmann::json defaults = to_json(AppState{}), saved = to_json(changed());
  std::map<std::string, nlohmann::json> d, c;
  leaves(defaults, "", d);
  leaves(saved, "", c);
  EXPECT_GE(d.size(), 50u);
  for (const auto& [path, value] : d) {
    if (value.is_object()) {  // an empty map by default (views): filled in the changed state
      const auto inside = c.lower_bound(path + ".");
      EXPECT_TRUE(inside != c.end() && inside->first.starts_with(path + ".")) << path;
      continue;
    }
    ASSERT_TRUE(c.count(path)) << path;
    if (path == "hand_made.layer" || path == "hand_made.token") continue;  // one layer, no prefix token: nothing else is valid
    EXPECT_NE(c[path], value) << path << " kept its default: the test state must change every field";
  }
  AppState restored;  // from defaults, reading the saved document
  apply_json(saved, restored);
  EXPECT_EQ(to_json(restored), saved);
  EXPECT_EQ(restored.vit.cell, (Cell{6, 7}));
  EXPECT_EQ(restored.vit.head, (HeadChoice{-1, HeadFusion::Max}));
  EXPECT_EQ(restored.train.cell, (Cell{3, 1}));
  EXPECT_EQ(restored.train.head, (HeadChoice{2, HeadFusion::Mean}));
  EXPECT_EQ(saved.at("train").at("run"), "b");
  EXPECT_EQ(restored.train_run, 1);
  EXPECT_EQ(restored.train_probe, 17);
  EXPECT_EQ(saved.at("vit").at("head"), "max");
  EXPECT_EQ(saved.at("hand_made").at("head"), 3);
  EXPECT_EQ(restored.attention.mask.kind, MaskKind::Window);
  EXPECT_EQ(restored.colormap, Colormap::Kbgyw);
}

TEST(Document, ABadValueIsRefusedWithItsNameAndNothingChanges) {
  const AppState before = changed();
  const nlohmann::json bad[] = {
      {{"mask", {{"radius", "wide"}}}},     {{"edge", "diagonal"}},
      {{"display", {{"colormap", "rainbow"}}}}, {{"vit", {{"cell", {{"col", 1}}}}}},
      {{"temperature", -2.0}},              {{"patch", 1e40}},
      {{"train", {{"run", "c"}}}},          {{"train", {{"probe", 10000}}}},
  };
  const char* names[] = {"mask.radius", "edge", "rainbow", "vit.cell", "temperature", "patch", "train.run", "train.probe"};
  for (size_t n = 0; n < std::size(bad); ++n) {
    AppState s = before;
    try {
      apply_json(bad[n], s);
      ADD_FAILURE() << bad[n].dump() << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(names[n]), std::string::npos) << e.what();
    }
    EXPECT_EQ(to_json(s), to_json(before)) << bad[n].dump();
  }
}

// ---- The command line's flags, through the same field table.

// A value for every flag of the table, away from the default (a switch: empty). A flag the
// table gains without a value here fails the tests below.
const std::map<std::string, std::string> kFlagValues = {
    {"--image", "/photos/zebra.jpg"}, {"--patch", "25"},      {"--edge", "pad"},         {"--temperature", "0.25"},
    {"--seed", "11"},                 {"--head", "texture"},  {"--query", "4,9"},        {"--mask", "window:4"},
    {"--pos", "concat"},              {"--base", "3"},        {"--power", "5"},          {"--sincos", ""},
    {"--lambda", "2.5"},              {"--colormap", "kbgyw"}, {"--normalization", "log"}, {"--opacity", "0.4"},
    {"--mass", "80"},                 {"--bilinear", ""},     {"--resize", "448"},       {"--backend", "cpu"},
    {"--cka-examples", "photo"},      {"--cka-count", "120"}, {"--norm-ratio", "6.5"},   {"--mark-high-norm", ""}, {"--one-scale", ""},
    {"--class", "zebra"},             {"--method", "grad-rollout"}, {"--beside", "rollout"}, {"--relevance-on-map", ""},
    {"--cnn", "random-resnet18"},     {"--cnn-show", "cka"},  {"--cnn-channel", "7"},
};

std::vector<std::string> flag_args(const DocumentFlag& f) {
  if (!f.takes_value) return {f.flag};
  return {f.flag, kFlagValues.at(f.flag)};
}

std::map<std::string, nlohmann::json> leaves_of(const Document& d) {
  std::map<std::string, nlohmann::json> out;
  leaves(to_json(d), "", out);
  return out;
}

// A settings file (or sidecar) written before issue 28: the hand-made heads' query, head (by
// name), pins and query_pinned at the top, the ViT's source as a bool, its head as -1/-2/-3
// for mean/max/min, its pins at vit.pinned. Read, it is the same choice in the new places.
// Issue 48: a settings file the app wrote before views were named (1e39655, its ViT tab on
// "Step by step": "vit": {"tab": 3}) opens to the same view, and each old number to its view;
// a number out of the old range is refused by its name and nothing changes.
TEST(Document, ASettingsFileFromBeforeViewNamesOpensToTheSameView) {
  std::ifstream in(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests" / "app" / "data" / "settings_vit_tab_step.json");
  ASSERT_TRUE(in) << "the fixture is missing";
  const nlohmann::json old = nlohmann::json::parse(in);
  ASSERT_EQ(old.at("vit").at("tab"), 3);
  AppState s;
  apply_json(old, s);
  EXPECT_EQ(s.vit_view, "step");
  EXPECT_EQ(s.source, ShownSource::Vit);
  const nlohmann::json again = to_json(s);
  EXPECT_FALSE(again.at("vit").contains("tab"));
  EXPECT_EQ(again.at("vit").at("view"), "step");
  const char* const names[] = {"distance", "pinned", "matrix", "step", "cka"};
  for (int t = 0; t < 5; ++t) {
    AppState u;
    apply_json({{"vit", {{"tab", t}}}}, u);
    EXPECT_EQ(u.vit_view, names[t]) << t;
  }
  AppState v;
  v.vit_view = "matrix";
  try {
    apply_json({{"vit", {{"tab", 5}}}}, v);
    ADD_FAILURE() << "vit.tab 5 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vit.tab"), std::string::npos) << e.what();
  }
  EXPECT_EQ(v.vit_view, "matrix");
}

TEST(Document, AnOldSettingsFileIsMigratedOnRead) {
  const nlohmann::json old = nlohmann::json::parse(R"({
    "image": "/photos/zebra.jpg", "patch": 16, "head": "texture", "query": {"col": 4, "row": 9},
    "query_pinned": true, "pinned": [{"col": 1, "row": 2}, {"col": 3, "row": 4}],
    "vit": {"source": true, "model": "/models/dino", "layer": 4, "head": -2, "token": -1,
            "cell": {"col": 6, "row": 7}, "pinned": [{"col": 2, "row": 2}], "tab": 1}
  })");
  AppState s;
  apply_json(old, s);
  EXPECT_EQ(s.hand_made.head, (HeadChoice{static_cast<int>(HeadKind::Texture), HeadFusion::Mean}));
  EXPECT_EQ(s.hand_made.cell, (Cell{4, 9}));
  EXPECT_TRUE(s.hand_made.query_pinned);
  EXPECT_EQ(s.hand_made.pins, (std::vector<Cell>{{1, 2}, {3, 4}}));
  EXPECT_EQ(s.hand_made.layer, 0);
  EXPECT_EQ(s.source, ShownSource::Vit);
  EXPECT_EQ(s.vit.layer, 4);
  EXPECT_EQ(s.vit.head, (HeadChoice{-1, HeadFusion::Max}));
  EXPECT_EQ(s.vit.prefix_token, -1);
  EXPECT_EQ(s.vit.cell, (Cell{6, 7}));
  EXPECT_TRUE(s.vit.query_pinned) << "query_pinned was shared by both sources";
  EXPECT_EQ(s.vit.pins, (std::vector<Cell>{{2, 2}}));
  EXPECT_EQ(s.vit_view, "pinned");
  // The other fusions, a single head (numbered from 0 then as now), the hand-made source.
  for (const auto& [old_head, want] : std::vector<std::pair<int, HeadChoice>>{
           {-1, {-1, HeadFusion::Mean}}, {-3, {-1, HeadFusion::Min}}, {2, {2, HeadFusion::Mean}}}) {
    AppState t;
    apply_json({{"vit", {{"source", false}, {"head", old_head}}}}, t);
    EXPECT_EQ(t.vit.head, want) << old_head;
    EXPECT_EQ(t.source, ShownSource::HandMade);
  }
  // Written again, the new paths only; and an unknown old head name is refused by its name.
  const nlohmann::json again = to_json(s);
  EXPECT_FALSE(again.contains("query") || again.contains("pinned") || again.contains("head") || again.contains("query_pinned"));
  EXPECT_FALSE(again.at("vit").contains("source") || again.at("vit").contains("pinned"));
  EXPECT_EQ(again.at("source"), "vit");
  AppState u;
  EXPECT_THROW(apply_json({{"head", "colr"}}, u), Error);
  // Keys already in the new places win over old ones in the same file.
  AppState w;
  apply_json({{"query", {{"col", 1}, {"row", 1}}}, {"hand_made", {{"cell", {{"col", 2}, {"row", 3}}}}}}, w);
  EXPECT_EQ(w.hand_made.cell, (Cell{2, 3}));
}

TEST(DocumentFlags, EveryFlagSetsTheFieldJsonReadsAndRoundTrips) {
  const auto flags = document_flags();
  ASSERT_GE(flags.size(), 19u);
  const auto defaults = leaves_of(Document{});
  for (const DocumentFlag& f : flags) {
    ASSERT_TRUE(kFlagValues.count(f.flag)) << f.flag << ": the test needs a value for it";
    ASSERT_TRUE(f.commands != 0) << f.flag;
    // Alone, the flag changes the field at its JSON path (and nothing outside its group).
    const unsigned command = f.commands & -f.commands;  // one of its commands
    Document d;
    parse_document_flags(flag_args(f), static_cast<FlagCommand>(command), d);
    const auto got = leaves_of(d);
    std::set<std::string> changed;
    for (const auto& [path, value] : got)
      if (!defaults.count(path) || defaults.at(path) != value) changed.insert(path);
    const auto at = changed.lower_bound(f.path);  // the leaf, or one under it ("query.col")
    EXPECT_TRUE(at != changed.end() && (*at == f.path || at->starts_with(f.path + "."))) << f.flag << " did not change '" << f.path << "'";
    const std::string group = f.path.substr(0, f.path.find('.'));
    for (const auto& path : changed) EXPECT_EQ(path.substr(0, path.find('.')), group) << f.flag << " changed " << path;
  }
  // Every command's flags at once: flags → document → JSON → document, the same.
  for (const unsigned command : {kFlagsRow, kFlagsRender, kFlagsRenderModel}) {
    std::vector<std::string> args;
    for (const DocumentFlag& f : flags)
      if (f.commands & command)
        for (const auto& a : flag_args(f)) args.push_back(a);
    Document d;
    const auto given = parse_document_flags(args, static_cast<FlagCommand>(command), d);
    EXPECT_GE(given.size(), 3u) << command;
    Document restored;
    apply_json(to_json(d), restored);
    EXPECT_EQ(to_json(restored), to_json(d)) << command;
    EXPECT_EQ(restored.attention, d.attention) << command;
  }
  // The values land where the commands read them.
  Document d;
  parse_document_flags({"--mask", "random:0.25:9", "--query", "4,9", "--head", "texture", "--seed", "11", "--power", "5"}, kFlagsRow, d);
  EXPECT_EQ(d.attention.mask.kind, MaskKind::Random);
  EXPECT_FLOAT_EQ(d.attention.mask.ratio, 0.25f);
  EXPECT_EQ(d.attention.mask.seed, 9u);
  EXPECT_EQ(d.hand_made.cell, (Cell{4, 9}));
  EXPECT_EQ(d.hand_made.head.head, static_cast<int>(HeadKind::Texture));
  EXPECT_EQ(d.attention.seed, 11u);
  EXPECT_EQ(d.attention.pos.P, 5);
  Document p;  // painted keys wait for the grid as cells
  parse_document_flags({"--mask", "painted:1,2;3,4"}, kFlagsRow, p);
  EXPECT_EQ(p.attention.mask.kind, MaskKind::Painted);
  EXPECT_EQ(p.painted_cells, (std::vector<std::array<int, 2>>{{1, 2}, {3, 4}}));
}

TEST(DocumentFlags, ABadValueIsRefusedNamingTheFlagAndNothingChanges) {
  const Document before = [] {
    Document d;
    d.attention.patch = 20;
    return d;
  }();
  for (const DocumentFlag& f : document_flags()) {
    const auto command = static_cast<FlagCommand>(f.commands & -f.commands);
    std::vector<std::vector<std::string>> bad = {{f.flag + "x"}};  // not a flag: unknown option
    if (f.takes_value) {
      bad.push_back({f.flag});  // no value
      // Any text is a path (--image, --cnn) or may be a class's label (--class: checked once the model is loaded).
      if (f.flag != "--image" && f.flag != "--class" && f.flag != "--cnn") bad.push_back({"--patch", "8", f.flag, "bogus"});
    }
    for (auto args : bad) {
      if (args[0] == "--patch" && !(command & (kFlagsRow | kFlagsRender))) args.erase(args.begin(), args.begin() + 2);
      Document d = before;
      try {
        parse_document_flags(args, command, d);
        ADD_FAILURE() << f.flag << ": " << args.back() << " was accepted";
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(args.size() == 1 && args[0] != f.flag ? "unknown option" : f.flag), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
      EXPECT_EQ(to_json(d), to_json(before)) << f.flag;
    }
  }
  // A flag of another command is unknown there (the same syntax as before the table).
  Document d;
  EXPECT_THROW(parse_document_flags({"--colormap", "gray"}, kFlagsRow, d), Error);
  EXPECT_THROW(parse_document_flags({"--resize", "64"}, kFlagsRender, d), Error);
  EXPECT_THROW(parse_document_flags({"--patch", "8"}, kFlagsRenderModel, d), Error);
}

// Whether a usage text names `flag` as a whole word (--mass, not --mask for --mas).
bool names_flag(const std::string& text, const std::string& flag) {
  for (auto at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
    const char next = at + flag.size() < text.size() ? text[at + flag.size()] : '\n';
    if (next == ' ' || next == ']' || next == '\n') return true;
  }
  return false;
}

TEST(DocumentFlags, TheUsageTextListsEveryFlag) {
  const std::string text = usage();
  for (const DocumentFlag& f : document_flags()) {
    EXPECT_TRUE(names_flag(text, f.flag)) << f.flag << " is a flag of the field table but not in the usage text";
  }
}

// Issue 39: attnlab vit and attnlab train read their flags through tables of their own
// (command_flags.hpp): each usage text names every flag of its table; a flag without its value
// and an unknown one are refused in one line naming it.
TEST(CommandFlags, VitAndTrainTablesAreInTheirUsageAndRefuseWhatTheyDoNotKnow) {
  struct Command {
    std::string name, usage;
    std::vector<CommandFlagName> flags;
    int (*run)(const std::vector<std::string>&);
  };
  for (const Command& c : {Command{"vit", vit_usage(), vit_flag_names(), run_vit}, Command{"train", train_usage(), train_flag_names(), run_train}}) {
    ASSERT_GE(c.flags.size(), 15u) << c.name;
    for (const CommandFlagName& f : c.flags) {
      SCOPED_TRACE(c.name + " " + f.flag);
      EXPECT_TRUE(names_flag(c.usage, f.flag)) << "not in the usage text";
      auto refused = [&](const std::vector<std::string>& args, const std::string& part) {
        try {
          c.run(args);
          ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
          const std::string what = e.what();
          EXPECT_NE(what.find(part), std::string::npos) << what;
          EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
      };
      if (f.takes_value) refused({f.flag}, "option " + f.flag + " needs a value");
      refused({f.flag + "x"}, "unknown option '" + f.flag + "x' of attnlab " + c.name);
    }
  }
}

// A number as the usage text and the flag's errors write it.
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Issue 39: a number's flag takes the range its widget offers, both read from the field
// table's FieldUi, and the usage text says the same numbers.
TEST(DocumentFlags, ANumberFlagTakesTheRangeOfItsWidget) {
  const std::string text = usage();
  std::set<std::string> checked;
  for (const DocumentFlag& f : document_flags()) {
    Document d;
    SettingRef s;
    try {
      s = setting_ref(d, f.path);
    } catch (const Error&) {
      continue;  // a field no window offers
    }
    int* i = std::get_if<int*>(&s.value) ? *std::get_if<int*>(&s.value) : nullptr;
    float* x = std::get_if<float*>(&s.value) ? *std::get_if<float*>(&s.value) : nullptr;
    if (!i && !x) continue;
    ASSERT_LT(s.ui.lo, s.ui.hi) << f.flag;
    const auto command = static_cast<FlagCommand>(f.commands & -f.commands);
    for (const double v : {s.ui.lo, s.ui.hi}) {
      parse_document_flags({f.flag, number_text(v)}, command, d);
      EXPECT_DOUBLE_EQ(i ? static_cast<double>(*i) : static_cast<double>(*x), static_cast<double>(i ? v : static_cast<float>(v)))
          << f.flag << " " << v;
    }
    const double step = i ? 1.0 : std::max(std::abs(s.ui.hi), 1.0) * 0.01;
    for (const double v : {s.ui.lo - step, s.ui.hi + step}) {
      Document e;
      EXPECT_THROW(parse_document_flags({f.flag, number_text(v)}, command, e), Error) << f.flag << " " << v;
    }
    const std::string range = number_text(s.ui.lo) + ".." + number_text(s.ui.hi);
    const auto line = text.find("  " + f.flag + " ");
    ASSERT_NE(line, std::string::npos) << f.flag;
    EXPECT_NE(text.substr(line, text.find('\n', line) - line).find(range), std::string::npos)
        << f.flag << ": the usage text does not say its range " << range;
    checked.insert(f.flag);
  }
  for (const char* flag : {"--patch", "--temperature", "--base", "--power", "--lambda", "--opacity"})
    EXPECT_TRUE(checked.count(flag)) << flag << " takes no range from the field table";
}

// Every setting a window offers has a label, and a choice one label per value of its enum.
TEST(DocumentWidgets, EverySettingHasALabelAndOneChoicePerValue) {
  const std::vector<std::string> paths = setting_paths();
  EXPECT_GE(paths.size(), 20u);
  const std::map<std::string, std::size_t> counts = {
      {"mask.kind", kMaskKindCount}, {"pos.mode", 3}, {"edge", 2}, {"display.colormap", kColormapCount},
      {"display.normalization", kNormalizationCount}, {"hand_made.head", kHeadCount}};
  for (const std::string& path : paths) {
    Document d;
    const SettingRef s = setting_ref(d, path);
    EXPECT_EQ(s.path, path);
    EXPECT_GT(std::string(s.ui.label).size(), 0u) << path;
    if (const auto* c = std::get_if<ChoiceRef>(&s.value)) {
      ASSERT_TRUE(counts.count(path)) << path << ": a choice the test does not know";
      ASSERT_EQ(s.ui.choices.size(), counts.at(path)) << path;
      for (int k = 0; k < static_cast<int>(s.ui.choices.size()); ++k) {
        c->set(k);
        EXPECT_EQ(c->get(), k) << path;
        Document back;
        apply_json(to_json(d), back);  // every value has a name in the JSON
        EXPECT_EQ(to_json(back), to_json(d)) << path << " " << k;
      }
    }
  }
  Document d;
  const SettingRef mode = setting_ref(d, "pos.mode");
  for (int k = 0; k < 3; ++k)  // one name per mode: the widget's label starts with the flag's
    EXPECT_EQ(mode.ui.choices[static_cast<std::size_t>(k)].rfind(pos_mode_name(static_cast<PosMode>(k)), 0), 0u);
  EXPECT_THROW(setting_ref(d, "vit.recent"), Error);  // no widget
  EXPECT_THROW(setting_ref(d, "no.such"), Error);
}

}  // namespace

// The command queue beside the document (AppState::commands): a view asks, the main loop takes
// each kind at its point in the frame; of several opens the latest wins; kinds do not mix.
TEST(Commands, EachKindIsTakenOnceTheLatestOpenWinsAndNothingIsSaved) {
  AppState s;
  EXPECT_TRUE(s.commands.empty());
  s.commands.open_image("first.jpg");
  s.commands.export_png();
  s.commands.open_image("second.jpg");
  s.commands.open_model("model.safetensors");
  EXPECT_TRUE(s.commands.pending(Commands::Kind::ExportPng));
  EXPECT_FALSE(s.commands.pending(Commands::Kind::ExportCsv));
  const auto open = s.commands.take(Commands::Kind::OpenImage);
  ASSERT_TRUE(open);
  EXPECT_EQ(open->path, "second.jpg") << "the latest open of a kind wins";
  EXPECT_FALSE(s.commands.take(Commands::Kind::OpenImage)) << "taken once";
  EXPECT_TRUE(s.commands.pending(Commands::Kind::ExportPng)) << "taking opens left the export";
  EXPECT_EQ(s.commands.take(Commands::Kind::OpenModel)->path, "model.safetensors");
  EXPECT_TRUE(s.commands.take(Commands::Kind::ExportPng));
  EXPECT_TRUE(s.commands.empty());
  s.commands.redraw();
  EXPECT_TRUE(s.commands.take_redraw());
  EXPECT_FALSE(s.commands.take_redraw()) << "a redraw is asked for once per frame";
  s.commands.export_csv();
  EXPECT_EQ(to_json(s).dump().find("csv"), std::string::npos) << "a command is not a setting: the document does not save it";
}

// The Train tab's source is saved by its name, and read back.
TEST(Document, TheTrainSourceIsSavedByName) {
  Document d;
  d.source = ShownSource::Train;
  const nlohmann::json j = to_json(d);
  EXPECT_EQ(j.at("source"), "train");
  Document back;
  apply_json(j, back);
  EXPECT_EQ(back.source, ShownSource::Train);
}

// Issue 40: the window's --video VIDEO (played from the start, with or without --model and
// --hover-bench), in any order; refused in one line without its path, twice, or with --train.
TEST(GuiArgs, VideoTakesItsPathOnceInAnyOrderAndNotWithTrain) {
  const GuiArgs a = parse_gui_args({"--video", "clip.mp4", "photo.jpg", "--hover-bench", "out.json"});
  EXPECT_EQ(a.video, "clip.mp4");
  EXPECT_EQ(a.image, "photo.jpg");
  EXPECT_EQ(a.hover_bench, "out.json");
  EXPECT_EQ(parse_gui_args({"photo.jpg"}).video, "");
  for (const auto& [args, part] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--video"}, "--video needs the path of a video file"},
           {{"--video", "a.mp4", "--video", "b.mp4"}, "--video given twice"},
           {{"--hover-bench", "out.json", "--train", "--video", "a.mp4"}, "no --video with it"}}) {
    try {
      parse_gui_args(args);
      ADD_FAILURE() << part << ": accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
}

// Issue 47: the window's first picture shows something. The first start's document (the
// defaults with kFirstStartTemperature) on the safari photo: the colour head's row for the
// default query on the giraffe is visibly structured, max/min at least 5; at Settings' τ = 1 the
// same row is nearly flat (the note the map shows then), so the test fails with τ = 1 as the first.
TEST(FirstPicture, TheColourHeadsRowForTheDefaultQueryIsStructured) {
  Document d;
  d.attention.temperature = kFirstStartTemperature;
  const Image photo = load_image(attnlab::testing::asset("safari.jpg"));
  const Reference first(photo, d.attention);
  const int i = token_at(first.grid(), d.hand_made.cell.col, d.hand_made.cell.row);
  const auto w = first.row(0, i).weights;
  const RowFlatness f = row_flatness(std::span<const float>(w.data(), static_cast<size_t>(w.size())), {});
  std::printf("first start (tau = %g, K = %d, query (%d,%d)): max/min %.3f, H/log N %.4f\n", static_cast<double>(kFirstStartTemperature),
              d.attention.patch, d.hand_made.cell.col, d.hand_made.cell.row, f.max_over_min, f.entropy_ratio);
  EXPECT_GE(f.max_over_min, 5.0);
  EXPECT_FALSE(f.nearly_uniform);
  Settings flat = d.attention;
  flat.temperature = 1.0f;
  const Reference warm(photo, flat);
  const auto v = warm.row(0, i).weights;
  const RowFlatness g = row_flatness(std::span<const float>(v.data(), static_cast<size_t>(v.size())), {});
  EXPECT_LT(g.max_over_min, 2.0);
}

// ---- Issue 48, item 6: one flag style, one range per setting.

namespace {

// The error text of `f()`, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// `d`'s JSON with the setting at dotted `path` set to `v`.
nlohmann::json with_setting(const Document& d, std::string path, double v, bool whole) {
  nlohmann::json j = to_json(d);
  std::replace(path.begin(), path.end(), '.', '/');
  j[nlohmann::json::json_pointer("/" + path)] = whole ? nlohmann::json(static_cast<std::int64_t>(std::lround(v))) : nlohmann::json(v);
  return j;
}

}  // namespace

// A number setting's range is written once (its FieldRange in the field table), and its flag,
// apply_json (a sidecar, render --from, the remembered settings) and the widgets read it there:
// just outside it, the flag and the settings file both refuse the value, naming the flag or the
// setting; at its ends both take it. `--mass` is a percent of the 0 … 1 share; `--resize 0` (the
// model's own size) is the file's and the widget's, no flag's.
TEST(FieldRanges, AValueOutsideTheFieldsRangeIsRefusedByItsFlagAndByTheSettingsFile) {
  struct Case {
    std::string path;
    double times;    // the flag's text per unit of the field
    double flag_lo;  // the flag's lowest value when above the range's
  };
  const Case cases[] = {{"cka.count", 1, -1}, {"vit.mass", 100, -1}, {"vit.resize", 1, 1}, {"display.opacity", 1, -1},
                        {"pos.P", 1, -1},     {"train.probe", 1, -1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const FieldRange r = field_range(c.path);
    ASSERT_LT(r.lo, r.hi);
    const bool whole = to_json(Document{})[nlohmann::json::json_pointer("/" + [p = c.path]() mutable {
                         std::replace(p.begin(), p.end(), '.', '/');
                         return p;
                       }())].is_number_integer();
    const double step = whole ? 1.0 : (r.hi - r.lo) * 0.01;
    const std::string flag = flag_of_field(c.path);
    unsigned commands = 0;
    for (const DocumentFlag& f : document_flags())
      if (f.flag == flag) commands = f.commands;
    const auto command = static_cast<FlagCommand>(commands & -commands);
    // Outside: refused by both, nothing changed.
    for (const double v : {r.lo - step, r.hi + step}) {
      if (r.on_read == FieldRange::OnRead::Refuse) {
        Document d;
        const std::string what = error_of([&] { apply_json(with_setting(Document{}, c.path, v, whole), d); });
        EXPECT_NE(what.find("'" + c.path + "'"), std::string::npos) << v << ": " << what;
        EXPECT_EQ(to_json(d), to_json(Document{})) << v;
      }
      if (!flag.empty()) {
        Document d;
        const std::string what = error_of([&] { parse_document_flags({flag, number_text(v * c.times)}, command, d); });
        EXPECT_NE(what.find(flag), std::string::npos) << v << ": " << what;
      }
    }
    // The ends: taken by both (the flag from its own lowest value).
    for (const double v : {r.lo, r.hi}) {
      Document d;
      apply_json(with_setting(Document{}, c.path, v, whole), d);
      EXPECT_DOUBLE_EQ(leaves_of(d).at(c.path).get<double>(), whole ? v : static_cast<double>(static_cast<float>(v))) << v;
      if (!flag.empty() && v >= c.flag_lo) {
        Document e;
        parse_document_flags({flag, number_text(v * c.times)}, command, e);
        EXPECT_NEAR(leaves_of(e).at(c.path).get<double>(), v, 1e-6) << v;
      }
    }
    if (!flag.empty() && c.flag_lo > r.lo) {
      Document d;
      EXPECT_NE(error_of([&] { parse_document_flags({flag, number_text(r.lo)}, command, d); }).find(flag), std::string::npos);
    }
  }
  // vit's --cka-count (no document) takes the field's range too.
  const FieldRange count = field_range("cka.count");
  for (const double v : {count.lo - 1, count.hi + 1}) {
    const std::string what = error_of([&] { run_vit({"--cka-count", number_text(v)}); });
    EXPECT_NE(what.find("--cka-count must be between " + number_text(count.lo) + " and " + number_text(count.hi)), std::string::npos)
        << what;
  }
  EXPECT_THROW(field_range("vit.recent"), Error);  // no number
}

// The window's own state outside its range (the UI scale, the zoom) comes back as its default
// instead of refusing the file; the UI scale's widget and keys take the same range.
TEST(FieldRanges, AViewsStateOutsideItsRangeComesBackAsItsDefault) {
  for (const std::string path : {"classroom.ui_scale", "display.zoom"}) {
    SCOPED_TRACE(path);
    const FieldRange r = field_range(path);
    EXPECT_EQ(r.on_read, FieldRange::OnRead::Default);
    const double def = leaves_of(Document{}).at(path).get<double>();
    for (const double v : {r.lo * 0.9, r.hi * 1.1}) {
      Document d;
      apply_json(with_setting(Document{}, path, v, false), d);
      EXPECT_DOUBLE_EQ(leaves_of(d).at(path).get<double>(), def) << v;
    }
    for (const double v : {r.lo, r.hi}) {
      Document d;
      apply_json(with_setting(Document{}, path, v, false), d);
      EXPECT_DOUBLE_EQ(leaves_of(d).at(path).get<double>(), static_cast<double>(static_cast<float>(v))) << v;
    }
  }
  Document d;
  const SettingRef scale = setting_ref(d, "classroom.ui_scale");
  EXPECT_EQ(scale.ui.lo, field_range("classroom.ui_scale").lo);
  EXPECT_EQ(scale.ui.hi, field_range("classroom.ui_scale").hi);
}

// parse_flags' rows: a value's own missing words, a flag refused when given twice, a repeatable
// one collecting, arguments that are no flag handed to `positional` or refused in the command's
// own words, and read_first_flags reading its rows wherever they stand.
TEST(CommandFlags, RowsSayWhatTheirValueIsRefuseASecondOneAndArgumentsGoWhereTheRulesSay) {
  std::string model;
  std::vector<std::string> files, positional;
  bool force = false;
  const std::vector<CommandFlag> flags = {
      {"--model", true, [&](const std::string& t, const std::string&) { model = t; }, "a path", true, true},
      {"--file", true, [&](const std::string& t, const std::string&) { files.push_back(t); }},
      {"--force", false, [&](const std::string&, const std::string&) { force = true; }},
  };
  EXPECT_EQ(error_of([&] { parse_flags({"--model"}, flags); }), "--model needs a path");
  EXPECT_EQ(error_of([&] { parse_flags({"--file"}, flags); }), "option --file needs a value");
  EXPECT_EQ(error_of([&] { parse_flags({"--model", "a", "--model", "b"}, flags); }), "--model given twice");
  EXPECT_EQ(error_of([&] { parse_flags({"--bogus"}, flags, {" of attnlab x"}); }), "unknown option '--bogus' of attnlab x (see attnlab --help)");
  EXPECT_EQ(error_of([&] { parse_flags({"photo.jpg"}, flags); }), "unknown option 'photo.jpg' (see attnlab --help)");
  const auto given = parse_flags({"--file", "a", "--force", "--file", "b"}, flags);
  EXPECT_EQ(files, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(force);
  EXPECT_EQ(given, (std::vector<std::string>{"--file", "--force", "--file"}));
  FlagRules rules;
  rules.positional = [&](const std::string& a) { positional.push_back(a); };
  parse_flags({"one", "--force", "two"}, flags, rules);
  EXPECT_EQ(positional, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(error_of([&] { parse_flags({"--bogus"}, flags, rules); }), "unknown option '--bogus' (see attnlab --help)");
  FlagRules only;
  only.refused = [](const std::string& a) { return "takes nothing else, got '" + a + "'"; };
  EXPECT_EQ(error_of([&] { parse_flags({"--force", "x"}, flags, only); }), "takes nothing else, got 'x'");
  model.clear();
  files.clear();
  read_first_flags({"--bogus", "--file", "f", "--model", "m"}, flags);
  EXPECT_EQ(model, "m");
  EXPECT_TRUE(files.empty()) << "--file is not read first";
  EXPECT_EQ(error_of([&] { read_first_flags({"--bogus", "--model"}, flags); }), "--model needs a path");
}

// The window's options through its table: each path once, one image, the dispatcher's list of
// them (gui_flag_names) the table's.
TEST(GuiArgs, TheWindowsTableTakesEachPathOnceAndOneImage) {
  const GuiArgs a = parse_gui_args({"--hover-bench", "out.json", "photo.jpg", "--train"});
  EXPECT_EQ(a.image, "photo.jpg");
  EXPECT_EQ(a.hover_bench, "out.json");
  EXPECT_TRUE(a.train);
  for (const auto& c : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--model"}, "--model needs a path (a .safetensors or .pth file, or its folder)"},
           {{"--hover-bench"}, "--hover-bench needs the path of its JSON report"},
           {{"--model", "a", "--model", "b"}, "--model given twice"},
           {{"--hover-bench", "a.json", "--hover-bench", "b.json"}, "--hover-bench given twice"},
           {{"a.jpg", "b.jpg"}, "one image at a time: 'b.jpg' is one too many (see attnlab --help)"},
           {{"a.jpg", "--bogus"}, "unknown option '--bogus' (see attnlab --help)"},
           {{"--train"}, "--train goes with --hover-bench OUT.json (see attnlab --help)"}})
    EXPECT_EQ(error_of([&] { parse_gui_args(c.first); }), c.second);
  std::set<std::string> names;
  for (const CommandFlagName& f : gui_flag_names()) names.insert(f.flag);
  EXPECT_EQ(names, (std::set<std::string>{"--model", "--hover-bench", "--video", "--train"}));
}

// `attnlab models pull`: --file repeatable, one repository, its own words for the rest.
TEST(CommandFlags, ModelsPullTakesOneRepositoryAndAnyNumberOfFiles) {
  for (const auto& c : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"pull", "--file"}, "--file needs a file name (e.g. model.safetensors)"},
           {{"pull", "org/a", "--file"}, "--file needs a file name (e.g. model.safetensors)"},
           {{"pull", "--bogus"}, "unknown option '--bogus' for models pull (see attnlab --help)"},
           {{"pull", "org/a", "org/b"}, "one repository at a time: 'org/b' is one too many"},
           {{"pull", "--file", "config.json"}, "models pull needs a repository, e.g. attnlab models pull timm/vit_small_patch16_224.dino"}})
    EXPECT_EQ(error_of([&] { run_models(c.first); }), c.second);
}
