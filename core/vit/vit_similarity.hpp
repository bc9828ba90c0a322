#pragma once
// Representational similarity of a loaded ViT's layers (issue 29, item 5; the deck's CKA slide):
// the tokens entering block 0 and leaving every block of a VitModel over a set of example
// images, as the CPU path's own forward pass computes them (VitCpuRunner with a VitTokenSink),
// and the linear CKA (core/vit/cka.hpp; Kornblith et al. 2019) between every representation of
// model A and every representation of model B over the same examples. With A = B it is the
// layer × layer matrix of one model; with two models (two trained runs, two checkpoints) the
// same code compares A's layers with B's. docs/MATH.md, "Representational similarity (CKA)".
#include "core/io/image.hpp"
#include "core/vit/vit.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

/// The names of a model's depth + 1 representations, as the CKA view and the CSV label them:
/// "input" (the tokens entering block 0: patch embedding, prefix tokens and positions), then
/// "L0" … "L{depth−1}" (the tokens leaving block l, before the final LayerNorm).
std::vector<std::string> vit_cka_labels(int depth);

/// Bytes that the representations of `rows` example tokens of a model of `arch` take while
/// their CKA is computed: depth + 1 matrices of rows × D in float, and cka_matrix()'s centred
/// copy of each in double.
std::int64_t vit_cka_bytes(const VitArchitecture& arch, std::int64_t rows);

/// Calls progress(images done, images in all) from the job's thread.
using CkaProgress = std::function<void(int done, int total)>;

/// The tokens entering block 0 and leaving each block of `model` for every image: depth + 1
/// matrices, each (Σ_k T_k) × D, image after image, each image's T tokens in their order
/// [cls, registers…, patches] — every token is one example (docs/MATH.md). Each image is
/// prepared as VitRun does (vit_input(): scaled so its short side is `resize` pixels, 0 the
/// model's trained size vit_trained_size(), then cropped to whole patches) and run by a
/// VitCpuRunner of `threads` threads (0: its default). `stop` set by another thread makes it
/// throw Error("cancelled"). Throws Error for no image, an image smaller than a patch, or a
/// pass that does not fit `budget` (vit_check_budget()).
std::vector<Matrix> vit_layer_tokens(const VitModel& model, std::span<const Image> images, int resize, std::int64_t budget,
                                     int threads = 0, const std::atomic<bool>* stop = nullptr, const CkaProgress& progress = {});

/// A layer × layer CKA matrix and what it was computed over.
struct VitCka {
  Eigen::MatrixXd cka;          ///< rows: a's representations, columns: b's (vit_cka_labels())
  std::int64_t examples = 0;    ///< tokens in all: the rows of every representation
};

/// The linear CKA between every representation of `a` (rows: vit_cka_labels(a's depth)) and
/// every one of `b` (columns) over the same examples: the tokens of `images`, each model
/// preparing them as vit_layer_tokens() does. When `b` is `a` (the same object) the tokens are
/// computed once and the matrix is symmetric with ones on its diagonal. Checked before any
/// pass: at least one image; both models giving the same number of tokens per image (the same
/// examples; else one line naming both counts); at least 2 tokens in all; the representations
/// of both models within `budget` bytes (vit_cka_bytes(); else one line naming how many images
/// would fit). Progress counts images over both models.
VitCka vit_cka(const VitModel& a, const VitModel& b, std::span<const Image> images, int resize, std::int64_t budget,
                        int threads = 0, const std::atomic<bool>* stop = nullptr, const CkaProgress& progress = {});

}  // namespace attnlab
