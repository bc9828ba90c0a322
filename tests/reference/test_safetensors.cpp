// The safetensors reader (core/io/safetensors.hpp): files made here byte by byte, read back with
// hand-worked values for F32, F16 and BF16, and every malformed or hostile header refused with
// one line that names the file and the problem.
#include "core/base/error.hpp"
#include "core/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

using Bytes = std::vector<std::uint8_t>;

struct Spec {
  std::string name;
  std::string dtype;  // as written in the header, e.g. "F16" (or an unsupported one)
  std::vector<std::int64_t> shape;
  Bytes raw;  // the tensor's bytes, little-endian
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The 8-byte little-endian length, `header` and `data`.
Bytes with_header(const std::string& header, const Bytes& data = {}) {
  Bytes out(8);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// A valid safetensors file: the tensors' bytes one after another in the order given.
Bytes make_safetensors(const std::vector<Spec>& tensors, const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  std::string header = "{";
  Bytes data;
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (std::size_t i = 0; i < metadata.size(); ++i)
      header += (i ? "," : "") + json_string(metadata[i].first) + ":" + json_string(metadata[i].second);
    header += "}";
    first = false;
  }
  for (const Spec& t : tensors) {
    header += (first ? "" : ",") + json_string(t.name) + ":{\"dtype\":" + json_string(t.dtype) + ",\"shape\":[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + t.raw.size()) + "]}";
    data.insert(data.end(), t.raw.begin(), t.raw.end());
    first = false;
  }
  return with_header(header + "}", data);
}

Bytes f32_bytes(const std::vector<float>& v) {
  Bytes out;
  for (const float f : v) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
  return out;
}

Bytes u16_bytes(const std::vector<std::uint16_t>& v) {
  Bytes out;
  for (const std::uint16_t u : v) {
    out.push_back(static_cast<std::uint8_t>(u & 0xff));
    out.push_back(static_cast<std::uint8_t>(u >> 8));
  }
  return out;
}

const std::string kWhat = "model.safetensors";

// parse_safetensors must throw one Error, one line, naming the file and containing `part`.
void expect_error(const Bytes& bytes, const std::string& part) {
  try {
    const SafetensorsFile f = parse_safetensors(bytes, kWhat);
    ADD_FAILURE() << "accepted; expected an error containing '" << part << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    EXPECT_EQ(msg.rfind(kWhat + ": ", 0), 0u) << "does not start with the file's name: " << msg;
  }
}

// A header with one tensor entry `entry` (the JSON object's text) and `data` after it.
Bytes one_entry(const std::string& entry, const Bytes& data = Bytes(16)) { return with_header("{\"w\":" + entry + "}", data); }

}  // namespace

TEST(Safetensors, F32RoundTrip) {
  const std::vector<float> v = {1.0f, -2.5f, 3.0e-40f /* subnormal */, std::numeric_limits<float>::infinity(), 0.1f, -0.0f};
  const auto f = parse_safetensors(make_safetensors({{"a", "F32", {2, 3}, f32_bytes(v)}}), kWhat);
  ASSERT_EQ(f.tensors.size(), 1u);
  const Tensor& t = f.tensors.at("a");
  EXPECT_EQ(t.dtype, TensorDType::F32);
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(t.numel(), 6);
  ASSERT_EQ(t.values.size(), 6u);
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(t.values[i]), std::bit_cast<std::uint32_t>(v[i])) << i;
  EXPECT_TRUE(f.metadata.empty());
}

