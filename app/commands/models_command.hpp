#pragma once
// `attnlab models`: the gallery and the Hugging Face cache from the command line (README, "Models"),
// and `--model hf:ORG/NAME[@REVISION]` for every command that takes --model.
#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::app {

/// Runs `attnlab models [pull REPO[@REVISION] [--file F]... | path REPO[@REVISION]]` with the
/// arguments after `models`: no argument lists the gallery (with "in the cache" marks) and every
/// cached model repository; `pull` downloads into the cache with a progress line on stderr and
/// prints the snapshot folder on stdout (Ctrl-C cancels, keeping the resumable part; exit 130);
/// `path` prints the cached snapshot folder. Throws Error (one line) for bad arguments and
/// failed downloads.
int run_models(const std::vector<std::string>& args);

/// The usage text of `attnlab models`.
std::string models_usage();

/// What a --model argument names on disk: `hf:ORG/NAME[@REV]` → the cached snapshot folder, pulled
/// first (progress on stderr, Ctrl-C cancels) when missing; anything else → the path as given.
/// Throws Error as hub::resolve_model_argument().
std::filesystem::path model_argument_path(const std::string& argument);

}  // namespace attnlab::app
