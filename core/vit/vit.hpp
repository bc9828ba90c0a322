#pragma once
// A real vision transformer (ViT, Dosovitskiy et al. 2021) read from a safetensors checkpoint
// in timm's, DINO/DINOv2's or Hugging Face's tensor names, its architecture inferred from the
// tensors' shapes. The forward pass itself is in VitRunner's two implementations: the CPU path
// (vit_cpu.hpp) and the GPU engine (gpu/vit_engine.hpp), one for one; both leave a VitPass.
// The formulas are in docs/MATH.md, section "A learned ViT". Declared here, defined by idea:
// loading (checkpoint -> weights, by its model family: core/vit/model_family.hpp) in vit_load.cpp, the
// input (resizing, patches, the position embedding resampled) in vit_input.cpp, the runner's
// choice and the memory budget in vit_runner.cpp, reading a finished pass in vit_pass.cpp.
#include "core/io/image.hpp"
#include "core/io/safetensors.hpp"
#include "core/base/types.hpp"
#include "core/vit/tensor_names.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// Which tokens the checkpoint's position embedding covers.
enum class PosLayout {
  AllTokens,       ///< [cls, registers…, patches] (timm default, HF)
  ClsAndPatches,   ///< [cls, patches]; registers are inserted after it with none (DINOv2)
  PatchesOnly,     ///< the patches only, added before the prefix is prepended (timm no_embed_class)
};

/// How the classifier reads the sequence (timm's global_pool).
enum class VitPooling { Token, Average };

/// What the tensors and the config files say about the model.
struct VitArchitecture {
  VitNaming naming = VitNaming::Timm;
  int depth = 0;        ///< number of blocks (layers)
  int heads = 0;        ///< H; head width D/H
  int D = 0;            ///< token width (embed_dim / hidden_size)
  int patch = 0;        ///< patch size P in input pixels (kernel = stride of the patch embedding)
  int mlp_hidden = 0;   ///< width of the MLP's hidden layer
  int registers = 0;    ///< register tokens (Darcet et al. 2024)
  int pos_rows = 0, pos_cols = 0;  ///< the patch grid the position embedding was trained on
  PosLayout pos_layout = PosLayout::AllTokens;
  bool layer_scale = false;
  bool qkv_bias = true;
  float eps = 1e-6f;    ///< LayerNorm's ε
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f}, std{0.229f, 0.224f, 0.225f};  ///< per RGB channel
  int classes = 0;      ///< classifier outputs (0: no classifier)
  int token_head = 0;   ///< outputs of a head applied to every token (timm's global_pool "", e.g. masked-patch reconstruction: 3P²); not read, no classifier
  VitPooling pooling = VitPooling::Token;
  std::vector<std::string> labels;  ///< class names, `classes` of them (may be "class N")
  TensorDType dtype = TensorDType::F32;  ///< of the patch embedding's weight
  std::int64_t parameters = 0;      ///< elements of all tensors used
  std::string heads_from, eps_from;  ///< where heads and ε came from ("config.json", "--heads", "default D/64")

  int prefix() const { return 1 + registers; }  ///< tokens before the patches: cls, registers
};

/// One transformer block's weights, in PyTorch's Linear layout (out × in).
struct VitBlock {
  RowVector ln1_w, ln1_b;        ///< D
  Matrix W_qkv;                  ///< 3D × D: rows [0,D) W_q, [D,2D) W_k, [2D,3D) W_v
  RowVector b_qkv;               ///< 3D (zeros without qkv bias)
  Matrix W_proj;                 ///< D × D
  RowVector b_proj, ls1;         ///< D; ls1 = ones without layer scale
  RowVector ln2_w, ln2_b;        ///< D
  Matrix W_fc1;                  ///< mlp_hidden × D
  RowVector b_fc1;               ///< mlp_hidden
  Matrix W_fc2;                  ///< D × mlp_hidden
  RowVector b_fc2, ls2;          ///< D
};

/// A loaded ViT: weights as float32, whatever they were stored in.
struct VitModel {
  VitArchitecture arch;
  std::uint64_t id = 0;        ///< unique to this load in this process, for caches of its weights
  std::filesystem::path file;  ///< the checkpoint file read (.safetensors, or a PyTorch .pth/.pt/.bin)
  std::string sha256;          ///< SHA-256 of its bytes as read by the load (64 lowercase hex digits; "" when built from values in memory)
  Matrix W_patch;              ///< D × 3P²: the conv kernel flattened in (channel, y, x) order
  RowVector b_patch;           ///< D
  RowVector cls;               ///< D
  Matrix registers;            ///< registers × D
  Matrix pos;                  ///< position embedding as stored: (covered tokens) × D
  std::vector<VitBlock> blocks;
  RowVector norm_w, norm_b;    ///< final LayerNorm (timm `norm` / HF `layernorm`); fc_norm for Average pooling
  Matrix W_head;               ///< classes × D
  RowVector b_head;            ///< classes
};

