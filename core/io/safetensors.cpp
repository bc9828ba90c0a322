#include "core/io/safetensors.hpp"

#include "core/base/budget.hpp"
#include "core/base/error.hpp"
#include "core/base/platform.hpp"

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
// may hold a name of megabytes); one_line() in Error escapes control characters.
std::string quote(const std::string& s) {
  constexpr std::size_t kMax = 80;
  if (s.size() <= kMax) return "'" + s + "'";
  return "'" + s.substr(0, kMax) + "...' (" + std::to_string(s.size()) + " characters)";
}

// What a JSON value is, for "... is a string, not an array".
std::string kind(const json& j) {
  if (j.is_number_unsigned()) return "the number " + std::to_string(j.get<std::uint64_t>());
  if (j.is_number_integer()) return "the number " + std::to_string(j.get<std::int64_t>());
  if (j.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "the number %g", j.get<double>());
    return buf;
  }
  return std::string("a") + (j.is_array() || j.is_object() ? "n " : " ") + j.type_name();
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

  Entry entry(const std::string& name, const json& j) const {
    const std::string t = "tensor " + quote(name);
    if (!j.is_object()) fail(t + " is " + kind(j) + ", not an object with dtype, shape and data_offsets");
    Entry e;
    e.name = name;
    e.dtype = dtype(t, field(t, j, "dtype"));
    e.shape = shape(t, field(t, j, "shape"));
    const json& offsets = field(t, j, "data_offsets");
    if (!offsets.is_array() || offsets.size() != 2)
      fail(t + " has data_offsets " + (offsets.is_array() ? "with " + std::to_string(offsets.size()) + " numbers" : kind(offsets)) +
           ", not an array [begin, end]");
    e.begin = offset(t, offsets[0], "begin");
    e.end = offset(t, offsets[1], "end");
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.end < e.begin) fail(t + " has reversed data_offsets " + range + " (end before begin)");
    if (e.end > data_size_)
      fail(t + " has data_offsets " + range + " past the end of the data (" + std::to_string(data_size_) +
           " bytes): the file is truncated or the offsets are wrong");
    // numel × the dtype's size, without overflow (a zero dimension makes it 0 whatever the others).
    std::uint64_t numel = 1;
    bool overflow = false;
    if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) numel = 0;
    else
      for (const std::int64_t d : e.shape)
        overflow = overflow || __builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel);
    if (overflow || numel > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(t + " has a shape whose element count overflows 64 bits");
    std::uint64_t byte_count = 0;
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(dtype_size(e.dtype)), &byte_count))
      fail(t + " has a shape whose byte count overflows 64 bits");
    if (e.end - e.begin != byte_count)
      fail(t + " has " + std::to_string(e.end - e.begin) + " bytes of data (data_offsets " + range + ") but its shape and dtype " +
           dtype_name(e.dtype) + " need " + std::to_string(numel) + " x " + std::to_string(dtype_size(e.dtype)) + " = " +
           std::to_string(byte_count) + " bytes: the length does not match");
    return e;
  }

  std::map<std::string, std::string> metadata(const json& j) const {
    if (!j.is_object()) fail("__metadata__ is " + kind(j) + ", not an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : j.items()) {
      if (!value.is_string()) fail("__metadata__ value " + quote(key) + " is " + kind(value) + ", not a string");
      out.emplace(key, value.get<std::string>());
    }
    return out;
  }

 private:
  const json& field(const std::string& t, const json& j, const char* key) const {
    const auto it = j.find(key);
    if (it == j.end()) fail(t + " has no " + key + " (every tensor needs dtype, shape and data_offsets)");
    return *it;
  }

  TensorDType dtype(const std::string& t, const json& j) const {
    if (!j.is_string()) fail(t + " has dtype " + kind(j) + ", not a string such as \"F32\"");
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "F32") return TensorDType::F32;
    if (s == "F16") return TensorDType::F16;
    if (s == "BF16") return TensorDType::BF16;
    fail(t + " has dtype " + (s.size() <= 80 ? s : quote(s)) + ", which is not supported (F32, F16, BF16 are)");
  }

  std::vector<std::int64_t> shape(const std::string& t, const json& j) const {
    if (!j.is_array()) fail(t + " has shape " + kind(j) + ", not an array of dimensions");
    std::vector<std::int64_t> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      const json& d = j[i];
      const std::string which = t + " has shape dimension " + std::to_string(i) + " ";
      if (d.is_number_unsigned()) {
        const std::uint64_t v = d.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail(which + std::to_string(v) + ", which overflows 64-bit signed integers");
        out.push_back(static_cast<std::int64_t>(v));
      } else if (d.is_number_integer()) {
        fail(which + std::to_string(d.get<std::int64_t>()) + ": a negative dimension");
      } else {
        fail(which + "as " + kind(d) + ", not a non-negative integer" +
             (d.is_number_float() ? " (too large, or not whole)" : ""));
      }
    }
    return out;
  }

  std::uint64_t offset(const std::string& t, const json& j, const char* which) const {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer()) fail(t + " has a negative data_offsets " + which + " (" + std::to_string(j.get<std::int64_t>()) + ")");
    fail(t + " has data_offsets " + which + " as " + kind(j) + ", not a non-negative integer" +
         (j.is_number_float() ? " (too large, or not whole)" : ""));
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
    throw Error(what + ": the header length is " + std::to_string(header_size) + " bytes, over the limit of " +
                std::to_string(kMaxSafetensorsHeaderBytes) + " (not a safetensors file, or a corrupt one)");
  if (header_size > file_size - 8)
    throw Error(what + ": the header length is " + std::to_string(header_size) + " bytes, past the end of the file (" +
                std::to_string(file_size - 8) + " bytes follow it): the file is truncated or not a safetensors file");
  // Parsed, a JSON value per number, list and name: up to about 32 bytes per byte of text (e.g.
  // "[1,2,3]" → three 16-byte values in a list), checked before it is read.
  check_memory(checked_product({static_cast<std::size_t>(header_size), 32}),
               std::max<std::uint64_t>(memory_budget(), kAlwaysAllowedBytes),
               what + ": reading its " + std::to_string(header_size) + "-byte header");
  return header_size;
}

