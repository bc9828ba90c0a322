// show_file_dialog() on Linux: GtkFileChooserNative (GTK 3, Debian's libgtk-3), run modal on the
// main thread. GTK is started only when a dialog is first asked for; its X connection is its
// own, beside GLFW's. The window does not redraw while the dialog is open.
#include "app/platform/file_dialog.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <gtk/gtk.h>

#include <string>

namespace attnlab::app {

void refuse_when_dialogs_are_off();

namespace {

void add_filter(GtkFileChooser* chooser, const char* name, std::initializer_list<const char*> patterns) {
  GtkFileFilter* filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, name);
  for (const char* p : patterns) gtk_file_filter_add_pattern(filter, p);
  gtk_file_chooser_add_filter(chooser, filter);  // the chooser owns it
}

// Lets GTK finish what closing the dialog started (unmapping its window), so that it is gone
// from the screen before the app's next frame.
void settle() {
  while (gtk_events_pending()) gtk_main_iteration_do(FALSE);
}

}  // namespace

std::optional<std::filesystem::path> show_file_dialog(FileDialogKind kind, const std::filesystem::path& start) {
  refuse_when_dialogs_are_off();
  static const bool started = gtk_init_check(nullptr, nullptr);
  if (!started) throw Error(_("no file dialog: GTK could not open the display; type the path instead"));
  const bool folder = kind == FileDialogKind::ModelFolder || kind == FileDialogKind::ExportFolder;
  const bool save = kind == FileDialogKind::SaveLesson;
  GtkFileChooserNative* dialog = gtk_file_chooser_native_new(
      file_dialog_title(kind), nullptr,
      folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER : save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN,
      // TRANSLATORS: the file dialog's buttons; the underscore marks the access key (Alt+letter).
      folder ? _("_Choose") : save ? _("_Save") : _("_Open"), _("_Cancel"));
  GtkFileChooser* chooser = GTK_FILE_CHOOSER(dialog);
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(dialog), TRUE);
  if (kind == FileDialogKind::Image) {
    add_filter(chooser, _("Images and lessons"), {"*.png", "*.PNG", "*.jpg", "*.JPG", "*.jpeg", "*.JPEG", "*.bmp", "*.gif",
                                                  "*.tga", "*.psd", "*.pnm", "*.ppm", "*.pgm", "*.attnlab"});
    add_filter(chooser, _("All files"), {"*"});
  } else if (kind == FileDialogKind::Lesson || save) {
    add_filter(chooser, _("Lessons"), {"*.attnlab"});
    if (save) {
      gtk_file_chooser_set_do_overwrite_confirmation(chooser, TRUE);  // a name taken: the dialog asks first
      gtk_file_chooser_set_current_name(chooser, "lesson.attnlab");
    }
  } else if (kind == FileDialogKind::ModelFile) {
    add_filter(chooser, _("ViT checkpoints"), {"*.safetensors", "*.pth", "*.pt", "*.bin"});
    add_filter(chooser, _("All files"), {"*"});
  }
  std::error_code ec;
  if (!start.empty() && std::filesystem::is_directory(start, ec))
    gtk_file_chooser_set_current_folder(chooser, std::filesystem::absolute(start, ec).c_str());
  const gint response = gtk_native_dialog_run(GTK_NATIVE_DIALOG(dialog));
  std::optional<std::filesystem::path> chosen;
  if (response == GTK_RESPONSE_ACCEPT) {
    if (gchar* name = gtk_file_chooser_get_filename(chooser)) {
      chosen = std::filesystem::path(name);
      g_free(name);
    }
  }
  g_object_unref(dialog);
  settle();
  return chosen;
}

}  // namespace attnlab::app
