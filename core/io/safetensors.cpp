#include "core/io/safetensors.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"

#include <nettle/sha2.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <system_error>
#include <tuple>


namespace attnlab {
namespace {

using json = nlohmann::json;

// A name or value from the file, quoted for a message: at most 80 characters (a hostile file
// may hold a name of megabytes); control characters escaped as one_line() in Error would (the
// name goes into messages through %s, which would stop at a NUL).
std::string quote(const std::string& s) {
  constexpr std::size_t kMax = 80;
  if (s.size() <= kMax) return "'" + one_line(s) + "'";
  // TRANSLATORS: after a name cut short, in quotes; %zu is the name's full length.
  return "'" + one_line(s.substr(0, kMax)) + "...' " + text_format(_("(%zu characters)"), s.size());
}

// What a JSON value is, for "... is a string, not an array".
std::string kind(const json& j) {
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_number_unsigned()) return text_format(_("the number %llu"), static_cast<unsigned long long>(j.get<std::uint64_t>()));
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_number_integer()) return text_format(_("the number %lld"), static_cast<long long>(j.get<std::int64_t>()));
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_number_float()) return text_format(_("the number %g"), j.get<double>());
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_array()) return _("an array");
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_object()) return _("an object");
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_string()) return _("a string");
  // TRANSLATORS: what a JSON value is, completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_boolean()) return _("a boolean");
  // TRANSLATORS: what a JSON value is (JSON's null), completing sentences such as "tensor 'x' has shape %s, not an array".
  if (j.is_null()) return _("a null");
  return std::string("a ") + j.type_name();  // binary or discarded: never from a parsed file
}

std::uint64_t read_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

[[maybe_unused]] std::uint32_t read_le32(const std::uint8_t* p) {  // F32 on big-endian hosts only
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

std::uint16_t read_le16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }

// IEEE 754 binary16 to binary32, exactly: every half (subnormals, infinities, NaNs with their
// payload and sign) is a float.
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h} >> 15 << 31;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;  // infinity or NaN
  } else if (exponent != 0) {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;  // normal
  } else if (mantissa == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal: mantissa × 2^-24. Shift the leading 1 up to the implicit bit's place.
    std::uint32_t e = 127 - 15 + 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | e << 23 | (mantissa & 0x3ffu) << 13;
  }
  return std::bit_cast<float>(bits);
}

std::size_t dtype_size(TensorDType dtype) { return dtype == TensorDType::F32 ? 4 : 2; }

// Batch norm's step counter (PyTorch's BatchNorm2d.num_batches_tracked, a scalar int64 that only
// training reads): left out of the listing rather than refused for its dtype, so that CNN
// checkpoints (torchvision's and timm's ResNets) open. Its bytes stay unused.
bool is_batch_norm_counter(const std::string& name, const json& j) {
  if (!name.ends_with(".num_batches_tracked") || !j.is_object()) return false;
  const auto dtype = j.find("dtype");
  return dtype != j.end() && dtype->is_string() && dtype->get_ref<const std::string&>() == "I64";
}

// One tensor's entry, checked, before its bytes are converted.
struct Entry {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;
};

