#pragma once
// Where the settings a user's runs share live: the app's remembered settings and layout, and the
// runner auto chose for a machine (core/vit/vit_auto.hpp). One folder for the window and the
// command line alike.
#include <filesystem>

namespace attnlab {

/// $XDG_CONFIG_HOME/attnlab, else $HOME/.config/attnlab, else a folder in the temporary
/// directory. Not created here.
std::filesystem::path user_config_dir();

}  // namespace attnlab
