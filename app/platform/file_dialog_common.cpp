// What both platforms' dialogs share: titles and the switch that turns dialogs off.
#include "app/platform/file_dialog.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <cstdlib>
#include <string>

namespace attnlab::app {

const char* file_dialog_title(FileDialogKind kind) {
  switch (kind) {
    case FileDialogKind::Image: return _("Open an image");
    case FileDialogKind::ModelFile: return _("Open a ViT checkpoint");
    case FileDialogKind::ModelFolder: return _("Open a ViT checkpoint folder");
    case FileDialogKind::ExportFolder: return _("Choose the export folder");
    case FileDialogKind::Lesson: return _("Open a lesson");
    case FileDialogKind::SaveLesson: return _("Save the lesson");
  }
  // TRANSLATORS: a file dialog's title.
  return tr_c("file dialog", "Open");
}

// ATTNLAB_FILE_DIALOG=none: no dialog (the window tests' default), a one-line error instead.
void refuse_when_dialogs_are_off() {
  if (const char* v = std::getenv("ATTNLAB_FILE_DIALOG"); v && std::string(v) == "none")
    throw Error(_("file dialogs are off here (ATTNLAB_FILE_DIALOG=none): type the path, or drop the file on the window"));
}

}  // namespace attnlab::app