/// What the command line may override.
struct VitLoadOptions {
  std::optional<int> heads;    ///< --heads
  std::optional<float> eps;    ///< --eps
  /// Looked at while the weights are read (each 1 MiB piece, each PyTorch storage); when set,
  /// loading throws Error("cancelled"). Null: never. The app's load job passes its stop flag.
  const std::atomic<bool>* stop = nullptr;
};

/// Loads a checkpoint: a .safetensors file, a PyTorch checkpoint (.pth, .pt, .bin: a zip
/// archive as torch.save writes since torch 1.6, told by its first bytes; read by
/// open_pytorch(), core/io/pytorch_checkpoint.hpp, which picks DINO's teacher and drops `module.`
/// and `backbone.` prefixes), or a folder holding model.safetensors (or, without it,
/// pytorch_model.bin). A
/// config.json beside it (HF: num_attention_heads, layer_norm_eps, id2label; timm:
/// model_args.num_heads, pretrained_cfg.mean/std, label_names, global_pool) and a
/// preprocessor_config.json (HF: image_mean, image_std) are read where present; options
/// override them; without either, H = D/64 and ε = 1e-6 (timm's). The header is read and
/// everything checked first; then the weights, in one pass over the file that converts them
/// into the model's matrices and hashes the file (model.sha256): no second copy of the file in
/// memory, no second read (a PyTorch checkpoint's tensors are read and converted to float32
/// first, then copied; its file is hashed in a pass of its own: model.sha256 is the SHA-256 of
/// its bytes all the same). Throws Error with one line for everything open_safetensors() and
/// SafetensorsFile::read() refuse (a file truncated while it is read included), everything
/// open_pytorch() refuses for a PyTorch checkpoint, a file that is
/// not a ViT (naming tensors it has), missing tensors (named) or unknown ones (named), shapes
/// that do not fit together (named), heads that do not divide D, and a bad config file.
VitModel load_vit(const std::filesystem::path& path, const VitLoadOptions& options = {});

/// The file load_vit() reads for `path`: `path` itself unless it is a folder; in a folder its
/// model.safetensors, or without one its pytorch_model.bin (Hugging Face's two names). Throws
/// Error with one line for a folder holding neither.
std::filesystem::path checkpoint_file(const std::filesystem::path& path);

/// The same from tensors holding their values or from a file opened by open_safetensors() or
/// index_safetensors() (read by file.read() once everything is checked; model.sha256 is its
/// hash, "" when every tensor held its values), its model family detected and every tensor
/// found by the family's names (core/vit/model_family.hpp), with the config files' contents as JSON text
/// ("" when absent); `what` names the checkpoint in errors.
VitModel vit_from_tensors(SafetensorsFile file, const std::string& config_json, const std::string& preprocessor_json,
                          const VitLoadOptions& options, const std::string& what);

/// The image as the model sees it: the patch grid and each patch's normalized pixels.
struct VitInput {
  int width = 0, height = 0;  ///< pixels used (after --resize, cropped to multiples of P)
  int cols = 0, rows = 0;     ///< patch grid; N = cols·rows patches, T = prefix + N tokens
  int scaled_width = 0, scaled_height = 0;  ///< the image after --resize, before the crop
  Matrix patches;             ///< N × 3P², raster order, each row (channel, y, x) like W_patch's columns
  int N() const { return cols * rows; }
};

/// The image scaled so its short side is `resize` pixels, the long one keeping the aspect ratio
/// (rounded; stb_image_resize's default filter, values clamped to [0,1]); the image itself when
/// `resize` is 0 or already its short side. What vit_input() patchifies before its crop. Throws
/// Error when the result would exceed kMaxImagePixels.
Image vit_scaled_image(const Image& image, int resize);

/// Prepares an image: optionally scales it so its short side is `resize` pixels (0: as it is;
/// stb_image_resize's default filter), crops width and height down to multiples of P (the
/// right and bottom remainder), normalizes every channel as (x − mean)/std. Throws Error when
/// the image has no pixels, is smaller than one patch, or `resize` is negative.
VitInput vit_input(const VitModel& model, const Image& image, int resize = 0);

