#pragma once
// Move-only RAII owners of GL objects, shader compilation, and a guard that restores the GL
// bindings a compute dispatch changes. Needs a current OpenGL 4.3+ context.
#include <epoxy/gl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace attnlab::gl {

/// GL storage held by this code's Buffer and Texture objects, in bytes: now, and the most at
/// once since reset_memory_peak() (what was asked of the driver; its own bookkeeping is not
/// counted). Thread-safe.
struct MemoryUse {
  std::size_t live = 0, peak = 0;
};
MemoryUse memory_use();
void reset_memory_peak();

/// Transfers between the CPU and the GPU since the program started: read-backs (buffer and
/// texture downloads, screenshots) and uploads (buffers, textures, parameter blocks), each a
/// count and bytes. Thread-safe. The app shows what one frame added (Diagnostics); the benchmark
/// what one iteration did. The Buffer and Texture classes count themselves. `fenced` counts
/// the read-backs of results whose fence had already signalled (Fence): copies that did not
/// wait for the GPU; readbacks − fenced is what made the CPU wait.
struct TransferCounts {
  std::uint64_t readbacks = 0, readback_bytes = 0, uploads = 0, upload_bytes = 0, fenced = 0;
  /// What happened between an earlier reading `before` and this one.
  TransferCounts operator-(const TransferCounts& before) const {
    return {readbacks - before.readbacks, readback_bytes - before.readback_bytes, uploads - before.uploads,
            upload_bytes - before.upload_bytes, fenced - before.fenced};
  }
  /// Read-backs that may have waited for the GPU.
  std::uint64_t waited() const { return readbacks - fenced; }
};
TransferCounts transfer_counts();
/// Counts a transfer made outside Buffer and Texture (the app's own textures, glReadPixels).
void count_readback(std::size_t bytes);
void count_upload(std::size_t bytes);
/// Marks `n` read-backs already counted as made after their fence signalled.
void count_fenced(std::uint64_t n);

/// A fence after the commands issued so far (glFenceSync): signalled() asks, without waiting,
/// whether the GPU has finished them. Empty (signalled) when default-constructed.
class Fence {
 public:
  Fence() = default;
  /// Inserts a fence now; needs a current context.
  static Fence now();
  ~Fence();
  Fence(Fence&& o) noexcept : sync_(o.sync_) { o.sync_ = nullptr; }
  Fence& operator=(Fence&& o) noexcept;
  Fence(const Fence&) = delete;
  Fence& operator=(const Fence&) = delete;
  /// True when the commands before the fence are done (flushes them, never waits).
  bool signalled();

 private:
  GLsync sync_ = nullptr;
};

