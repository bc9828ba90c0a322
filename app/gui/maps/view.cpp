// The views a source offers (view.hpp).
#include "app/gui/maps/view.hpp"

#include <algorithm>

namespace attnlab::app {

std::vector<View*> views_for(const std::vector<std::unique_ptr<View>>& all, const ViewSource& source) {
  std::vector<View*> offered;
  for (const auto& v : all)
    if (v->works_on(source)) offered.push_back(v.get());
  return offered;
}

View* find_view(const std::vector<View*>& offered, std::string_view name) {
  const auto at = std::find_if(offered.begin(), offered.end(), [&](const View* v) { return name == v->name(); });
  return at == offered.end() ? nullptr : *at;
}

}  // namespace attnlab::app
