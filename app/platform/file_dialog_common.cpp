// What both platforms' dialogs share: titles and the switch that turns dialogs off.
#include "app/platform/file_dialog.hpp"

#include "core/base/error.hpp"

#include <cstdlib>
#include <string>

namespace attnlab::app {

const char* file_dialog_title(FileDialogKind kind) {
  switch (kind) {
    case FileDialogKind::Image: return "Open an image";
    case FileDialogKind::ModelFile: return "Open a ViT checkpoint";
    case FileDialogKind::ModelFolder: return "Open a ViT checkpoint folder";
    case FileDialogKind::ExportFolder: return "Choose the export folder";
    case FileDialogKind::Lesson: return "Open a lesson";
    case FileDialogKind::SaveLesson: return "Save the lesson";
  }
  return "Open";
}

// ATTNLAB_FILE_DIALOG=none: no dialog (the window tests' default), a one-line error instead.
void refuse_when_dialogs_are_off() {
  if (const char* v = std::getenv("ATTNLAB_FILE_DIALOG"); v && std::string(v) == "none")
    throw Error("file dialogs are off here (ATTNLAB_FILE_DIALOG=none): type the path, or drop the file on the window");
}

}  // namespace attnlab::app