TEST(Safetensors, F16HandWorkedValues) {
  const std::vector<std::uint16_t> h = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x3555, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x8001};
  const auto f = parse_safetensors(make_safetensors({{"h", "F16", {12}, u16_bytes(h)}}), kWhat);
  const Tensor& t = f.tensors.at("h");
  EXPECT_EQ(t.dtype, TensorDType::F16);
  ASSERT_EQ(t.values.size(), 12u);
  EXPECT_EQ(t.values[0], 1.0f);
  EXPECT_EQ(t.values[1], -2.0f);
  EXPECT_EQ(t.values[2], 65504.0f);
  EXPECT_EQ(t.values[3], std::ldexp(1.0f, -24));          // smallest subnormal
  EXPECT_EQ(t.values[4], std::ldexp(1023.0f, -24));       // largest subnormal
  EXPECT_EQ(t.values[5], std::ldexp(1.0f, -14));          // smallest normal
  EXPECT_EQ(t.values[6], 0.333251953125f);                // 0x3555 = (1 + 341/1024) / 4
  EXPECT_EQ(t.values[7], 0.0f);
  EXPECT_TRUE(std::signbit(t.values[7]));                 // -0
  EXPECT_EQ(t.values[8], std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values[9], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(t.values[10]));
  EXPECT_EQ(t.values[11], -std::ldexp(1.0f, -24));
}

#if defined(__FLT16_MANT_DIG__)
// Every one of the 65 536 halves against the compiler's own _Float16 → float conversion.
TEST(Safetensors, F16EveryValueMatchesTheCompiler) {
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
  const auto f = parse_safetensors(make_safetensors({{"all", "F16", {65536}, u16_bytes(all)}}), kWhat);
  const Tensor& t = f.tensors.at("all");
  ASSERT_EQ(t.values.size(), 65536u);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const float expected = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(i)));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(t.values[i])) << std::hex << i;
      EXPECT_EQ(std::signbit(t.values[i]), std::signbit(expected)) << std::hex << i;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(t.values[i]), std::bit_cast<std::uint32_t>(expected)) << std::hex << i;
    }
  }
}
#endif

TEST(Safetensors, BF16HandWorkedValues) {
  const std::vector<std::uint16_t> b = {0x3F80, 0x4049, 0xC0A0, 0x7F80, 0x0001, 0x7FC0};
  const auto f = parse_safetensors(make_safetensors({{"b", "BF16", {3, 2}, u16_bytes(b)}}), kWhat);
  const Tensor& t = f.tensors.at("b");
  EXPECT_EQ(t.dtype, TensorDType::BF16);
  ASSERT_EQ(t.values.size(), 6u);
  EXPECT_EQ(t.values[0], 1.0f);
  EXPECT_EQ(t.values[1], 3.140625f);
  EXPECT_EQ(t.values[2], -5.0f);
  EXPECT_EQ(t.values[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values[4], std::ldexp(1.0f, -133));  // 0x00010000 as a float: 2^16 × 2^-149
  EXPECT_TRUE(std::isnan(t.values[5]));
}

TEST(Safetensors, ScalarZeroSizedMetadataAndSeveralTensors) {
  const auto bytes = make_safetensors({{"scalar", "F32", {}, f32_bytes({42.5f})},
                                       {"empty", "F16", {0, 3}, {}},
                                       {"blocks.0.attn.qkv.bias", "BF16", {2}, u16_bytes({0x3F80, 0x4000})},
                                       {"empty2", "F32", {4, 0}, {}}},
                                      {{"format", "pt"}, {"note", "made by hand"}});
  const auto f = parse_safetensors(bytes, kWhat);
  ASSERT_EQ(f.tensors.size(), 4u);
  const Tensor& s = f.tensors.at("scalar");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.numel(), 1);
  ASSERT_EQ(s.values.size(), 1u);
  EXPECT_EQ(s.values[0], 42.5f);
  const Tensor& e = f.tensors.at("empty");
  EXPECT_EQ(e.shape, (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.values.empty());
  EXPECT_EQ(f.tensors.at("blocks.0.attn.qkv.bias").values, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(f.tensors.at("empty2").numel(), 0);
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "made by hand"}}));
}