[[noreturn]] void too_short(std::uint64_t file_size, const std::string& what) {
  throw Error(what + ": the file is " + std::to_string(file_size) +
              " bytes, too short for a safetensors file (it starts with an 8-byte header length)");
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
    if (offset > bytes_.size() || n > bytes_.size() - offset) throw Error(what() + ": a read past the end of the data");
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
      if (r < 0) throw Error(what() + ": read error at byte " + std::to_string(offset + got) + " (" + std::strerror(errno) + ")");
      if (r == 0)
        throw Error(what() + ": the file ended after " + std::to_string(offset + got) + " of its " + std::to_string(size()) +
                    " bytes while it was read: it was truncated or replaced meanwhile (load it again)");
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
    throw Error(what + ": the header is not valid JSON (" + e.what() + ")");
  }
  if (header.is_discarded())
    throw Error(what + ": the header is not valid JSON (" + std::to_string(header_size) +
                " bytes after the length; a syntax error or invalid UTF-8)");
  if (!header.is_object()) throw Error(what + ": the header is " + kind(header) + ", not a JSON object");
  if (!duplicate.empty()) throw Error(what + ": the header names " + quote(duplicate) + " twice (a duplicate key)");

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
      reader.fail("tensors " + quote(furthest->name) + " (data_offsets [" + std::to_string(furthest->begin) + ", " +
                  std::to_string(furthest->end) + "]) and " + quote(e->name) + " ([" + std::to_string(e->begin) + ", " +
                  std::to_string(e->end) + "]) overlap");
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
    if (!pending.empty()) throw Error("a tensor without values and no file to read it from");
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
    if (stop && stop->load(std::memory_order_relaxed)) throw Error("cancelled");
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
      throw Error(src.what() + ": a tensor's bytes overlap another's or lie outside the file");
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
  if (ec || !std::filesystem::exists(status)) throw Error(what + ": no such file");
  if (std::filesystem::is_directory(status)) throw Error(what + ": it is a directory, not " + kind);
  if (!std::filesystem::is_regular_file(status)) throw Error(what + ": not a regular file");
  int fd = -1;
  std::uint64_t size = 0;
  // Owned by the source from here on: closed when the last copy of the file goes.
  if (const int err = platform::open_regular_for_reading(path, fd, size))
    throw Error(what + (err == platform::ENOTREG_FILE ? std::string(": not a regular file")
                                                      : ": cannot open it for reading (" + std::string(std::strerror(err)) + ")"));
  return std::make_shared<FileSource>(fd, what, size);
}

}  // namespace

std::shared_ptr<SafetensorsSource> open_file_source(const std::filesystem::path& path) { return open_file(path, "a checkpoint file"); }

std::shared_ptr<SafetensorsSource> memory_source(std::span<const std::uint8_t> bytes, const std::string& what) {
  return std::make_shared<MemorySource>(bytes, what);
}

void convert_to_float(TensorDType dtype, const std::uint8_t* p, std::size_t count, float* out) {
  convert(dtype, p, count * dtype_size(dtype), out);
}

SafetensorsFile open_safetensors(const std::filesystem::path& path) {
  const std::string what = platform::utf8(path);
  const auto source = open_file(path, "a safetensors file");
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
