// CKA across two models (core/cnn/model_cka.hpp; docs/MATH.md, "CKA across two models").
#include "core/cnn/model_cka.hpp"

#include "core/base/blas.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/vit/vit_kernels.hpp"
#include "core/vit/vit_run.hpp"
#include "core/vit/vit_similarity.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <chrono>
#include <cmath>
#include <span>

namespace attnlab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check_stop(const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
}

// K = F·Fᵀ (n × n, in double) of the n rows of F (n × p floats), the p columns split among the
// threads, each adding its part's product (one-threaded sgemm each).
Eigen::MatrixXd gram(const Matrix& F, int threads) {
  const int n = static_cast<int>(F.rows()), p = static_cast<int>(F.cols());
  threads = std::max(1, std::min(threads, p / 4096 + 1));
  std::vector<Matrix> parts(static_cast<std::size_t>(threads), Matrix::Zero(n, n));
  vit_kernels::parallel_tasks(threads, threads, [&](int t, int) {
    const int first = static_cast<int>(static_cast<std::int64_t>(p) * t / threads);
    const int last = static_cast<int>(static_cast<std::int64_t>(p) * (t + 1) / threads);
    if (last > first)
      blas::sgemm(false, true, n, n, last - first, 1.0f, F.data() + first, p, F.data() + first, p, 0.0f,
                  parts[static_cast<std::size_t>(t)].data(), n);
  });
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (const Matrix& part : parts) K += part.cast<double>();
  return K;
}

// HKH: the Gram of the features centred over the rows.
Eigen::MatrixXd centred(const Eigen::MatrixXd& K) {
  const Eigen::VectorXd rows = K.rowwise().mean(), cols = K.colwise().mean().transpose();
  const double all = K.mean();
  Eigen::MatrixXd C = K;
  C.colwise() -= rows;
  C.rowwise() -= cols.transpose();
  C.array() += all;
  return C;
}

std::int64_t total(const std::vector<std::vector<float>>& layers) {
  std::int64_t n = 0;
  for (const auto& l : layers) n += static_cast<std::int64_t>(l.size());
  return n;
}

// The features of every layer of one model, one row per image.
struct Features {
  std::vector<Matrix> layers;
  void put(int row, const std::vector<std::vector<float>>& f, const std::string& model) {
    for (std::size_t l = 0; l < f.size(); ++l) {
      if (static_cast<Eigen::Index>(f[l].size()) != layers[l].cols())
        throw Error(text_format(
            // TRANSLATORS: %1$s is a model (its file's name), %2$zu a layer's index, then two counts of features.
            _("%s: layer %zu gave %zu features for one image and %lld for another (the images must be the same size)"),
            model.c_str(), l, f[l].size(), static_cast<long long>(layers[l].cols())));
      layers[l].row(row) = Eigen::Map<const RowVector>(f[l].data(), static_cast<Eigen::Index>(f[l].size()));
    }
  }
  void reserve_rows(int rows, const std::vector<std::vector<float>>& f) {
    layers.clear();
    for (const auto& l : f) layers.emplace_back(Matrix::Zero(rows, static_cast<Eigen::Index>(l.size())));
  }
};

std::string mib(std::int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

CkaModel vit_cka_model(const VitModel& model, std::int64_t budget, int threads) {
  CkaModel m;
  m.name = model.file.filename().string();
  for (int l = 0; l < model.arch.depth; ++l) m.layers.push_back("L" + std::to_string(l));
  m.input_size = vit_trained_size(model.arch);
  m.features = [&model, budget, threads](const Image& image, const std::atomic<bool>* stop) {
    // The image as it is (its short side as --resize: no scaling), whatever the trained size.
    const std::vector<Matrix> tokens =
        vit_layer_tokens(model, std::span<const Image>(&image, 1), std::min(image.width, image.height), budget, threads, stop);
    std::vector<std::vector<float>> out;
    for (std::size_t l = 1; l < tokens.size(); ++l) out.emplace_back(tokens[l].data(), tokens[l].data() + tokens[l].size());
    return out;
  };
  return m;
}

CkaModel resnet_cka_model(const ResnetModel& model, std::int64_t budget, int threads) {
  CkaModel m;
  m.name = model.file.filename().string();
  for (const ResnetBlock& b : model.blocks) m.layers.push_back(b.name);
  m.input_size = model.arch.input_size;
  m.features = [&model, budget, threads](const Image& image, const std::atomic<bool>* stop) {
    const ResnetPass pass = resnet_forward(model, cnn_input(model.arch, image, 0), budget, threads, stop);
    std::vector<std::vector<float>> out;
    for (const FeatureMap& f : pass.blocks) out.emplace_back(f.v.data(), f.v.data() + f.v.size());
    return out;
  };
  return m;
}

Image cka_square_image(const Image& image, int side) {
  if (image.empty()) throw Error(_("the image has no pixels"));
  if (image.width == side && image.height == side) return image;
  const Image scaled = vit_scaled_image(image, side);
  const int x0 = (scaled.width - side) / 2, y0 = (scaled.height - side) / 2;
  Image out;
  out.width = out.height = side;
  out.rgb.resize(static_cast<std::size_t>(side) * side * 3);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x)
      for (int c = 0; c < 3; ++c) out.at(x, y, c) = scaled.at(x0 + x, y0 + y, c);
  return out;
}

