#pragma once
// The GPU engine as a HandMadeModel (core/hand_made/hand_made.hpp): what the app uses when its context
// has compute shaders. Needs a current OpenGL 4.3+ context on this thread.
#include "core/gpu/hand_made_gpu_engine.hpp"
#include "core/hand_made/hand_made.hpp"

namespace attnlab {

class GpuHandMade final : public HandMadeModel {
 public:
  /// Throws Error when the current context has no compute shaders or a shader fails.
  GpuHandMade();

  /// The engine itself, for what only the GPU has: heat-map textures drawn without a read-back.
  HandMadeGpuEngine& engine() { return engine_; }

  std::string name() const override { return "GPU: " + renderer_; }
  std::string short_name() const override { return "GPU"; }
  void set_image(const Image& image, const Settings& settings) override;
  void set_settings(const Settings& settings) override;
  RowSet rows(int query) override;
  void prepare_rows(int query) override;
  bool rows_ready(int query) override;
  Matrix tokens() override { return engine_.tokens(); }
  HeadQKV qkv(int head) override { return engine_.qkv(head); }
  Matrix output(int head) override { return engine_.output(head); }
  Matrix merged_output() override { return engine_.merged_output(); }
  Matrix matrix(int head) override { return engine_.matrix(head); }
  int N() const override;
  void pool_matrix_rows(int head, Pooling pooling, int first, int count, BlockImage& image) override {
    engine_.pool_matrix_rows(head, pooling, first, count, image);
  }
  std::pair<std::vector<float>, std::vector<float>> row_for_token(int head, const RowVector& x) override {
    return engine_.row_for_token(head, x);
  }

 private:
  std::string renderer_;
  HandMadeGpuEngine engine_;
};

}  // namespace attnlab