class HeaderReader {
 public:
  HeaderReader(const std::string& what, std::uint64_t data_size) : what_(what), data_size_(data_size) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(what_ + ": " + problem); }

  // `t` below is the tensor's name, quoted: "tensor %s" in the messages.
  Entry entry(const std::string& name, const json& j) const {
    const std::string quoted = quote(name);
    const char* t = quoted.c_str();
    if (!j.is_object())
      // TRANSLATORS: the first %s is a tensor's name in quotes, the second what the JSON value is ("a string").
      fail(text_format(_("tensor %s is %s, not an object with dtype, shape and data_offsets"), t, kind(j).c_str()));
    Entry e;
    e.name = name;
    e.dtype = dtype(t, field(t, j, "dtype"));
    e.shape = shape(t, field(t, j, "shape"));
    const json& offsets = field(t, j, "data_offsets");
    if (offsets.is_array() && offsets.size() != 2)
      // TRANSLATORS: %s is a tensor's name in quotes; data_offsets, begin and end are the file format's words.
      fail(text_format(_("tensor %s has data_offsets with %zu numbers, not an array [begin, end]"), t, offsets.size()));
    if (!offsets.is_array())
      // TRANSLATORS: a tensor's name in quotes, then what the JSON value is ("a string").
      fail(text_format(_("tensor %s has data_offsets %s, not an array [begin, end]"), t, kind(offsets).c_str()));
    e.begin = offset(t, offsets[0], "begin");
    e.end = offset(t, offsets[1], "end");
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    // TRANSLATORS: a tensor's name in quotes, then two offsets as [begin, end].
    if (e.end < e.begin) fail(text_format(_("tensor %s has reversed data_offsets %s (end before begin)"), t, range.c_str()));
    if (e.end > data_size_)
      // TRANSLATORS: a tensor's name in quotes, two offsets as [begin, end], the data's size in bytes.
      fail(text_format(_("tensor %s has data_offsets %s past the end of the data (%llu bytes): the file is truncated or the "
                         "offsets are wrong"),
                       t, range.c_str(), static_cast<unsigned long long>(data_size_)));
    // numel × the dtype's size, without overflow (a zero dimension makes it 0 whatever the others).
    std::uint64_t numel = 1;
    bool overflow = false;
    if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) numel = 0;
    else
      for (const std::int64_t d : e.shape)
        overflow = overflow || __builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel);
    if (overflow || numel > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      // TRANSLATORS: %s is a tensor's name in quotes.
      fail(text_format(_("tensor %s has a shape whose element count overflows 64 bits"), t));
    std::uint64_t byte_count = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(dtype_size(e.dtype)), &byte_count))
      // TRANSLATORS: %s is a tensor's name in quotes.
      fail(text_format(_("tensor %s has a shape whose byte count overflows 64 bits"), t));
    if (e.end - e.begin != byte_count)
      // TRANSLATORS: a tensor's name in quotes, its bytes, its data_offsets as [begin, end], its dtype (F32), then
      // elements x bytes per element = bytes.
      fail(text_format(_("tensor %s has %llu bytes of data (data_offsets %s) but its shape and dtype %s need %llu x %zu = %llu "
                         "bytes: the length does not match"),
                       t, static_cast<unsigned long long>(e.end - e.begin), range.c_str(), dtype_name(e.dtype),
                       static_cast<unsigned long long>(numel), dtype_size(e.dtype), static_cast<unsigned long long>(byte_count)));
    return e;
  }

  std::map<std::string, std::string> metadata(const json& j) const {
    // TRANSLATORS: __metadata__ is the file format's word; %s is what the JSON value is ("an array").
    if (!j.is_object()) fail(text_format(_("__metadata__ is %s, not an object of strings"), kind(j).c_str()));
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : j.items()) {
      if (!value.is_string())
        // TRANSLATORS: __metadata__ is the file format's word; a key in quotes, then what its value is ("a number").
        fail(text_format(_("__metadata__ value %s is %s, not a string"), quote(key).c_str(), kind(value).c_str()));
      out.emplace(key, value.get<std::string>());
    }
    return out;
  }

 private:
  const json& field(const char* t, const json& j, const char* key) const {
    const auto it = j.find(key);
    // TRANSLATORS: a tensor's name in quotes, then a key of the file format (dtype, shape, data_offsets).
    if (it == j.end()) fail(text_format(_("tensor %s has no %s (every tensor needs dtype, shape and data_offsets)"), t, key));
    return *it;
  }

  TensorDType dtype(const char* t, const json& j) const {
    // TRANSLATORS: a tensor's name in quotes, then what the JSON value is ("a number").
    if (!j.is_string()) fail(text_format(_("tensor %s has dtype %s, not a string such as \"F32\""), t, kind(j).c_str()));
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "F32") return TensorDType::F32;
    if (s == "F16") return TensorDType::F16;
    if (s == "BF16") return TensorDType::BF16;
    const std::string shown = s.size() <= 80 ? one_line(s) : quote(s);
    // TRANSLATORS: a tensor's name in quotes, then the dtype the file names (I64).
    fail(text_format(_("tensor %s has dtype %s, which is not supported (F32, F16, BF16 are)"), t, shown.c_str()));
  }

  std::vector<std::int64_t> shape(const char* t, const json& j) const {
    // TRANSLATORS: a tensor's name in quotes, then what the JSON value is ("a string").
    if (!j.is_array()) fail(text_format(_("tensor %s has shape %s, not an array of dimensions"), t, kind(j).c_str()));
    std::vector<std::int64_t> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const json& d = j[i];
      if (d.is_number_unsigned()) {
        const std::uint64_t v = d.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          // TRANSLATORS: a tensor's name in quotes, a dimension's index (from 0), then its value.
          fail(text_format(_("tensor %s has shape dimension %zu %llu, which overflows 64-bit signed integers"), t, i,
                           static_cast<unsigned long long>(v)));
        out.push_back(static_cast<std::int64_t>(v));
      } else if (d.is_number_integer()) {
        // TRANSLATORS: a tensor's name in quotes, a dimension's index (from 0), then its value.
        fail(text_format(_("tensor %s has shape dimension %zu %lld: a negative dimension"), t, i,
                         static_cast<long long>(d.get<std::int64_t>())));
      } else if (d.is_number_float()) {
        // TRANSLATORS: a tensor's name in quotes, a dimension's index (from 0), then what the JSON value is ("the number 1.5").
        fail(text_format(_("tensor %s has shape dimension %zu as %s, not a non-negative integer (too large, or not whole)"), t, i,
                         kind(d).c_str()));
      } else {
        // TRANSLATORS: a tensor's name in quotes, a dimension's index (from 0), then what the JSON value is ("a string").
        fail(text_format(_("tensor %s has shape dimension %zu as %s, not a non-negative integer"), t, i, kind(d).c_str()));
      }
    }
    return out;
  }

  std::uint64_t offset(const char* t, const json& j, const char* which) const {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer())
      // TRANSLATORS: a tensor's name in quotes, "begin" or "end" (the file format's words), then the number.
      fail(text_format(_("tensor %s has a negative data_offsets %s (%lld)"), t, which,
                       static_cast<long long>(j.get<std::int64_t>())));
    if (j.is_number_float())
      // TRANSLATORS: a tensor's name in quotes, "begin" or "end" (the file format's words), then what the JSON value is.
      fail(text_format(_("tensor %s has data_offsets %s as %s, not a non-negative integer (too large, or not whole)"), t, which,
                       kind(j).c_str()));
    // TRANSLATORS: a tensor's name in quotes, "begin" or "end" (the file format's words), then what the JSON value is.
    fail(text_format(_("tensor %s has data_offsets %s as %s, not a non-negative integer"), t, which, kind(j).c_str()));
  }

  const std::string& what_;
  std::uint64_t data_size_;
};

