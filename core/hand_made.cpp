#include "core/hand_made.hpp"

#include "core/error.hpp"
#include "core/heads.hpp"

#include <algorithm>

namespace attnlab {

namespace {

class ReferenceModel final : public HandMadeModel {
 public:
  std::string name() const override { return "CPU reference"; }
  std::string short_name() const override { return "CPU reference"; }

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
      throw Error("query token " + std::to_string(query) + " is outside [0," + std::to_string(ref.N()) + ")");
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
      throw Error("the full attention matrix needs " + std::to_string(bytes >> 20) + " MiB; choose a larger patch size");
    return ref.matrix(checked(head));
  }
  std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x) override {
    const Reference& ref = current();
    const Matrix Wq = query_key_weights(ref.heads()[static_cast<size_t>(checked(head))].W_q, ref.settings().pos,
                                        static_cast<int>(ref.P().cols()));
    if (x.size() != Wq.cols()) throw Error("a question token needs " + std::to_string(Wq.cols()) + " values");
    const RowResult r = attention_row_for(x * Wq.transpose(), ref.qkv(head).K, ref.settings().temperature);
    return {std::vector<float>(r.weights.data(), r.weights.data() + r.weights.size()),
            std::vector<float>(r.logits.data(), r.logits.data() + r.logits.size())};
  }

 private:
  const Reference& current() const {
    if (!reference_) throw Error("no image loaded");
    return *reference_;
  }
  static int checked(int head) {
    if (head < 0 || head >= kHeadCount) throw Error("no head " + std::to_string(head));
    return head;
  }
  std::unique_ptr<Reference> reference_;
  Image image_;
};

}  // namespace

std::unique_ptr<HandMadeModel> make_reference_model() { return std::make_unique<ReferenceModel>(); }

}  // namespace attnlab
