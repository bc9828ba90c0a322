#include "core/hand_made/hand_made.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/heads.hpp"

#include <algorithm>

namespace attnlab {

namespace {

class ReferenceModel final : public HandMadeModel {
 public:
  std::string name() const override { return "CPU reference"; }
  std::string short_name() const override { return _("CPU reference"); }

  void set_image(const Image& image, const Settings& settings) override {
    auto fresh = std::make_unique<Reference>(image, settings);  // throws: nothing changed
    reference_ = std::move(fresh);
    image_ = image;
  }
  void set_settings(const Settings& settings) override {
    auto fresh = std::make_unique<Reference>(image_, settings);
    reference_ = std::move(fresh);
  }

  RowSet rows(int query) override {
    const Reference& ref = current();
    if (query < 0 || query >= ref.N())
      throw Error(text_format(_("query token %d is outside [0,%d)"), query, ref.N()));
    RowSet r;
    r.query = query;
    r.N = ref.N();
    r.weights.resize(static_cast<size_t>(kHeadCount) * r.N);
    r.logits.resize(r.weights.size());
    for (int h = 0; h < kHeadCount; ++h) {
      const RowResult row = ref.row(h, query);
      std::copy(row.weights.data(), row.weights.data() + r.N, r.weights.begin() + static_cast<std::ptrdiff_t>(h) * r.N);
      std::copy(row.logits.data(), row.logits.data() + r.N, r.logits.begin() + static_cast<std::ptrdiff_t>(h) * r.N);
      r.empty[static_cast<size_t>(h)] = row.empty;
    }
    return r;
  }
  Matrix tokens() override { return current().X(); }
  HeadQKV qkv(int head) override { return current().qkv(checked(head)); }
  Matrix output(int head) override { return current().output(checked(head)); }
  Matrix merged_output() override { return current().merged_output(); }
  Matrix matrix(int head) override {
    const Reference& ref = current();
    const size_t bytes = static_cast<size_t>(ref.N()) * ref.N() * 4;
    if (bytes > max_matrix_bytes())
      throw Error(text_format(_("the full attention matrix needs %zu MiB; choose a larger patch size"), bytes >> 20));
    check_memory(bytes, std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
                 text_format(_("the full attention matrix of %d tokens"), ref.N()), _("choose a larger patch size"));
    return ref.matrix(checked(head));
  }
  int N() const override { return current().N(); }
  // Streaming: the rows of one image row at a time (b × N floats), pooled and dropped.
  void pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image) override {
    const Reference& ref = current();
    check_pool_rows(ref.N(), head, first, count, image);
    const int N = ref.N();
    std::vector<float> band;
    for (int r = first; r < first + count; ++r) {
      band.resize(static_cast<size_t>(image.last(r) - image.first(r)) * static_cast<size_t>(N));
      for (int i = image.first(r); i < image.last(r); ++i) {
        const RowResult row = ref.row(head, i);
        std::copy(row.weights.data(), row.weights.data() + N,
                  band.begin() + static_cast<std::ptrdiff_t>(i - image.first(r)) * N);
      }
      pool_block_row(image, r, band, &ref.setup().mask, pooling);
    }
  }
  std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x) override {
    const Reference& ref = current();
    const Matrix Wq = query_key_weights(ref.heads()[static_cast<size_t>(checked(head))].W_q, ref.settings().pos,
                                        static_cast<int>(ref.P().cols()));
    if (x.size() != Wq.cols())
      throw Error(text_format(_("a question token needs %lld values"), static_cast<long long>(Wq.cols())));
    const RowResult r = attention_row_for(x * Wq.transpose(), ref.qkv(head).K, ref.settings().temperature);
    return {std::vector<float>(r.weights.data(), r.weights.data() + r.weights.size()),
            std::vector<float>(r.logits.data(), r.logits.data() + r.logits.size())};
  }

 private:
  const Reference& current() const {
    if (!reference_) throw Error(_("no image loaded"));
    return *reference_;
  }
  static int checked(int head) {
    if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
    return head;
  }
  std::unique_ptr<Reference> reference_;
  Image image_;
};

}  // namespace

void check_pool_rows(int N, int head, int first, int count, const BlockImage& image) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  if (image.N != N || image.side < 1 || image.values.size() != static_cast<size_t>(image.side) * image.side ||
      image.all_zero.size() != image.values.size())
    // TRANSLATORS: N is the number of tokens; empty_block_image is a function's name.
    throw Error(text_format(_("the pooled image is for N = %d, the model has N = %d tokens (make it with empty_block_image)"),
                            image.N, N));
  if (first < 0 || count < 0 || first + count > image.side)
    throw Error(text_format(_("image rows %d..%d are outside [0,%d)"), first, first + count - 1, image.side));
}

BlockImage HandMadeModel::pooled_matrix(int head, int max_side, Pooling pooling) {
  if (head < 0 || head >= kHeadCount) throw Error(text_format(_("no head %d"), head));
  const int n = N();
  BlockImage image = empty_block_image(n, max_side);
  // Bands of about 2^23 weights: each call stays short (a GPU driver may stop a long dispatch).
  const long long per_row = static_cast<long long>(image.block) * n;
  const int band = static_cast<int>(std::clamp<long long>((1ll << 23) / per_row, 1, image.side));
  for (int r = 0; r < image.side; r += band) pool_matrix_rows(head, pooling, r, std::min(band, image.side - r), image);
  return image;
}

std::unique_ptr<HandMadeModel> make_reference_model() { return std::make_unique<ReferenceModel>(); }

}  // namespace attnlab