// `bytes` bytes of `dtype` elements at `p` to float32 at `out`.
void convert(TensorDType dtype, const std::uint8_t* p, std::size_t bytes, float* out) {
  switch (dtype) {
    case TensorDType::F32:
      if constexpr (std::endian::native == std::endian::little) std::memcpy(out, p, bytes);
      else
        for (std::size_t i = 0; i < bytes / 4; ++i) out[i] = std::bit_cast<float>(read_le32(p + 4 * i));
      break;
    case TensorDType::F16:
      for (std::size_t i = 0; i < bytes / 2; ++i) out[i] = half_to_float(read_le16(p + 2 * i));
      break;
    case TensorDType::BF16:
      for (std::size_t i = 0; i < bytes / 2; ++i) out[i] = std::bit_cast<float>(std::uint32_t{read_le16(p + 2 * i)} << 16);
      break;
  }
}

// The first 8 bytes' header length, checked against the file's size. Throws naming `what`.
std::uint64_t header_length(const std::uint8_t* first8, std::uint64_t file_size, const std::string& what) {
  const std::uint64_t header_size = read_le64(first8);
  if (header_size > kMaxSafetensorsHeaderBytes)
    throw Error(what + ": " +
                text_format(_("the header length is %llu bytes, over the limit of %llu (not a safetensors file, or a corrupt "
                              "one)"),
                            static_cast<unsigned long long>(header_size),
                            static_cast<unsigned long long>(kMaxSafetensorsHeaderBytes)));
  if (header_size > file_size - 8)
    throw Error(what + ": " +
                text_format(_("the header length is %llu bytes, past the end of the file (%llu bytes follow it): the file is "
                              "truncated or not a safetensors file"),
                            static_cast<unsigned long long>(header_size), static_cast<unsigned long long>(file_size - 8)));
  // Parsed, a JSON value per number, list and name: up to about 32 bytes per byte of text (e.g.
  // "[1,2,3]" → three 16-byte values in a list), checked before it is read.
  check_memory(checked_product({static_cast<std::size_t>(header_size), 32}),
               std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               // TRANSLATORS: completes "<file>: reading its 2048-byte header would need N MiB, over the ... budget".
               what + ": " + text_format(_("reading its %llu-byte header"), static_cast<unsigned long long>(header_size)));
  return header_size;
}