/// The position embedding for a grid of `rows` × `cols` patches, laid out as the model's pos
/// (rows for the covered prefix tokens, then the patches in raster order): the stored one when
/// the grid is the checkpoint's, otherwise its patch part resampled the way the checkpoint's
/// own library does it — timm (and DINOv2) names: timm's resample_abs_pos_embed, i.e.
/// F.interpolate(mode="bicubic", antialias=True, align_corners=False), Keys' kernel with
/// a = −0.5, widened by the scale when shrinking; HF names: ViTEmbeddings.interpolate_pos_encoding,
/// F.interpolate(mode="bicubic", align_corners=False), a = −0.75, no antialias. See docs/MATH.md.
Matrix vit_position_embedding(const VitModel& model, int rows, int cols);

/// The tokens entering block 0, T × D: [cls, registers…, patches] with the position embedding
/// added as the checkpoint's layout says. `patch_tokens` is the patch embedding (N × D,
/// conv output plus its bias).
Matrix vit_initial_tokens(const VitModel& model, const Matrix& patch_tokens, const Matrix& pos);

/// What one forward pass leaves behind for reading attention afterwards, in O(L·T·D) memory,
/// never the L·H·T² weights themselves: per layer the queries and keys of every head, from which
/// any row of A is one pass over the keys (eq. 26.20 with m = D/H); the norms of each block's
/// output tokens; the mean attention distance, streamed over the rows while they were computed;
/// the classifier's logits. Made by a VitRunner; read with the vit_* functions below, the same
/// whichever runner made it.
struct VitPass {
  int T = 0;  ///< tokens: prefix + N
  int H = 0;  ///< heads
  int m = 0;  ///< head width D/H
  std::vector<Matrix> Q, K;             ///< per layer T × D: q_i and k_j with their bias, not yet scaled by 1/√m; head h in columns [h·m, (h+1)·m)
  std::vector<RowVector> token_norms;   ///< per layer T values: ‖x_t‖ of the block's output tokens (before the final LayerNorm)
  Matrix distance;                      ///< layers × heads: mean attention distance in input pixels (vit_attention_distance())
  std::vector<float> logits;            ///< the classifier's logits (empty without a classifier)
  std::string path;                     ///< the runner that made it: "cpu" or "gpu"
  int layers() const { return static_cast<int>(Q.size()); }
  /// Bytes held (Q, K, norms, distance, logits).
  std::int64_t bytes() const;
};

/// Bytes a forward pass of `arch` on T tokens needs at its peak beside the weights: the kept
/// VitPass (2·L·T·D floats) and the working activations (tokens, their LayerNorm, q/k/v, the
/// attention output, the MLP's hidden layer, and a block of score rows per thread).
std::int64_t vit_pass_bytes(const VitArchitecture& arch, int T);

/// The memory a forward pass may use beside the weights, in bytes: ATTNLAB_MEMORY_BUDGET_MB when
/// set (a positive integer), otherwise a quarter of the machine's physical memory, at least
/// 256 MiB.
std::int64_t vit_memory_budget();

/// Refuses an input whose forward pass would not fit `budget` bytes (vit_pass_bytes()), before
/// anything is allocated: throws Error with one line saying the tokens, the MiB needed and the
/// largest --resize (short side in pixels) that would fit.
void vit_check_budget(const VitArchitecture& arch, const VitInput& input, std::int64_t budget);

/// Refuses an input whose work, `bytes(T)` for its T tokens, would not fit `budget`: throws
/// Error with one line, "the image gives T tokens: <what> would need N MiB, over the B MiB
/// memory budget; use --resize S or less" (S the largest short side, a multiple of P, whose
/// grid at this image's aspect fits). vit_check_budget() is this for the forward pass.
void vit_check_budget_for(const VitArchitecture& arch, const VitInput& input, std::int64_t budget, const char* what,
                          const std::function<std::int64_t(int)>& bytes);

/// Which runner does the forward pass (core/gpu/vit_backend.hpp chooses): auto takes the faster
/// of the GPU engine and the CPU path as measured on a hardware GPU (core/vit/vit_auto.hpp,
/// remembered), and the CPU path on a software rasterizer or without OpenGL 4.3.
enum class VitBackend { Auto, Gpu, Cpu };

/// "auto", "gpu" or "cpu"; throws Error naming `flag` otherwise.
VitBackend parse_vit_backend(const std::string& text, const char* flag = "--backend");
const char* vit_backend_name(VitBackend backend);

/// Whether an OpenGL renderer string (GL_RENDERER) names a software rasterizer: llvmpipe,
/// softpipe or SwiftShader (case-insensitive).
bool is_software_renderer(std::string_view renderer);

