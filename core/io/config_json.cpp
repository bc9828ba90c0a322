#include "core/io/config_json.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <cmath>

namespace attnlab {

using json = nlohmann::json;

json parse_config_json(const std::string& text, const std::string& what) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw Error(what + ": " + _("not a JSON object"));
  return j;
}

std::optional<float> read_config_number(const json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    // TRANSLATORS: %s is a key of a model's config.json (layer_norm_eps).
    throw Error(what + ": " + text_format(_("'%s' is not a finite number"), key));
  return static_cast<float>(it->get<double>());
}

std::optional<std::array<float, 3>> read_config_rgb(const json& j, const char* key, const std::string& what) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  // TRANSLATORS: %s is a key of a model's config file (image_mean).
  if (!it->is_array() || it->size() != 3) throw Error(what + ": " + text_format(_("'%s' is not a list of 3 numbers"), key));
  std::array<float, 3> out{};
  for (std::size_t c = 0; c < 3; ++c) {
    const auto& v = (*it)[c];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw Error(what + ": " + text_format(_("'%s' is not a list of 3 numbers"), key));
    out[c] = static_cast<float>(v.get<double>());
  }
  return out;
}

}  // namespace attnlab
