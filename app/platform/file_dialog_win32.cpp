// show_file_dialog() on Windows: the common item dialog (IFileOpenDialog, COM), modal to the
// active window; folders with FOS_PICKFOLDERS. Paths come back as UTF-16 and stay wide in the
// std::filesystem::path.
#include "app/platform/file_dialog.hpp"

#include "core/base/error.hpp"
#include "core/base/translate.hpp"

#include <windows.h>
#include <shobjidl.h>

#include <string>
#include <vector>

namespace attnlab::app {

void refuse_when_dialogs_are_off();

namespace {
template <class T>
struct ComPtr {
  T* p = nullptr;
  ~ComPtr() {
    if (p) p->Release();
  }
  T** out() { return &p; }
  T* operator->() const { return p; }
};

std::wstring wide(const char* s) {
  const int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, nullptr, 0);
  std::wstring w(static_cast<std::size_t>(n > 0 ? n - 1 : 0), L'\0');
  if (n > 1) MultiByteToWideChar(CP_UTF8, 0, s, -1, w.data(), n);
  return w;
}
}  // namespace

std::optional<std::filesystem::path> show_file_dialog(FileDialogKind kind, const std::filesystem::path& start) {
  refuse_when_dialogs_are_off();
  const HRESULT init = CoInitializeEx(nullptr, COINIT_APARTMENTTHREADED | COINIT_DISABLE_OLE1DDE);
  if (FAILED(init) && init != RPC_E_CHANGED_MODE) throw Error(_("no file dialog: COM could not start; type the path instead"));
  struct Uninit {
    bool on;
    ~Uninit() {
      if (on) CoUninitialize();
    }
  } uninit{SUCCEEDED(init)};
  // The Save dialog for a lesson (it asks before replacing a file), the Open dialog for the rest.
  const bool save = kind == FileDialogKind::SaveLesson;
  ComPtr<IFileDialog> dialog;
  if (FAILED(CoCreateInstance(save ? CLSID_FileSaveDialog : CLSID_FileOpenDialog, nullptr, CLSCTX_INPROC_SERVER,
                              save ? IID_IFileSaveDialog : IID_IFileOpenDialog, reinterpret_cast<void**>(dialog.out()))))
    throw Error(_("no file dialog: Windows' file dialog could not be made; type the path instead"));
  const bool folder = kind == FileDialogKind::ModelFolder || kind == FileDialogKind::ExportFolder;
  FILEOPENDIALOGOPTIONS options = 0;
  dialog->GetOptions(&options);
  options |= FOS_FORCEFILESYSTEM | FOS_PATHMUSTEXIST |
             (folder ? FOS_PICKFOLDERS : save ? FOS_OVERWRITEPROMPT : FOS_FILEMUSTEXIST);
  dialog->SetOptions(options);
  dialog->SetTitle(wide(file_dialog_title(kind)).c_str());
  // The filters' names in the user's language: the wide strings outlive the dialog's use of them.
  const std::wstring images = wide(_("Images and lessons")), all = wide(_("All files")), lessons = wide(_("Lessons")),
                     checkpoints = wide(_("ViT checkpoints"));
  std::vector<COMDLG_FILTERSPEC> filters;
  if (kind == FileDialogKind::Image)
    filters = {{images.c_str(), L"*.png;*.jpg;*.jpeg;*.bmp;*.gif;*.tga;*.psd;*.pnm;*.ppm;*.pgm;*.attnlab"},
               {all.c_str(), L"*.*"}};
  else if (kind == FileDialogKind::Lesson || save)
    filters = {{lessons.c_str(), L"*.attnlab"}};
  else if (kind == FileDialogKind::ModelFile)
    filters = {{checkpoints.c_str(), L"*.safetensors;*.pth;*.pt;*.bin"}, {all.c_str(), L"*.*"}};
  if (!filters.empty()) dialog->SetFileTypes(static_cast<UINT>(filters.size()), filters.data());
  if (save) {
    dialog->SetDefaultExtension(L"attnlab");
    dialog->SetFileName(L"lesson.attnlab");
  }
  std::error_code ec;
  if (!start.empty() && std::filesystem::is_directory(start, ec)) {
    ComPtr<IShellItem> where;
    const std::wstring absolute = std::filesystem::absolute(start, ec).wstring();
    if (SUCCEEDED(SHCreateItemFromParsingName(absolute.c_str(), nullptr, IID_IShellItem, reinterpret_cast<void**>(where.out()))))
      dialog->SetFolder(where.p);
  }
  const HRESULT shown = dialog->Show(GetActiveWindow());
  if (shown == HRESULT_FROM_WIN32(ERROR_CANCELLED)) return std::nullopt;
  if (FAILED(shown)) throw Error(_("the file dialog failed; type the path instead"));
  ComPtr<IShellItem> item;
  if (FAILED(dialog->GetResult(item.out()))) return std::nullopt;
  PWSTR name = nullptr;
  if (FAILED(item->GetDisplayName(SIGDN_FILESYSPATH, &name)) || !name) return std::nullopt;
  std::filesystem::path chosen(name);
  CoTaskMemFree(name);
  return chosen;
}

}  // namespace attnlab::app
