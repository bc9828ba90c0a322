// Zip archives through libzip: reading with bounds on what a hostile archive may declare, and
// writing a new archive into memory (core/io/zip_archive.hpp).
#include "core/io/zip_archive.hpp"

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <zip.h>

#include <cstdio>
#include <utility>

namespace attnlab {
namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileCloser>;

std::string quote(const std::string& name) { return "'" + one_line(name) + "'"; }

[[noreturn]] void bad_zip(int code, const std::string& what) {
  throw Error(what + ": " +
              // TRANSLATORS: %s is libzip's reason (in English).
              text_format(_("not a complete zip archive (%s): the file is truncated or corrupt"), zip_error_text(code).c_str()));
}

}  // namespace

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
  ~Handle() {
    if (zip) zip_discard(zip);
  }
};

ZipArchive::ZipArchive(std::unique_ptr<Handle> handle, std::uint64_t size, std::string what, std::uint64_t max_entries)
    : zip_(std::move(handle)), size_(size), what_(std::move(what)) {
  const std::uint64_t n = entry_count();
  if (n > max_entries)
    fail(text_format(_("a zip archive of %llu entries, more than the %llu it may hold"), static_cast<unsigned long long>(n),
                     static_cast<unsigned long long>(max_entries)));
}

ZipArchive::ZipArchive(ZipArchive&&) noexcept = default;
ZipArchive& ZipArchive::operator=(ZipArchive&&) noexcept = default;
ZipArchive::~ZipArchive() = default;

ZipArchive ZipArchive::open_file(const std::filesystem::path& path, const std::string& what, std::uint64_t max_entries) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  // TRANSLATORS: %s is the system's reason.
  if (ec) throw Error(what + ": " + text_format(_("cannot read it (%s)"), ec.message().c_str()));
  int code = 0;
  // libzip takes UTF-8 names on Windows too.
  zip_t* z = zip_open(platform::utf8(path).c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!z) bad_zip(code, what);
  auto handle = std::make_unique<Handle>();
  handle->zip = z;
  return ZipArchive(std::move(handle), size, what, max_entries);
}

ZipArchive ZipArchive::open_memory(std::span<const std::uint8_t> bytes, const std::string& what, std::uint64_t max_entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!src) {
    zip_error_fini(&error);
    throw Error(what + ": " + _("cannot read it as a zip archive"));
  }
  zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!z) {
    zip_source_free(src);
    const int code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    bad_zip(code, what);
  }
  zip_error_fini(&error);
  auto handle = std::make_unique<Handle>();
  handle->zip = z;
  return ZipArchive(std::move(handle), bytes.size(), what, max_entries);
}

void ZipArchive::fail(const std::string& problem) const { throw Error(what_ + ": " + problem); }

std::uint64_t ZipArchive::entry_count() const {
  const zip_int64_t n = zip_get_num_entries(zip_->zip, 0);
  return n < 0 ? 0 : static_cast<std::uint64_t>(n);
}

ZipEntry ZipArchive::entry(std::uint64_t index) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_->zip, index, ZIP_FL_ENC_RAW, &st) != 0)
    // TRANSLATORS: an entry's number in the archive (from 0), then libzip's reason (in English).
    fail(text_format(_("cannot read zip entry %llu (%s)"), static_cast<unsigned long long>(index), zip_strerror(zip_->zip)));
  ZipEntry e;
  e.index = index;
  e.name = (st.valid & ZIP_STAT_NAME) && st.name ? st.name : "";
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
    // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes.
    fail(text_format(_("the zip entry %s declares no size"), quote(e.name).c_str()));
  e.size = st.size;
  e.comp_size = st.comp_size;
  e.stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
  e.encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE;
  return e;
}

std::optional<ZipEntry> ZipArchive::find(const std::string& name) const {
  const zip_int64_t i = zip_name_locate(zip_->zip, name.c_str(), ZIP_FL_ENC_RAW);
  if (i < 0) return std::nullopt;
  return entry(static_cast<std::uint64_t>(i));
}