TEST(Safetensors, AcceptsPaddingEmptyHeaderAndTrailingOrder) {
  // The format allows the header to be padded with spaces; tensors need not be in offset order.
  const Bytes data = f32_bytes({1.0f, 2.0f});
  auto f = parse_safetensors(with_header(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                         R"("a":{"dtype":"F32","shape":[],"data_offsets":[4,8]}}     )",
                                         data),
                             kWhat);
  EXPECT_EQ(f.tensors.at("b").values, std::vector<float>{1.0f});
  EXPECT_EQ(f.tensors.at("a").values, std::vector<float>{2.0f});
  f = parse_safetensors(with_header("{}"), kWhat);
  EXPECT_TRUE(f.tensors.empty());
  // A zero dimension makes the count 0 even when the others' product would overflow.
  f = parse_safetensors(one_entry(R"({"dtype":"F32","shape":[4611686018427387904,4611686018427387904,0],"data_offsets":[3,3]})"), kWhat);
  EXPECT_EQ(f.tensors.at("w").numel(), 0);
  // Empty tensors may sit anywhere, even inside another's bytes.
  f = parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                    R"("z":{"dtype":"F16","shape":[0],"data_offsets":[4,4]}})",
                                    data),
                        kWhat);
  EXPECT_EQ(f.tensors.size(), 2u);
}

TEST(Safetensors, RefusesBadFraming) {
  expect_error({}, "too short");
  expect_error({1, 0, 0, 0, 0, 0, 0}, "too short");
  Bytes past = with_header("{}");
  past[0] = 3;  // claims 3 bytes, 2 follow
  expect_error(past, "past the end of the file");
  Bytes huge = with_header("{}");
  huge[7] = 0xff;  // 2^63-ish: over the limit (checked before anything is read)
  expect_error(huge, "over the limit");
  Bytes just_over(8);
  const std::uint64_t n = kMaxSafetensorsHeaderBytes + 1;
  for (int i = 0; i < 8; ++i) just_over[i] = static_cast<std::uint8_t>(n >> (8 * i));
  expect_error(just_over, "over the limit");
}

TEST(Safetensors, RefusesBadJson) {
  expect_error(with_header("{\"w\": "), "not valid JSON");
  expect_error(with_header(""), "not valid JSON");
  expect_error(with_header("{\"a\":1}{}"), "not valid JSON");
  expect_error(with_header("{\"\xff\xfe\":{}}"), "not valid JSON");  // invalid UTF-8
  expect_error(with_header("[1,2]"), "not a JSON object");
  expect_error(with_header("\"x\""), "not a JSON object");
  expect_error(with_header("null"), "not a JSON object");
  expect_error(with_header(std::string(100000, '[') + std::string(100000, ']')), "not a JSON object");  // deep nesting
  expect_error(with_header(R"({"w":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[],"data_offsets":[4,8]}})",
                           Bytes(8)),
               "twice");
}

TEST(Safetensors, RefusesMissingAndIllTypedFields) {
  expect_error(one_entry("[1]"), "not an object");
  expect_error(one_entry(R"({"shape":[1],"data_offsets":[0,4]})"), "no dtype");
  expect_error(one_entry(R"({"dtype":"F32","data_offsets":[0,4]})"), "no shape");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1]})"), "no data_offsets");
  expect_error(one_entry(R"({"dtype":5,"shape":[1],"data_offsets":[0,4]})"), "not a string");
  expect_error(one_entry(R"({"dtype":"F32","shape":"1","data_offsets":[0,4]})"), "not an array");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), "not a non-negative integer");
  expect_error(one_entry(R"({"dtype":"F32","shape":["1"],"data_offsets":[0,4]})"), "not a non-negative integer");
  expect_error(one_entry(R"({"dtype":"F32","shape":[null],"data_offsets":[0,4]})"), "not a non-negative integer");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":{"a":0}})"), "data_offsets");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"), "not an array [begin, end]");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})"), "not an array [begin, end]");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,"4"]})"), "not a non-negative integer");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4.0]})"), "not a non-negative integer");
  expect_error(with_header(R"({"__metadata__":[1]})"), "__metadata__");
  expect_error(with_header(R"({"__metadata__":{"format":"pt","n":3}})"), "not a string");
}

