#include "core/vit/cka.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <cmath>

namespace attnlab {

namespace {

/// X with its columns centered, in double.
Eigen::MatrixXd centered(const Matrix& X) {
  Eigen::MatrixXd c = X.cast<double>();
  c.rowwise() -= c.colwise().mean();
  return c;
}

double cka_centered(const Eigen::MatrixXd& X, const Eigen::MatrixXd& Y, double xx, double yy) {
  if (xx <= 0.0 || yy <= 0.0) return 0.0;
  return (Y.transpose() * X).squaredNorm() / (xx * yy);
}

}  // namespace

double linear_cka(const Matrix& X, const Matrix& Y) {
  if (X.rows() != Y.rows()) throw Error(text_format(_("CKA needs the same examples in both representations (%lld and %lld rows)"),
                                                     static_cast<long long>(X.rows()), static_cast<long long>(Y.rows())));
  if (X.rows() < 2) throw Error(_("CKA needs at least 2 examples"));
  const Eigen::MatrixXd x = centered(X), y = centered(Y);
  return cka_centered(x, y, (x.transpose() * x).norm(), (y.transpose() * y).norm());
}

Eigen::MatrixXd cka_matrix(const std::vector<Matrix>& a, const std::vector<Matrix>& b, const std::atomic<bool>* stop) {
  const bool same = &a == &b;  // one model's layers against themselves: each centred once
  auto check_stop = [stop] {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
  };
  std::vector<Eigen::MatrixXd> ca, cb_own;
  std::vector<double> na, nb_own;
  for (const Matrix& m : a) {
    check_stop();
    if (m.rows() != a.front().rows() || (!b.empty() && m.rows() != b.front().rows()))
      throw Error(_("CKA needs the same examples in every representation"));
    ca.push_back(centered(m));
    na.push_back((ca.back().transpose() * ca.back()).norm());
  }
  if (!same)
    for (const Matrix& m : b) {
      check_stop();
      if (m.rows() != b.front().rows()) throw Error(_("CKA needs the same examples in every representation"));
      cb_own.push_back(centered(m));
      nb_own.push_back((cb_own.back().transpose() * cb_own.back()).norm());
    }
  const std::vector<Eigen::MatrixXd>& cb = same ? ca : cb_own;
  const std::vector<double>& nb = same ? na : nb_own;
  if (!a.empty() && a.front().rows() < 2) throw Error(_("CKA needs at least 2 examples"));
  Eigen::MatrixXd out(static_cast<Eigen::Index>(a.size()), static_cast<Eigen::Index>(b.size()));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      check_stop();
      out(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = cka_centered(ca[i], cb[j], na[i], nb[j]);
    }
  return out;
}

}  // namespace attnlab