double gram_cka(const Eigen::MatrixXd& K, const Eigen::MatrixXd& L) {
  const Eigen::MatrixXd Kc = centred(K), Lc = centred(L);
  const double kk = Kc.norm(), ll = Lc.norm();
  if (!(kk > 0.0) || !(ll > 0.0)) return 0.0;
  return (Kc.array() * Lc.array()).sum() / (kk * ll);
}

double unbiased_hsic(const Eigen::MatrixXd& K, const Eigen::MatrixXd& L) {
  const auto n = static_cast<double>(K.rows());
  if (K.rows() < 4) throw Error(_("the unbiased HSIC needs at least 4 examples"));
  Eigen::MatrixXd Kt = K, Lt = L;
  Kt.diagonal().setZero();
  Lt.diagonal().setZero();
  const double trace = (Kt.array() * Lt.transpose().array()).sum();
  const double sums = Kt.sum() * Lt.sum() / ((n - 1.0) * (n - 2.0));
  const double cross = (Kt.colwise().sum() * Lt.rowwise().sum()).value() * 2.0 / (n - 2.0);
  return (trace + sums - cross) / (n * (n - 3.0));
}

std::int64_t cross_cka_bytes(std::int64_t count, std::int64_t features_a, std::int64_t features_b, int layers) {
  return count * (features_a + features_b) * static_cast<std::int64_t>(sizeof(float)) +
         static_cast<std::int64_t>(layers) * count * count * static_cast<std::int64_t>(sizeof(double));
}

