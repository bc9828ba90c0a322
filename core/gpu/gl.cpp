#include "core/gpu/gl.hpp"

#include "attnlab/embedded_shaders.hpp"
#include "core/base/error.hpp"
#include "core/base/translate.hpp"
#include "core/hand_made/shader_constants.hpp"

#include <algorithm>
#include <atomic>
#include <string>

namespace attnlab::gl {

namespace {

std::atomic<std::size_t> live_bytes{0}, peak_bytes{0};

void count_allocation(std::size_t bytes) {
  const std::size_t now = live_bytes += bytes;
  std::size_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

// Bytes per texel of the formats this code makes (16, the largest, for any other).
std::size_t texel_bytes(GLenum format) {
  switch (format) {
    case GL_R8: return 1;
    case GL_RGBA8: case GL_R32F: case GL_R32UI: return 4;
    case GL_RGB32F: return 12;
    default: return 16;
  }
}

std::atomic<std::uint64_t> readbacks{0}, readback_bytes{0}, uploads{0}, upload_bytes{0}, fenced{0};

}  // namespace

void count_readback(std::size_t bytes) {
  ++readbacks;
  readback_bytes += bytes;
}

void count_upload(std::size_t bytes) {
  ++uploads;
  upload_bytes += bytes;
}

void count_fenced(std::uint64_t n) { fenced += n; }

TransferCounts transfer_counts() {
  return {readbacks.load(), readback_bytes.load(), uploads.load(), upload_bytes.load(), fenced.load()};
}

Fence Fence::now() {
  Fence f;
  f.sync_ = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  return f;
}

Fence::~Fence() {
  if (sync_) glDeleteSync(sync_);
}

Fence& Fence::operator=(Fence&& o) noexcept {
  if (this != &o) {
    if (sync_) glDeleteSync(sync_);
    sync_ = o.sync_;
    o.sync_ = nullptr;
  }
  return *this;
}

bool Fence::signalled() {
  if (!sync_) return true;
  // GL_WAIT_FAILED (a lost context) counts as done: a read then fails loudly instead of the
  // caller waiting for ever.
  if (glClientWaitSync(sync_, GL_SYNC_FLUSH_COMMANDS_BIT, 0) != GL_TIMEOUT_EXPIRED) {
    glDeleteSync(sync_);
    sync_ = nullptr;
    return true;
  }
  return false;
}

MemoryUse memory_use() { return {live_bytes.load(), peak_bytes.load()}; }

void reset_memory_peak() { peak_bytes = live_bytes.load(); }

Buffer::Buffer(std::size_t bytes, const void* data) : bytes_(bytes) {
  GLint previous = 0;
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &previous);
  glGenBuffers(1, &id_);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes ? bytes : 4), data, GL_DYNAMIC_COPY);
  const GLenum err = glGetError();
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(previous));
  if (err == GL_OUT_OF_MEMORY) {
    glDeleteBuffers(1, &id_);
    id_ = 0;
    throw Error(text_format(_("the GPU is out of memory for a buffer of %zu MiB"), bytes >> 20));
  }
  count_allocation(bytes_);
  if (data && bytes) count_upload(bytes);
}

Buffer::~Buffer() {
  if (id_) {
    glDeleteBuffers(1, &id_);
    live_bytes -= bytes_;
  }
}

void Buffer::upload(const void* data, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > bytes_) throw Error(_("internal: buffer upload out of range"));
  if (!bytes) return;
  GLint previous = 0;
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &previous);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), data);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(previous));
  count_upload(bytes);
}

void Buffer::download(void* out, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > bytes_) throw Error(_("internal: buffer download out of range"));
  if (!bytes) return;
  GLint previous = 0;
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &previous);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes), out);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(previous));
  count_readback(bytes);
}

void Buffer::read_mapped(std::size_t bytes, std::size_t offset, const std::function<void(const void*)>& use) const {
  if (offset + bytes > bytes_) throw Error(_("internal: buffer read out of range"));
  if (!bytes) return;
  GLint previous = 0;
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &previous);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, id_);
  const void* p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset), static_cast<GLsizeiptr>(bytes),
                                   GL_MAP_READ_BIT);
  if (!p) {
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(previous));
    throw Error(text_format(_("the GPU could not map a buffer of %zu KiB for reading"), bytes >> 10));
  }
  struct Unmap {  // also when use() throws
    GLuint id, previous;
    ~Unmap() {
      glBindBuffer(GL_SHADER_STORAGE_BUFFER, id);
      glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
      glBindBuffer(GL_SHADER_STORAGE_BUFFER, previous);
    }
  } unmap{id_, static_cast<GLuint>(previous)};
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(previous));
  count_readback(bytes);
  use(p);
}

