#pragma once
// The views' one cache helper (issue 39): a value remade only when the inputs it depends on change.
// A view keeps one Memo per picture or number it derives, keyed by exactly what it is made of
// (typically a tuple of the session's generation and the settings that shape it: query, head,
// colormap …). Nothing else decides when a derived value is stale, so no view keeps
// generation/valid fields by hand and none keeps its caches in function-level statics (a static
// is shared by every caller, e.g. the ViT and the Train tab). The map textures of a source,
// keyed by strings per named slot, are MapTextures (sessions/vit_session.hpp).
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace attnlab::app {

/// The last value made and the key it was made for. `Key` needs ==, `Value` only to be movable
/// (GuiTexture) or default-constructible (when filled in place).
template <class Key, class Value>
class Memo {
 public:
  /// The value for `key`: kept when `key` equals the last one, else made again by `make` —
  /// either `Value make()` or `void make(Value& v)` (fills the kept value in place, so a texture
  /// or a buffer is reused). When `make` throws, the memo forgets its key (the next call makes it
  /// again) and the exception goes on.
  template <class Make>
  Value& get(const Key& key, Make&& make) {
    if (key_ && *key_ == key) return *value_;
    key_.reset();
    if constexpr (std::is_invocable_v<Make, Value&>) {
      if (!value_) value_.emplace();
      std::forward<Make>(make)(*value_);
    } else {
      value_.emplace(std::forward<Make>(make)());
    }
    key_.emplace(key);
    return *value_;
  }
  /// For a memo whose value is kept elsewhere (KeyMemo: many numbers and pictures made together
  /// and read by many draw functions, as the view's own members): runs `make()` when `key`
  /// differs from the last one. Returns whether it ran.
  template <class Make>
  bool update(const Key& key, Make&& make) {
    bool ran = false;
    get(key, [&](Value&) {
      std::forward<Make>(make)();
      ran = true;
    });
    return ran;
  }
  /// The key the value was last made for; null before the first, after invalidate() or a throw.
  const Key* key() const { return key_ ? &*key_ : nullptr; }
  /// Whether a value is kept for `key` (get would not make it again).
  bool fresh(const Key& key) const { return key_ && *key_ == key; }
  /// The value last made, fresh or not (null before the first).
  Value* last() { return value_ ? &*value_ : nullptr; }
  const Value* last() const { return value_ ? &*value_ : nullptr; }
  /// The next get makes the value again (it stays until then: last() still sees it).
  void invalidate() { key_.reset(); }
  /// Forgets the value and its key.
  void clear() {
    key_.reset();
    value_.reset();
  }

 private:
  std::optional<Key> key_;
  std::optional<Value> value_;
};

/// A memo of the key alone: the values it guards are the owner's members (Memo::update).
template <class Key>
using KeyMemo = Memo<Key, std::monostate>;

}  // namespace attnlab::app