[[noreturn]] void too_short(std::uint64_t file_size, const std::string& what) {
  throw Error(what + ": " +
              text_format(_("the file is %llu bytes, too short for a safetensors file (it starts with an 8-byte header length)"),
                          static_cast<unsigned long long>(file_size)));
}

// The header (the `header_size` bytes after the length) of a file of `file_size` bytes:
// checked, every tensor's place in the file noted, nothing converted.
SafetensorsFile index_header(const std::uint8_t* header_begin, std::uint64_t header_size, std::uint64_t file_size,
                             const std::string& what);

}  // namespace

// Where an opened file's bytes are. view() makes `n` bytes from `offset` available, either in
// place (memory) or read into `scratch` (a file), and throws when fewer than n can be had.
class SafetensorsSource {
 public:
  SafetensorsSource(std::string what, std::uint64_t size) : what_(std::move(what)), size_(size) {}
  virtual ~SafetensorsSource() = default;
  SafetensorsSource(const SafetensorsSource&) = delete;
  SafetensorsSource& operator=(const SafetensorsSource&) = delete;
  virtual const std::uint8_t* view(std::uint64_t offset, std::size_t n, std::uint8_t* scratch) const = 0;
  const std::string& what() const { return what_; }
  std::uint64_t size() const { return size_; }  ///< bytes when it was opened

 private:
  std::string what_;
  std::uint64_t size_;
};

namespace {

class MemorySource final : public SafetensorsSource {
 public:
  MemorySource(std::span<const std::uint8_t> bytes, const std::string& what) : SafetensorsSource(what, bytes.size()), bytes_(bytes) {}
  const std::uint8_t* view(std::uint64_t offset, std::size_t n, std::uint8_t*) const override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) throw Error(what() + ": " + _("a read past the end of the data"));
    return bytes_.data() + offset;
  }

 private:
  std::span<const std::uint8_t> bytes_;
};

// A file kept open, read with pread(): a file truncated meanwhile ends a read early (an Error
// here) where a memory mapping would raise SIGBUS.
class FileSource final : public SafetensorsSource {
 public:
  FileSource(int fd, const std::string& what, std::uint64_t size) : SafetensorsSource(what, size), fd_(fd) {}
  ~FileSource() override { platform::close_file(fd_); }
  const std::uint8_t* view(std::uint64_t offset, std::size_t n, std::uint8_t* scratch) const override {
    std::size_t got = 0;
    while (got < n) {
      const long long r = platform::read_at(fd_, scratch + got, n - got, offset + got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        const int err = errno;
        // TRANSLATORS: a byte's place in the file, then the system's reason.
        throw Error(what() + ": " + text_format(_("read error at byte %llu (%s)"), static_cast<unsigned long long>(offset + got),
                                                std::strerror(err)));
      }
      if (r == 0)
        throw Error(what() + ": " +
                    text_format(_("the file ended after %llu of its %llu bytes while it was read: it was truncated or replaced "
                                  "meanwhile (load it again)"),
                                static_cast<unsigned long long>(offset + got), static_cast<unsigned long long>(size())));
      got += static_cast<std::size_t>(r);
    }
    return scratch;
  }

 private:
  int fd_;
};

class Sha256 {
 public:
  Sha256() { sha256_init(&ctx_); }
  void update(const std::uint8_t* p, std::size_t n) { sha256_update(&ctx_, n, p); }
  std::string hex() {
    std::uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx_, SHA256_DIGEST_SIZE, digest);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (const std::uint8_t b : digest) {
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
    return out;
  }

 private:
  sha256_ctx ctx_;
};

// Bytes read (and hashed) at a time: a multiple of every element size, small enough to stay in
// the cache between the read, the hash and the conversion.
constexpr std::size_t kPiece = std::size_t{1} << 20;

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* dtype_name(TensorDType dtype) {
  switch (dtype) {
    case TensorDType::F32: return "F32";
    case TensorDType::F16: return "F16";
    case TensorDType::BF16: return "BF16";
  }
  return "?";
}

std::int64_t Tensor::numel() const {
  // A zero dimension makes the count 0 whatever the others: the parser accepts e.g. [2^62, 2^62, 0]
  // (an empty tensor), whose other dimensions' product would overflow (UB for signed integers).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;  // parse_safetensors checked that this fits
  return n;
}