BufferTexture::BufferTexture(const Buffer& buffer, GLenum format) {
  GLint active = 0, previous = 0;
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
  glGetIntegerv(GL_TEXTURE_BINDING_BUFFER, &previous);
  glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_BUFFER, id_);
  glTexBuffer(GL_TEXTURE_BUFFER, format, buffer.id());
  glBindTexture(GL_TEXTURE_BUFFER, static_cast<GLuint>(previous));
}

BufferTexture::~BufferTexture() {
  if (id_) glDeleteTextures(1, &id_);
}

void BufferTexture::bind(GLuint unit) const {
  glActiveTexture(GL_TEXTURE0 + unit);
  glBindTexture(GL_TEXTURE_BUFFER, id_);
  glActiveTexture(GL_TEXTURE0);
}

Texture::Texture(int width, int height, GLenum internal_format)
    : width_(width), height_(height), format_(internal_format) {
  GLint previous = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glGenTextures(1, &id_);
  glBindTexture(GL_TEXTURE_2D, id_);
  glTexStorage2D(GL_TEXTURE_2D, 1, internal_format, width, height);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  const GLenum err = glGetError();
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
  if (err != GL_NO_ERROR) {
    glDeleteTextures(1, &id_);
    id_ = 0;
    throw Error(text_format(_("cannot make a %dx%d texture (GL error %u)"), width, height, static_cast<unsigned>(err)));
  }
  bytes_ = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * texel_bytes(internal_format);
  count_allocation(bytes_);
}

Texture::~Texture() {
  if (id_) {
    glDeleteTextures(1, &id_);
    live_bytes -= bytes_;
  }
}

void Texture::upload(GLenum format, GLenum type, const void* pixels) {
  GLint previous = 0, align = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glGetIntegerv(GL_UNPACK_ALIGNMENT, &align);
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width_, height_, format, type, pixels);
  glPixelStorei(GL_UNPACK_ALIGNMENT, align);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
  const std::size_t channels = format == GL_RGBA ? 4 : format == GL_RGB ? 3 : format == GL_RG ? 2 : 1;
  count_upload(static_cast<std::size_t>(width_) * height_ * channels * (type == GL_FLOAT ? 4 : 1));
}

void Texture::download_rgba8(std::span<std::uint8_t> out) const {
  if (out.size() != static_cast<size_t>(width_) * height_ * 4) throw Error(_("internal: texture download size"));
  GLint previous = 0, align = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
  glGetIntegerv(GL_PACK_ALIGNMENT, &align);
  glBindTexture(GL_TEXTURE_2D, id_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, out.data());
  glPixelStorei(GL_PACK_ALIGNMENT, align);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
  count_readback(out.size());
}

namespace {

bool is_opaque(GLint type) {  // samplers and images: bound by their layout(binding), no value to set
  switch (type) {
    case GL_SAMPLER_2D: case GL_SAMPLER_BUFFER: case GL_INT_SAMPLER_BUFFER: case GL_UNSIGNED_INT_SAMPLER_BUFFER:
    case GL_IMAGE_2D: case GL_IMAGE_BUFFER:
      return true;
    default:
      return false;
  }
}

}  // namespace