TEST(Safetensors, RefusesBadNumbers) {
  expect_error(one_entry(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), "negative dimension");
  expect_error(one_entry(R"({"dtype":"F32","shape":[2,-3],"data_offsets":[0,4]})"), "negative dimension");
  expect_error(one_entry(R"({"dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,4]})"), "overflows");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1e46],"data_offsets":[0,4]})"), "too large, or not whole");
  expect_error(one_entry(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]})"), "element count overflows");
  expect_error(one_entry(R"({"dtype":"F32","shape":[3037000500,3037000500],"data_offsets":[0,4]})"), "element count overflows");
  expect_error(one_entry(R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]})"), "byte count overflows");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[-1,4]})"), "negative");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,1e46]})"), "too large, or not whole");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551616]})"), "too large, or not whole");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]})"), "past the end");
}

TEST(Safetensors, RefusesUnsupportedDtypeNamingIt) {
  try {
    parse_safetensors(one_entry(R"({"dtype":"I64","shape":[2],"data_offsets":[0,16]})"), kWhat);
    ADD_FAILURE() << "I64 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "model.safetensors: tensor 'w' has dtype I64, which is not supported (F32, F16, BF16 are)");
  }
  expect_error(one_entry(R"({"dtype":"f32","shape":[1],"data_offsets":[0,4]})"), "dtype f32, which is not supported");
  expect_error(one_entry(R"({"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]})"), "F8_E4M3");
}

TEST(Safetensors, RefusesBadOffsets) {
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[8,4]})"), "reversed");
  expect_error(one_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[4,20]})"), "past the end of the data");
  expect_error(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":[16,20]})"), "truncated");
  expect_error(one_entry(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), "does not match");
  expect_error(one_entry(R"({"dtype":"F16","shape":[3],"data_offsets":[0,4]})"), "does not match");
  expect_error(one_entry(R"({"dtype":"F32","shape":[],"data_offsets":[0,0]})"), "does not match");
  expect_error(one_entry(R"({"dtype":"F32","shape":[0],"data_offsets":[0,4]})"), "does not match");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                           Bytes(16)),
               "overlap");
  // The overlap is found whatever the header's order, and a tensor inside a longer one too.
  expect_error(with_header(R"({"a":{"dtype":"F16","shape":[1],"data_offsets":[6,8]},)"
                           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[10,18]},)"
                           R"("c":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                           Bytes(32)),
               "overlap");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                           Bytes(8)),
               "overlap");
  // A file cut short: the last tensor's bytes are missing.
  Bytes whole = make_safetensors({{"a", "F32", {2}, f32_bytes({1, 2})}, {"b", "F32", {2}, f32_bytes({3, 4})}});
  whole.resize(whole.size() - 1);
  expect_error(whole, "truncated");
}

TEST(Safetensors, HostileNamesStayOnOneShortLine) {
  // A name with a line break and one of a megabyte: quoted, escaped and shortened.
  expect_error(with_header("{\"bad\\nname\":5}"), "'bad\\nname'");
  const std::string long_name(1 << 20, 'x');
  try {
    parse_safetensors(with_header("{\"" + long_name + "\":{\"dtype\":\"Q\",\"shape\":[],\"data_offsets\":[0,0]}}"), kWhat);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_LT(std::strlen(e.what()), 400u) << "the message quotes the whole name";
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(Safetensors, ReadsAFileOnDiskAndRefusesADirectoryAndAMissingFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab-safetensors-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "model.safetensors";
  const Bytes bytes = make_safetensors({{"pos_embed", "F16", {1, 2}, u16_bytes({0x3C00, 0xC000})}}, {{"format", "pt"}});
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const auto f = read_safetensors(path);
  EXPECT_EQ(f.tensors.at("pos_embed").values, (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(f.metadata.at("format"), "pt");

  auto expect_read_error = [](const std::filesystem::path& p, const std::string& part) {
    try {
      read_safetensors(p);
      ADD_FAILURE() << p << " accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
      EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  expect_read_error(dir, "directory");
  expect_read_error(dir / "missing.safetensors", "no such file");
  // A truncated file on disk: refused by the parser, naming the path.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size() - 2));
  }
  expect_read_error(path, "truncated");
  std::filesystem::remove_all(dir);
}