namespace {

SafetensorsFile index_header(const std::uint8_t* header_begin, std::uint64_t header_size, std::uint64_t file_size,
                             const std::string& what) {
  const auto* header_end = header_begin + header_size;

  // Parsed without exceptions; the callback notes a tensor name given twice (the JSON parser
  // would silently keep the last one).
  std::set<std::string> names;
  std::string duplicate;
  const json::parser_callback_t note_duplicates = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key && duplicate.empty() && parsed.is_string() &&
        !names.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(header_begin, header_end, note_duplicates, /*allow_exceptions=*/false);
  } catch (const json::exception& e) {
    // TRANSLATORS: %s is the JSON parser's reason (in English).
    throw Error(what + ": " + text_format(_("the header is not valid JSON (%s)"), e.what()));
  }
  if (header.is_discarded())
    throw Error(what + ": " +
                text_format(_("the header is not valid JSON (%llu bytes after the length; a syntax error or invalid UTF-8)"),
                            static_cast<unsigned long long>(header_size)));
  if (!header.is_object())
    // TRANSLATORS: %s is what the JSON value is ("an array").
    throw Error(what + ": " + text_format(_("the header is %s, not a JSON object"), kind(header).c_str()));
  if (!duplicate.empty())
    // TRANSLATORS: %s is a tensor's name in quotes.
    throw Error(what + ": " + text_format(_("the header names %s twice (a duplicate key)"), quote(duplicate).c_str()));

  const std::uint64_t data_size = file_size - 8 - header_size;
  const HeaderReader reader(what, data_size);
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") file.metadata = reader.metadata(value);
    else if (!is_batch_norm_counter(name, value)) entries.push_back(reader.entry(name, value));
  }

  // No two tensors share a byte: sorted by begin, each non-empty one starts at or after the
  // furthest end so far (empty ones, begin == end, hold no bytes).
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries)
    if (e.end > e.begin) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry* a, const Entry* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  const Entry* furthest = nullptr;
  for (const Entry* e : sorted) {
    if (furthest && e->begin < furthest->end)
      // TRANSLATORS: two tensors' names in quotes, each followed by its data_offsets [begin, end].
      reader.fail(text_format(_("tensors %s (data_offsets [%llu, %llu]) and %s ([%llu, %llu]) overlap"),
                              quote(furthest->name).c_str(),
                              static_cast<unsigned long long>(furthest->begin), static_cast<unsigned long long>(furthest->end),
                              quote(e->name).c_str(), static_cast<unsigned long long>(e->begin),
                              static_cast<unsigned long long>(e->end)));
    if (!furthest || e->end > furthest->end) furthest = e;
  }

  const std::uint64_t data_start = 8 + header_size;
  for (Entry& e : entries) {
    Tensor t;
    t.dtype = e.dtype;
    t.shape = std::move(e.shape);
    t.offset = data_start + e.begin;
    file.tensors.emplace(e.name, std::move(t));
  }
  return file;
}

// Every tensor of an opened file read into its values; the source let go.
void read_all_values(SafetensorsFile& file) {
  // Into vectors of their own first: a tensor whose values are sized is taken as read.
  std::vector<std::vector<float>> values;
  values.reserve(file.tensors.size());
  std::vector<TensorRead> reads;
  for (auto& [name, t] : file.tensors) {
    values.emplace_back(static_cast<std::size_t>(t.numel()));
    reads.push_back({&t, values.back().data()});
  }
  file.read(reads);
  std::size_t i = 0;
  for (auto& [name, t] : file.tensors) t.values = std::move(values[i++]);
  file.source.reset();
}

}  // namespace