Program::Program(GLuint id, std::string name) : id_(id), name_(std::move(name)) {
  // Every number a kernel reads is in its one parameter block: a loose uniform (one that would
  // have to be set by name) or a second block is refused here, when the shader is compiled.
  std::string refused;
  GLint blocks = 0, uniforms = 0;
  glGetProgramInterfaceiv(id_, GL_UNIFORM_BLOCK, GL_ACTIVE_RESOURCES, &blocks);
  glGetProgramInterfaceiv(id_, GL_UNIFORM, GL_ACTIVE_RESOURCES, &uniforms);
  if (blocks > 1) refused = text_format(_("%d uniform blocks; a kernel takes one, Params"), static_cast<int>(blocks));
  for (GLint u = 0; u < uniforms && refused.empty(); ++u) {
    const GLenum props[] = {GL_BLOCK_INDEX, GL_TYPE, GL_OFFSET, GL_ARRAY_SIZE};
    GLint v[4] = {};
    glGetProgramResourceiv(id_, GL_UNIFORM, static_cast<GLuint>(u), 4, props, 4, nullptr, v);
    if (v[0] < 0 && !is_opaque(v[1])) {
      char uname[64] = {};
      glGetProgramResourceName(id_, GL_UNIFORM, static_cast<GLuint>(u), sizeof uname, nullptr, uname);
      refused = text_format(_("a uniform outside its parameter block (%s)"), uname);
    } else if (v[0] >= 0) {
      if (v[1] != GL_INT && v[1] != GL_FLOAT && v[1] != GL_UNSIGNED_INT)
        refused = _("a parameter that is not an int, uint or float");
      else param_bytes_ = std::max(param_bytes_, static_cast<std::size_t>(v[2]) + 4 * static_cast<std::size_t>(v[3]));
    }
  }
  if (!refused.empty()) {
    glDeleteProgram(std::exchange(id_, 0));
    throw Error(text_format(_("internal: shader %s has %s"), name_.c_str(), refused.c_str()));
  }
}

Program::~Program() {
  if (id_) glDeleteProgram(id_);
}

void ParamBlock::check_size(const Program& program, std::size_t bytes) const {
  const std::size_t block = program.param_bytes();
  if (block != bytes)
    throw Error(text_format(_("internal: shader %s's parameter block is %zu bytes, its C++ struct %zu"), program.name().c_str(),
                            block, bytes));
}

Program compile_compute(std::string_view name, std::string_view source) {
  const std::string text = std::string(kShaderPrelude) + std::string(source);
  const GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
  const char* src = text.c_str();
  glShaderSource(shader, 1, &src, nullptr);
  glCompileShader(shader);
  GLint ok = 0, len = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &len);
    std::string log(static_cast<size_t>(std::max(len, 1)), '\0');
    glGetShaderInfoLog(shader, len, nullptr, log.data());
    glDeleteShader(shader);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw Error::with_log(text_format(_("shader %s failed to compile:"), std::string(name).c_str()), log);
  }
  const GLuint program = glCreateProgram();
  glAttachShader(program, shader);
  glLinkProgram(program);
  glDeleteShader(shader);
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    glGetProgramiv(program, GL_INFO_LOG_LENGTH, &len);
    std::string log(static_cast<size_t>(std::max(len, 1)), '\0');
    glGetProgramInfoLog(program, len, nullptr, log.data());
    glDeleteProgram(program);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw Error::with_log(text_format(_("shader %s failed to link:"), std::string(name).c_str()), log);
  }
  return Program(program, std::string(name));
}

std::string shader_prelude(std::string_view defines) {
  std::string source = shader::shader_constant_defines() + std::string(defines) + "\n";
  for (const char* shared : {"mask_rule.glsl", "common.glsl"}) {
    const auto text = embedded_shader(shared);
    if (!text) throw Error(text_format(_("internal: the embedded shader %s is missing"), shared));
    source += std::string(*text) + "\n";
  }
  return source + "#line 1\n";
}

Program compile_embedded(std::string_view name, std::string_view defines) {
  const auto body = embedded_shader(name);
  if (!body) throw Error(text_format(_("no embedded shader named %s"), std::string(name).c_str()));
  std::string source = shader_prelude(defines);
  source += *body;
  return compile_compute(name, source);
}

