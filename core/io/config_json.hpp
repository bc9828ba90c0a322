#pragma once
// Reading a model's JSON side files (config.json, preprocessor_config.json) the same way for every
// loader (core/vit/vit_load.cpp, core/cnn/resnet_load.cpp): an object or an error, and the values
// they hold checked. Internal to core: its sources include it, no public header does.
#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>

namespace attnlab {

/// The text parsed as a JSON object; {} for "" (no such file). Throws Error "<what>: not a JSON
/// object" otherwise.
nlohmann::json parse_config_json(const std::string& text, const std::string& what);

/// j[key] as a finite number; nullopt when absent or null. Throws Error naming `key` for anything else.
std::optional<float> read_config_number(const nlohmann::json& j, const char* key, const std::string& what);

/// j[key] as 3 finite numbers (an RGB mean or std); nullopt when absent or null. Throws Error
/// "'<key>' is not a list of 3 numbers" for anything else.
std::optional<std::array<float, 3>> read_config_rgb(const nlohmann::json& j, const char* key, const std::string& what);

}  // namespace attnlab
