// Linear CKA (core/vit/cka) against numpy's HSIC form (tests/vit/make_cka_golden.py), its
// invariances, and the layer × layer matrix of a trainer's representations.
#include "core/vit/cka.hpp"
#include "core/base/error.hpp"
#include "core/vit/vit_train.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

namespace attnlab {
namespace {

Matrix to_matrix(const nlohmann::json& rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)].get<float>();
  return m;
}

// The inputs are the golden's float32 values exactly; both sides accumulate in double, so they
// agree to rounding (1e-12 relative); 1e-9 leaves room for the different order of the sums.
TEST(Cka, MatchesNumpysHsicForm) {
  std::ifstream in(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "tests/vit/data/train/cka_golden.json");
  const auto golden = nlohmann::json::parse(in);
  std::vector<Matrix> reps;
  for (const auto& r : golden.at("reps")) reps.push_back(to_matrix(r));
  ASSERT_EQ(reps.size(), 5u);
  const Eigen::MatrixXd cka = cka_matrix(reps, reps);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const double ref = golden.at("cka")[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      EXPECT_NEAR(cka(i, j), ref, 1e-9) << i << "," << j;
      EXPECT_NEAR(linear_cka(reps[static_cast<std::size_t>(i)], reps[static_cast<std::size_t>(j)]), ref, 1e-9);
    }
  EXPECT_NEAR(cka(0, 1), 1.0, 1e-6);  // a rotation and a scale of the same
  EXPECT_LT(cka(0, 3), 0.3);          // independent
}

TEST(Cka, RefusesDifferentExamples) {
  EXPECT_THROW(linear_cka(Matrix::Ones(5, 3), Matrix::Ones(6, 3)), Error);
  EXPECT_THROW(linear_cka(Matrix::Ones(1, 3), Matrix::Ones(1, 3)), Error);
  EXPECT_EQ(linear_cka(Matrix::Ones(5, 3), Matrix::Random(5, 3)), 0.0);  // no variance
}

TEST(Cka, LayerMatrixOfATrainersTokensIsSymmetricWithOnesOnTheDiagonal) {
  const VitTrainShape shape{.patch = 7, .D = 16, .depth = 3, .heads = 2, .mlp_hidden = 32};
  VitTrainer t(shape, {}, 5, 1);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> images(10 * 3 * 28 * 28);
  for (float& v : images) v = normal(gen);
  const std::vector<Matrix> tokens = t.layer_tokens(images, 10);
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].rows(), 10 * 17);
  const Eigen::MatrixXd m = cka_matrix(tokens, tokens);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m(i, i), 1.0, 1e-9);
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(m(i, j), m(j, i), 1e-12);
      EXPECT_GE(m(i, j), 0.0);
      EXPECT_LE(m(i, j), 1.0 + 1e-9);
    }
  }
}

}  // namespace
}  // namespace attnlab