/// The forward pass of a ViT (docs/MATH.md, "A learned ViT"), on the CPU (VitCpuRunner,
/// core/vit/vit_cpu.hpp) or the GPU (VitGpuRunner, core/gpu/vit_engine.hpp). What it leaves is a
/// VitPass; every reading of attention goes through the functions below.
class VitRunner {
 public:
  virtual ~VitRunner() = default;
  /// "cpu" or "gpu": which path this is (the CLI's --backend, the sidecar's `vit.backend`).
  virtual const char* path() const = 0;
  /// Runs `model` on `input`. `stop`, when set from another thread, makes it throw
  /// Error("cancelled") between layers. Throws Error, before allocating the pass, when it would
  /// not fit `budget` bytes (vit_check_budget()) or the device.
  virtual VitPass run(const VitModel& model, const VitInput& input, std::int64_t budget,
                      const std::atomic<bool>* stop = nullptr) = 0;
};

/// How heads are combined for one map.
enum class HeadFusion { Mean, Max, Min };
/// A head index or a fusion of all heads.
struct HeadChoice {
  int head = -1;                  ///< ≥ 0: that head
  HeadFusion fusion = HeadFusion::Mean;  ///< when head < 0
  bool operator==(const HeadChoice&) const = default;
};

/// Row `query` of every head's A in layer `layer`: H × T values, head after head (eq. 26.20,
/// a_ij = softmax_j(q_i·k_j/√m)). Throws Error when layer or query is outside the pass.
std::vector<float> vit_attention_rows(const VitPass& pass, int layer, int query);

/// Softmax of each row of S in place, the row's largest score subtracted before exp (eq. 26.20).
void vit_softmax_rows(Eigen::Ref<Matrix> S);

/// Rows [first, first + count) of head `head`'s A in layer `layer`, count × T, into `out`
/// (resized). The one place a ViT's attention weights are computed from q and k.
void vit_attention_block(const VitPass& pass, int layer, int head, int first, int count, Matrix& out);

/// One head's whole A in layer `layer`, T × T (T² floats: the matrix view and exports).
Matrix vit_attention(const VitPass& pass, int layer, int head);

/// Query `query`'s row in layer `layer` for a head or fused over heads, keys restricted to the
/// patch tokens (prefix keys dropped, not renormalized): N values in raster order.
std::vector<float> vit_patch_row(const VitPass& pass, int prefix, int layer, HeadChoice head, int query);

/// Row `query` of the attention rollout (Abnar & Zuidema 2020) up to `layer`: per layer the
/// heads fused elementwise, Â = (A+I)/2 with rows renormalized, R_l = Â_l Â_(l−1) ⋯ Â_0, so the
/// row is e_queryᵀ Â_layer ⋯ Â_0: `layer` + 1 vector–matrix products, each streaming over
/// blocks of A's rows (never T × T, never T³). T values, prefix keys included.
std::vector<float> vit_rollout_row(const VitPass& pass, int layer, HeadFusion fusion, int query);

/// Mean attention distance (the ViT paper's fig. 7): for every layer and head, the mean over
/// patch queries i of Σ_j a_ij ‖c_i − c_j‖ over patch keys j, c = patch centres in input
/// pixels; streamed over blocks of rows. layers × heads. (VitPass::distance holds it already;
/// this recomputes it from q and k.)
Matrix vit_attention_distance(const VitPass& pass, int prefix, int cols, int rows, int patch);

/// Distances ‖c_i − c_j‖ in input pixels between the centres of a cols × rows grid of
/// `patch`-pixel patches, kept as one profile per row offset ((2·cols − 1) values each), so
/// that a query's weighted sum over the N patch keys reads contiguous memory and no N × N table
/// is held (the mean attention distance, streamed over rows).
class PatchDistances {
 public:
  PatchDistances(int cols, int rows, int patch);
  /// Σ_j w[j]·‖c_query − c_j‖ over the N patch keys, `w` N values in raster order; `query` a
  /// patch index in [0, N).
  double weighted_sum(int query, const float* w) const;

 private:
  int cols_, rows_;
  std::vector<float> profiles_;  ///< rows × (2·cols − 1): P·√((k − cols + 1)² + dy²)
};

/// The classifier's top `k` classes: (class index, softmax probability), most likely first.
std::vector<std::pair<int, float>> vit_top_classes(std::span<const float> logits, int k);

/// The --info text: depth, heads, D, patch, prefix tokens, registers, layer scale, parameters,
/// dtype…, one "key: value" per line.
std::string vit_info(const VitModel& model);

}  // namespace attnlab