BindingGuard::BindingGuard() {
  glGetIntegerv(GL_CURRENT_PROGRAM, &program_);
  glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture_);
  for (GLuint u = 1; u < 5; ++u) {
    glActiveTexture(GL_TEXTURE0 + u);
    glGetIntegerv(GL_TEXTURE_BINDING_BUFFER, &buffer_textures_[u]);
  }
  glActiveTexture(GL_TEXTURE0);
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture0_);
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &ssbo_generic_);
  glGetIntegeri_v(GL_UNIFORM_BUFFER_BINDING, 0, &ubo0_);
  for (GLuint i = 0; i < 8; ++i) glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, i, &ssbo_[i]);
  glGetIntegeri_v(GL_IMAGE_BINDING_NAME, 0, &image0_);
  glGetIntegeri_v(GL_IMAGE_BINDING_LEVEL, 0, &image0_level_);
  glGetIntegeri_v(GL_IMAGE_BINDING_LAYERED, 0, &image0_layered_);
  glGetIntegeri_v(GL_IMAGE_BINDING_LAYER, 0, &image0_layer_);
  glGetIntegeri_v(GL_IMAGE_BINDING_ACCESS, 0, &image0_access_);
  glGetIntegeri_v(GL_IMAGE_BINDING_FORMAT, 0, &image0_format_);
}

BindingGuard::~BindingGuard() {
  glUseProgram(static_cast<GLuint>(program_));
  for (GLuint i = 0; i < 8; ++i) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, static_cast<GLuint>(ssbo_[i]));
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, static_cast<GLuint>(ssbo_generic_));
  glBindBufferBase(GL_UNIFORM_BUFFER, 0, static_cast<GLuint>(ubo0_));
  glBindImageTexture(0, static_cast<GLuint>(image0_), image0_level_, static_cast<GLboolean>(image0_layered_),
                     image0_layer_, static_cast<GLenum>(image0_access_), static_cast<GLenum>(image0_format_ ? image0_format_ : GL_RGBA8));
  for (GLuint u = 1; u < 5; ++u) {
    glActiveTexture(GL_TEXTURE0 + u);
    glBindTexture(GL_TEXTURE_BUFFER, static_cast<GLuint>(buffer_textures_[u]));
  }
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture0_));
  glActiveTexture(static_cast<GLenum>(active_texture_));
}

void copy(const Buffer& from, Buffer& to, std::size_t from_offset, std::size_t to_offset, std::size_t bytes) {
  if (from_offset + bytes > from.bytes() || to_offset + bytes > to.bytes()) throw Error(_("internal: buffer copy out of range"));
  if (!bytes) return;
  GLint read = 0, write = 0;
  glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &read);
  glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &write);
  glBindBuffer(GL_COPY_READ_BUFFER, from.id());
  glBindBuffer(GL_COPY_WRITE_BUFFER, to.id());
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, static_cast<GLintptr>(from_offset),
                      static_cast<GLintptr>(to_offset), static_cast<GLsizeiptr>(bytes));
  glBindBuffer(GL_COPY_READ_BUFFER, static_cast<GLuint>(read));
  glBindBuffer(GL_COPY_WRITE_BUFFER, static_cast<GLuint>(write));
}

void dispatch(const Program& program, GLuint groups_x, GLuint groups_y) {
  glUseProgram(program.id());
  glDispatchCompute(groups_x, groups_y, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT |
                  GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT);
}

bool TimerQuery::supported() {
  GLint bits = 0;
  glGetQueryiv(GL_TIME_ELAPSED, GL_QUERY_COUNTER_BITS, &bits);
  return bits > 0;
}

TimerQuery::TimerQuery() {
  if (supported()) glGenQueries(1, &id_);
}

TimerQuery::~TimerQuery() {
  if (id_) {
    if (state_ == State::Running) glEndQuery(GL_TIME_ELAPSED);
    glDeleteQueries(1, &id_);
  }
}

void TimerQuery::begin() {
  if (state_ == State::Running) throw Error(_("internal: timer query begun twice"));
  state_ = State::Running;
  if (id_) glBeginQuery(GL_TIME_ELAPSED, id_);
}

void TimerQuery::end() {
  if (state_ != State::Running) throw Error(_("internal: timer query ended without begin"));
  state_ = State::Done;
  if (id_) glEndQuery(GL_TIME_ELAPSED);
}

std::optional<double> TimerQuery::milliseconds() const {
  if (!id_ || state_ != State::Done) return std::nullopt;
  GLuint64 ns = 0;
  glGetQueryObjectui64v(id_, GL_QUERY_RESULT, &ns);  // waits for the result
  return static_cast<double>(ns) * 1e-6;
}

std::size_t max_storage_block_bytes() {
  GLint64 v = 0;
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &v);
  return static_cast<std::size_t>(v);
}

}  // namespace attnlab::gl