std::string SafetensorsFile::read(std::span<const TensorRead> reads, const std::atomic<bool>* stop) const {
  std::vector<const TensorRead*> pending;
  for (const TensorRead& r : reads) {
    if (r.tensor->has_values()) std::copy(r.tensor->values.begin(), r.tensor->values.end(), r.out);
    else pending.push_back(&r);
  }
  if (!source) {
    if (!pending.empty()) throw Error(_("a tensor without values and no file to read it from"));
    return "";
  }
  // In the file's order; outputs of the same tensor side by side.
  std::sort(pending.begin(), pending.end(), [](const TensorRead* a, const TensorRead* b) {
    return std::tie(a->tensor->offset, a->tensor) < std::tie(b->tensor->offset, b->tensor);
  });
  const SafetensorsSource& src = *source;
  Sha256 hash;
  std::vector<std::uint8_t> buffer(kPiece);
  std::uint64_t pos = 0;
  auto check_stop = [stop] {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
  };
  auto hash_up_to = [&](std::uint64_t end) {
    while (pos < end) {
      check_stop();
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, end - pos));
      hash.update(src.view(pos, n, buffer.data()), n);
      pos += n;
    }
  };
  for (std::size_t i = 0; i < pending.size();) {
    const Tensor& t = *pending[i]->tensor;
    std::size_t j = i + 1;
    while (j < pending.size() && pending[j]->tensor == &t) ++j;
    const std::size_t element = dtype_size(t.dtype);
    const std::uint64_t bytes = static_cast<std::uint64_t>(t.numel()) * element;
    if (t.offset < pos || t.offset > src.size() || bytes > src.size() - t.offset)
      throw Error(src.what() + ": " + _("a tensor's bytes overlap another's or lie outside the file"));
    hash_up_to(t.offset);
    for (std::uint64_t done = 0; done < bytes;) {
      check_stop();
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - done));
      float* out = pending[i]->out + done / element;
      if (t.dtype == TensorDType::F32 && std::endian::native == std::endian::little) {
        // Straight into the output, hashed there.
        auto* o = reinterpret_cast<std::uint8_t*>(out);
        const std::uint8_t* p = src.view(pos, n, o);
        if (p != o) std::memcpy(o, p, n);
        hash.update(o, n);
      } else {
        const std::uint8_t* p = src.view(pos, n, buffer.data());
        hash.update(p, n);
        convert(t.dtype, p, n, out);
      }
      for (std::size_t k = i + 1; k < j; ++k) std::copy(out, out + n / element, pending[k]->out + done / element);
      pos += n;
      done += n;
    }
    i = j;
  }
  hash_up_to(src.size());
  return hash.hex();
}

SafetensorsFile index_safetensors(std::span<const std::uint8_t> bytes, const std::string& what) {
  if (bytes.size() < 8) too_short(bytes.size(), what);
  const std::uint64_t header_size = header_length(bytes.data(), bytes.size(), what);
  SafetensorsFile file = index_header(bytes.data() + 8, header_size, bytes.size(), what);
  file.source = std::make_shared<MemorySource>(bytes, what);
  return file;
}

SafetensorsFile parse_safetensors(std::span<const std::uint8_t> bytes, const std::string& what) {
  SafetensorsFile file = index_safetensors(bytes, what);
  read_all_values(file);
  return file;
}

namespace {

// The file at `path` opened for reading (pread), its size noted now.
std::shared_ptr<FileSource> open_file(const std::filesystem::path& path, const char* kind) {
  const std::string what = platform::utf8(path);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(what + ": " + _("no such file"));
  // TRANSLATORS: %s is what the file should be ("a checkpoint file").
  if (std::filesystem::is_directory(status)) throw Error(what + ": " + text_format(_("it is a directory, not %s"), kind));
  if (!std::filesystem::is_regular_file(status)) throw Error(what + ": " + _("not a regular file"));
  int fd = -1;
  std::uint64_t size = 0;
  // Owned by the source from here on: closed when the last copy of the file goes.
  if (const int err = platform::open_regular_for_reading(path, fd, size))
    throw Error(what + ": " +
                (err == platform::ENOTREG_FILE ? std::string(_("not a regular file"))
                                               // TRANSLATORS: %s is the system's reason.
                                               : text_format(_("cannot open it for reading (%s)"), std::strerror(err))));
  return std::make_shared<FileSource>(fd, what, size);
}

}  // namespace

std::shared_ptr<SafetensorsSource> open_file_source(const std::filesystem::path& path) {
  return open_file(path, _("a checkpoint file"));
}

std::shared_ptr<SafetensorsSource> memory_source(std::span<const std::uint8_t> bytes, const std::string& what) {
  return std::make_shared<MemorySource>(bytes, what);
}

void convert_to_float(TensorDType dtype, const std::uint8_t* p, std::size_t count, float* out) {
  convert(dtype, p, count * dtype_size(dtype), out);
}

SafetensorsFile open_safetensors(const std::filesystem::path& path) {
  const std::string what = platform::utf8(path);
  const auto source = open_file(path, _("a safetensors file"));
  const std::uint64_t size = source->size();
  if (size < 8) too_short(size, what);
  std::uint8_t first8[8];
  source->view(0, 8, first8);
  const std::uint64_t header_size = header_length(first8, size, what);
  std::vector<std::uint8_t> header(static_cast<std::size_t>(header_size));
  source->view(8, header.size(), header.data());
  SafetensorsFile file = index_header(header.data(), header_size, size, what);
  file.source = source;
  return file;
}

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  SafetensorsFile file = open_safetensors(path);
  read_all_values(file);
  return file;
}

}  // namespace attnlab