/// A shader storage buffer of `bytes` bytes.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes, const void* data = nullptr);
  ~Buffer();
  Buffer(Buffer&& o) noexcept : id_(std::exchange(o.id_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  GLuint id() const { return id_; }
  std::size_t bytes() const { return bytes_; }
  /// Replaces the contents from offset 0 (size must fit).
  void upload(const void* data, std::size_t bytes, std::size_t offset = 0);
  /// Copies bytes back to the CPU after the writes of earlier dispatches are visible.
  void download(void* out, std::size_t bytes, std::size_t offset = 0) const;
  template <class T>
  void upload(std::span<const T> v, std::size_t offset = 0) { upload(v.data(), v.size_bytes(), offset); }
  /// Reads `bytes` from `offset` in place: maps them read-only (after the writes of earlier
  /// dispatches are visible), calls use(pointer) and unmaps, so the caller can transform the
  /// data as it copies it instead of copying it first. Counted as one read-back. Throws Error
  /// if the range is outside the buffer or the driver cannot map it.
  void read_mapped(std::size_t bytes, std::size_t offset, const std::function<void(const void*)>& use) const;

 private:
  GLuint id_ = 0;
  std::size_t bytes_ = 0;
};

/// A buffer texture over a Buffer (GL_TEXTURE_BUFFER), read in shaders with texelFetch; it
/// does not own the buffer, which must outlive it. `format` e.g. GL_RGBA32F, GL_R32UI.
class BufferTexture {
 public:
  BufferTexture() = default;
  BufferTexture(const Buffer& buffer, GLenum format);
  ~BufferTexture();
  BufferTexture(BufferTexture&& o) noexcept : id_(std::exchange(o.id_, 0)) {}
  BufferTexture& operator=(BufferTexture&& o) noexcept {
    std::swap(id_, o.id_);
    return *this;
  }
  BufferTexture(const BufferTexture&) = delete;
  BufferTexture& operator=(const BufferTexture&) = delete;
  GLuint id() const { return id_; }
  /// Binds it to texture unit `unit`.
  void bind(GLuint unit) const;

 private:
  GLuint id_ = 0;
};

/// A 2D texture; `format` e.g. GL_RGBA8 or GL_RGB32F.
class Texture {
 public:
  Texture() = default;
  Texture(int width, int height, GLenum internal_format);
  ~Texture();
  Texture(Texture&& o) noexcept
      : id_(std::exchange(o.id_, 0)), width_(o.width_), height_(o.height_), format_(o.format_),
        bytes_(std::exchange(o.bytes_, 0)) {}
  Texture& operator=(Texture&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(width_, o.width_);
    std::swap(height_, o.height_);
    std::swap(format_, o.format_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  Texture(const Texture&) = delete;
  Texture& operator=(const Texture&) = delete;

  GLuint id() const { return id_; }
  int width() const { return width_; }
  int height() const { return height_; }
  /// Uploads pixels of `type` (GL_FLOAT / GL_UNSIGNED_BYTE) in `format` (GL_RGB / GL_RGBA).
  void upload(GLenum format, GLenum type, const void* pixels);
  /// Reads the texture back as RGBA8 (width*height*4 bytes).
  void download_rgba8(std::span<std::uint8_t> out) const;

 private:
  GLuint id_ = 0;
  int width_ = 0, height_ = 0;
  GLenum format_ = 0;
  std::size_t bytes_ = 0;  ///< counted in memory_use()
};

/// A linked compute program. Its numbers come from one std140 parameter block at uniform
/// binding 0 (see ParamBlock), never from uniforms looked up by name.
class Program {
 public:
  Program() = default;
  /// Takes a linked program and reads its parameter block once. Throws Error (deleting the
  /// program) if it has a uniform outside the block other than a sampler or image, more than
  /// one block, or a block member that is not a 4-byte int, uint or float.
  explicit Program(GLuint id, std::string name);
  ~Program();
  Program(Program&& o) noexcept
      : id_(std::exchange(o.id_, 0)), name_(std::move(o.name_)), param_bytes_(std::exchange(o.param_bytes_, 0)) {}
  Program& operator=(Program&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(name_, o.name_);
    std::swap(param_bytes_, o.param_bytes_);
    return *this;
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  GLuint id() const { return id_; }
  const std::string& name() const { return name_; }
  /// Where the shader's parameter block ends: the last member's offset + its size, in bytes
  /// (0: no block). All members of a std140 block are active, so this is the block's layout.
  std::size_t param_bytes() const { return param_bytes_; }

 private:
  GLuint id_ = 0;
  std::string name_;
  std::size_t param_bytes_ = 0;
};

/// The parameters of one dispatch, as one std140 uniform block at binding 0. Each kernel
/// declares `layout(std140, binding = 0) uniform Params { int a, b; float c; … };` and its C++
/// caller a struct with the same 4-byte ints and floats in the same order (std140 packs such
/// scalars tightly). set() checks the struct against the size the driver reports for the
/// shader's block, so a member added on one side only is an Error, not a silent wrong value.
/// (A member renamed or reordered on one side is not caught: keep the two side by side.)
class ParamBlock {
 public:
  ParamBlock() : buffer_(kBytes) {}
  /// Uploads `params` and binds the block to uniform binding 0 for `program`'s next dispatch.
  /// Throws Error when the struct's size differs from the block's (Program::param_bytes).
  template <class T>
  void set(const Program& program, const T& params) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0 && sizeof(T) <= kBytes);
    check_size(program, sizeof(T));
    buffer_.upload(&params, sizeof(T));
    glBindBufferBase(GL_UNIFORM_BUFFER, 0, buffer_.id());
  }

 private:
  static constexpr std::size_t kBytes = 256;
  void check_size(const Program& program, std::size_t bytes) const;
  Buffer buffer_;
};

/// The `#version` line put before every shader file.
inline constexpr std::string_view kShaderPrelude = "#version 430 core\n";

/// Compiles and links a compute shader from source. Throws Error naming `name` with the
/// driver's full compile or link log.
Program compile_compute(std::string_view name, std::string_view source);

/// What goes between the #version line and every shader's own text: the shared constants
/// (core/hand_made/shader_constants.hpp), `defines`, shaders/mask_rule.glsl, shaders/common.glsl, and a
/// `#line 1` so the driver's log counts the shader's own lines.
std::string shader_prelude(std::string_view defines = {});

/// Compiles the embedded shader file `name` (shaders/<name>) after shader_prelude(defines).
/// Throws Error if there is no such file or it fails to compile (naming the file, with the
/// driver's log).
Program compile_embedded(std::string_view name, std::string_view defines = {});

/// Saves the program, the SSBO bindings 0..7, uniform buffer binding 0, image unit 0, the 2D texture of unit 0, the
/// buffer textures of units 1..4 and the active texture unit, and restores them when it goes
/// out of scope.
class BindingGuard {
 public:
  BindingGuard();
  ~BindingGuard();
  BindingGuard(const BindingGuard&) = delete;
  BindingGuard& operator=(const BindingGuard&) = delete;

 private:
  GLint program_ = 0, active_texture_ = 0, texture0_ = 0, ssbo_generic_ = 0, buffer_textures_[5] = {};
  GLint ubo0_ = 0, ssbo_[8] = {}, image0_ = 0, image0_level_ = 0, image0_layered_ = 0, image0_layer_ = 0, image0_access_ = 0,
        image0_format_ = 0;
};

/// Binds `buffer` to SSBO binding point `index`.
inline void bind(GLuint index, const Buffer& buffer) { glBindBufferBase(GL_SHADER_STORAGE_BUFFER, index, buffer.id()); }

/// Copies `bytes` bytes from `from` at byte `from_offset` to `to` at `to_offset`, on the GPU
/// (glCopyBufferSubData: neither a read-back nor an upload). Throws Error outside either buffer.
void copy(const Buffer& from, Buffer& to, std::size_t from_offset, std::size_t to_offset, std::size_t bytes);

/// Dispatches `groups` work groups after binding `program`; then a barrier so that later
/// dispatches, buffer reads and texture fetches see the writes.
void dispatch(const Program& program, GLuint groups_x, GLuint groups_y = 1);

/// The GPU time of a stretch of GL commands, from one GL_TIME_ELAPSED query (ARB_timer_query,
/// core since OpenGL 3.3): begin() … end() bracket the commands, milliseconds() waits for the
/// driver's answer. Move-only RAII owner of the query object. Where the context counts no time
/// (GL_QUERY_COUNTER_BITS of GL_TIME_ELAPSED is 0) it makes no query and milliseconds() is
/// empty, so callers degrade to wall-clock numbers. One TIME_ELAPSED query can be active at a
/// time in a context: do not nest two. On llvmpipe the compute work runs on Mesa's threads
/// during the dispatch, so the time is that of the dispatches between begin() and end().
class TimerQuery {
 public:
  TimerQuery();
  ~TimerQuery();
  TimerQuery(TimerQuery&& o) noexcept : id_(std::exchange(o.id_, 0)), state_(std::exchange(o.state_, State::Idle)) {}
  TimerQuery& operator=(TimerQuery&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(state_, o.state_);
    return *this;
  }
  TimerQuery(const TimerQuery&) = delete;
  TimerQuery& operator=(const TimerQuery&) = delete;

  /// Whether the current context measures GPU time (checked once per call; cheap).
  static bool supported();
  /// Starts timing (no-op where unsupported). Throws Error if this query is already running.
  void begin();
  /// Stops timing; throws Error if begin() was not called.
  void end();
  /// The time between begin() and end() in milliseconds, waiting for the GPU if it is not done;
  /// empty where timer queries are unsupported or the query never ran.
  std::optional<double> milliseconds() const;

 private:
  enum class State { Idle, Running, Done };
  GLuint id_ = 0;
  State state_ = State::Idle;
};

/// The largest shader storage block the driver allows, in bytes (llvmpipe: 128 MiB).
std::size_t max_storage_block_bytes();

}  // namespace attnlab::gl
