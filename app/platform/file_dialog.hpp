#pragma once
// The desktop's own Open dialog (issue 37): GTK's native file chooser on Linux (which hands the
// request to the XDG desktop portal where one is in use, GTK_USE_PORTAL=1 or a sandbox, and
// shows GTK's dialog otherwise), IFileOpenDialog on Windows. The platform half of the app's
// window layer: file_dialog_gtk.cpp or file_dialog_win32.cpp is built, never both.
#include <filesystem>
#include <optional>

namespace attnlab::app {

/// What the dialog asks for; each has its title and file filters.
enum class FileDialogKind {
  Image,            ///< "Open an image": PNG, JPEG, BMP, GIF, TGA, PSD, PNM (what stb_image reads)
  ModelFile,        ///< "Open a ViT checkpoint": .safetensors, .pth, .pt, .bin
  ModelFolder,      ///< "Open a ViT checkpoint folder": a folder with model.safetensors and config.json
  ExportFolder,     ///< "Choose the export folder"
  Lesson,           ///< "Open a lesson": .attnlab
  SaveLesson,       ///< "Save the lesson": a Save dialog (a name taken asks before replacing), .attnlab
};

/// Shows the dialog, modal, on the calling (main) thread and waits for it: the chosen path, or
/// nothing on Cancel. `start` is the folder it opens in (empty: the dialog's own choice).
/// Throws attnlab::Error with one line when no dialog can be shown (no display for GTK, COM
/// failing, or ATTNLAB_FILE_DIALOG=none, which the window tests set so that a random click
/// cannot leave a modal dialog open); the typed path and drag and drop still work then.
std::optional<std::filesystem::path> show_file_dialog(FileDialogKind kind, const std::filesystem::path& start);

/// The dialog's title for a kind ("Open an image", …), also the window name tests look for.
const char* file_dialog_title(FileDialogKind kind);

}  // namespace attnlab::app