std::vector<std::uint8_t> ZipArchive::read(const ZipEntry& e, std::uint64_t max_bytes) const {
  const std::string name = quote(e.name);
  const char* n = name.c_str();
  // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes.
  if (e.encrypted) fail(text_format(_("the zip entry %s is encrypted"), n));
  if (e.size > max_bytes)
    // TRANSLATORS: the name of a file inside the zip archive, in quotes, then two sizes in bytes.
    fail(text_format(_("the zip entry %s declares %llu bytes, more than the %llu it may hold"), n,
                     static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(max_bytes)));
  if (e.comp_size > size_ || (e.stored && e.size != e.comp_size))
    // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes; then two sizes in bytes.
    fail(text_format(_("the zip entry %s declares %llu bytes, more than the archive's %llu (a corrupt zip)"), n,
                     static_cast<unsigned long long>(e.comp_size), static_cast<unsigned long long>(size_)));
  ZipFilePtr f(zip_fopen_index(zip_->zip, e.index, 0));
  // TRANSLATORS: the name of a file inside the zip archive, in quotes, then libzip's reason (in English).
  if (!f) fail(text_format(_("cannot open the zip entry %s (%s)"), n, zip_strerror(zip_->zip)));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(e.size));  // e.size <= max_bytes
  std::uint64_t got = 0;
  while (got < e.size) {
    const zip_int64_t r = zip_fread(f.get(), bytes.data() + got, e.size - got);
    // TRANSLATORS: the name of a file inside the zip archive, in quotes, then libzip's reason (in English).
    if (r < 0) fail(text_format(_("cannot read the zip entry %s (%s)"), n, zip_file_strerror(f.get())));
    if (r == 0)
      // TRANSLATORS: the name of a file inside the zip archive, in quotes, then two sizes in bytes.
      fail(text_format(_("the zip entry %s ends after %llu of its %llu bytes"), n, static_cast<unsigned long long>(got),
                       static_cast<unsigned long long>(e.size)));
    got += static_cast<std::uint64_t>(r);
  }
  std::uint8_t extra;  // the end: libzip checks the CRC here
  const zip_int64_t r = zip_fread(f.get(), &extra, 1);
  // TRANSLATORS: the name of a file inside the zip archive, in quotes, then libzip's reason (in English).
  if (r < 0) fail(text_format(_("the zip entry %s is corrupt (%s)"), n, zip_file_strerror(f.get())));
  // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes.
  if (r > 0) fail(text_format(_("the zip entry %s holds more bytes than it declares"), n));
  return bytes;
}

std::vector<std::uint8_t> zip_bytes(std::span<const ZipFileToAdd> files, const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* out = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!out) {
    zip_error_fini(&error);
    throw Error(what + ": " + _("cannot make a zip archive in memory"));
  }
  zip_t* z = zip_open_from_source(out, ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (!z) {
    zip_source_free(out);
    throw Error(what + ": " + _("cannot make a zip archive in memory"));
  }
  zip_source_keep(out);  // zip_close writes into it; it is read below
  const auto give_up = [&](const std::string& why) {
    zip_discard(z);
    zip_source_free(out);
    // TRANSLATORS: %s is libzip's reason (in English).
    throw Error(what + ": " + text_format(_("cannot write the zip archive (%s)"), why.c_str()));
  };
  for (const ZipFileToAdd& f : files) {
    zip_source_t* s = zip_source_buffer(z, f.bytes.data(), f.bytes.size(), 0);
    if (!s) give_up(zip_strerror(z));
    const zip_int64_t i = zip_file_add(z, f.name.c_str(), s, ZIP_FL_ENC_UTF_8);
    if (i < 0) {
      zip_source_free(s);
      give_up(zip_strerror(z));
    }
    const auto index = static_cast<zip_uint64_t>(i);
    // A fixed time (2000-01-01) so that the same lesson gives the same bytes.
    if (zip_set_file_compression(z, index, f.compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(z, index, 946684800, 0) != 0)
      give_up(zip_strerror(z));
  }
  if (zip_close(z) != 0) give_up(zip_strerror(z));
  std::vector<std::uint8_t> bytes;
  bool ok = zip_source_open(out) == 0;
  if (ok) {
    ok = zip_source_seek(out, 0, SEEK_END) == 0;
    const zip_int64_t n = ok ? zip_source_tell(out) : -1;
    ok = ok && n >= 0 && zip_source_seek(out, 0, SEEK_SET) == 0;
    if (ok) {
      bytes.resize(static_cast<std::size_t>(n));
      ok = zip_source_read(out, bytes.data(), static_cast<zip_uint64_t>(n)) == n;
    }
    zip_source_close(out);
  }
  zip_source_free(out);
  if (!ok) throw Error(what + ": " + _("cannot read back the zip archive made in memory"));
  return bytes;
}

bool is_zip_magic(std::span<const std::uint8_t> first) {
  return first.size() >= 4 && first[0] == 'P' && first[1] == 'K' && first[2] == 3 && first[3] == 4;
}

}  // namespace attnlab