CrossCka cross_cka(const CkaModel& a, const CkaModel& b, int count, const std::function<Image(int)>& image, int batch,
                   std::int64_t budget, const std::atomic<bool>* stop, const CrossCkaProgress& progress) {
  const int layers = static_cast<int>(a.layers.size() + b.layers.size());
  // kCkaAutoBatch: image 0's features tell the size; they are kept for the pass below.
  std::optional<std::array<std::vector<std::vector<float>>, 2>> first_features;
  if (batch == kCkaAutoBatch) {
    if (count < 2) throw Error(text_format(_("CKA needs at least 2 images, got %d"), count));
    const Image photo = image(0);
    first_features.emplace();
    (*first_features)[0] = a.features(cka_square_image(photo, a.input_size), stop);
    (*first_features)[1] = b.features(cka_square_image(photo, b.input_size), stop);
    batch = cross_cka_bytes(count, total((*first_features)[0]), total((*first_features)[1]), layers) <= budget / 2 ? 0 : std::min(100, count);
    if (batch && count < 4) batch = 0;
  }
  if (batch != 0 && batch < 4)
    // TRANSLATORS: --batch is a command-line option; HSIC: the Hilbert–Schmidt independence criterion.
    throw Error(text_format(_("--batch must be at least 4 (the unbiased HSIC needs 4 images a batch), got %d"), batch));
  if (count < (batch ? 4 : 2))
    throw Error(batch ? text_format(_("CKA needs at least 4 images with --batch, got %d"), count)
                      : text_format(_("CKA needs at least 2 images, got %d"), count));
  const int threads = vit_kernels::default_threads();
  CrossCka out;
  out.batch = batch;
  const int chunk = batch ? batch : count;  // images whose features are held at once
  int done = 0;
  const int steps = 2 * (batch ? count / batch * batch + (count % batch >= 4 ? count % batch : 0) : count);
  Features fa, fb;
  std::vector<Eigen::MatrixXd> Ka, Kb;
  Eigen::MatrixXd hab, haa, hbb;  // minibatch: the summed HSICs
  if (batch) {
    hab = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(a.layers.size()), static_cast<Eigen::Index>(b.layers.size()));
    haa = Eigen::MatrixXd::Zero(hab.rows(), 1);
    hbb = Eigen::MatrixXd::Zero(hab.cols(), 1);
  }
  for (int first = 0; first < count; first += chunk) {
    const int n = std::min(chunk, count - first);
    if (batch && n < 4) break;
    auto t = Clock::now();
    for (int i = 0; i < n; ++i) {
      check_stop(stop);
      const bool kept = first_features && first + i == 0;  // image 0's, from the size check above
      const Image photo = kept ? Image() : image(first + i);
      const auto xa = kept ? (*first_features)[0] : a.features(cka_square_image(photo, a.input_size), stop);
      if (xa.size() != a.layers.size())
        // TRANSLATORS: %1$s is a model (its file's name), then two counts of layers.
        throw Error(text_format(_("%s: gave %zu layers, not %zu"), a.name.c_str(), xa.size(), a.layers.size()));
      if (progress) progress(++done, steps);
      const auto xb = kept ? (*first_features)[1] : b.features(cka_square_image(photo, b.input_size), stop);
      if (xb.size() != b.layers.size())
        throw Error(text_format(_("%s: gave %zu layers, not %zu"), b.name.c_str(), xb.size(), b.layers.size()));
      if (progress) progress(++done, steps);
      if (i == 0) {
        const std::int64_t need = cross_cka_bytes(n, total(xa), total(xb), layers);
        if (need > budget) {
          const std::int64_t per = (total(xa) + total(xb)) * static_cast<std::int64_t>(sizeof(float));
          const std::int64_t fits = std::max<std::int64_t>(0, budget / std::max<std::int64_t>(per, 1) - 1);
          if (fits >= 4)
            throw Error(text_format(
                // TRANSLATORS: %2$s and %3$s are amounts such as "120 MiB"; --batch is a command-line option.
                _("the features of %d images take %s, over the memory budget of %s: give --batch %lld (minibatch CKA) or "
                  "fewer images"),
                n, mib(need).c_str(), mib(budget).c_str(), static_cast<long long>(std::min<std::int64_t>(fits, 512))));
          throw Error(text_format(
              // TRANSLATORS: %2$s and %3$s are amounts such as "120 MiB".
              _("the features of %d images take %s, over the memory budget of %s: give smaller images or fewer layers"), n,
              mib(need).c_str(), mib(budget).c_str()));
        }
        fa.reserve_rows(n, xa);
        fb.reserve_rows(n, xb);
      }
      fa.put(i, xa, a.name);
      fb.put(i, xb, b.name);
    }
    out.forward_seconds += seconds_since(t);
    t = Clock::now();
    Ka.clear();
    Kb.clear();
    // Each feature centred over the images first (the Gram of the centred features is HKH): the
    // Gram of raw features would be far larger than what is left after centring, and float32
    // would lose the difference.
    for (Matrix& F : fa.layers) {
      check_stop(stop);
      F.rowwise() -= F.colwise().mean();
      Ka.push_back(gram(F, threads));
    }
    for (Matrix& F : fb.layers) {
      check_stop(stop);
      F.rowwise() -= F.colwise().mean();
      Kb.push_back(gram(F, threads));
    }
    if (batch) {
      for (std::size_t i = 0; i < Ka.size(); ++i) haa(static_cast<Eigen::Index>(i)) += unbiased_hsic(Ka[i], Ka[i]);
      for (std::size_t j = 0; j < Kb.size(); ++j) hbb(static_cast<Eigen::Index>(j)) += unbiased_hsic(Kb[j], Kb[j]);
      for (std::size_t i = 0; i < Ka.size(); ++i)
        for (std::size_t j = 0; j < Kb.size(); ++j)
          hab(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) += unbiased_hsic(Ka[i], Kb[j]);
    }
    out.images += n;
    out.gram_seconds += seconds_since(t);
  }
  const auto t = Clock::now();
  out.cka.resize(static_cast<Eigen::Index>(a.layers.size()), static_cast<Eigen::Index>(b.layers.size()));
  if (batch) {
    for (Eigen::Index i = 0; i < out.cka.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cka.cols(); ++j) {
        const double d = std::sqrt(haa(i) * hbb(j));
        out.cka(i, j) = d > 0.0 ? hab(i, j) / d : 0.0;
      }
  } else {
    std::vector<Eigen::MatrixXd> Ca, Cb;
    for (const auto& K : Ka) Ca.push_back(centred(K));
    for (const auto& K : Kb) Cb.push_back(centred(K));
    for (Eigen::Index i = 0; i < out.cka.rows(); ++i)
      for (Eigen::Index j = 0; j < out.cka.cols(); ++j) {
        const auto &Kc = Ca[static_cast<std::size_t>(i)], &Lc = Cb[static_cast<std::size_t>(j)];
        const double d = Kc.norm() * Lc.norm();
        out.cka(i, j) = d > 0.0 ? (Kc.array() * Lc.array()).sum() / d : 0.0;
      }
  }
  out.gram_seconds += seconds_since(t);
  return out;
}

}  // namespace attnlab
