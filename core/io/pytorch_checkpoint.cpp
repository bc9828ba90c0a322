// PyTorch zip checkpoints read without Python. What is accepted follows PyTorch's own reader:
// torch/serialization.py (_load: the archive's layout, persistent_load of ('storage', type,
// key, location, numel), the byteorder record) and torch/_weights_only_unpickler.py (the
// globals, opcodes, BUILD and persistent ids that torch.load(weights_only=True) accepts). The
// zip is libzip's; the pickle subset below is ours and runs no code: a global is a name
// compared with a short list, never looked up.
#include "core/io/pytorch_checkpoint.hpp"


#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/platform.hpp"
#include "core/base/translate.hpp"
#include "core/io/zip_archive.hpp"

namespace attnlab {
namespace {

// A name from the file, quoted for a message (escaped as Error would: it goes into messages through %s).
std::string quote(const std::string& s) { return "'" + one_line(s.size() > 80 ? s.substr(0, 80) + "…" : s) + "'"; }

std::string hex_byte(std::uint8_t b) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", b);
  return text;
}

// ---- The storages' element types (torch/storage.py: torch.<T>Storage and their dtypes) ----

struct StorageType {
  const char* torch_name;  // "FloatStorage"
  const char* dtype;       // safetensors' name of the dtype
  std::size_t element;     // bytes
  std::optional<TensorDType> supported;
};

constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", "F32", 4, TensorDType::F32},
    {"HalfStorage", "F16", 2, TensorDType::F16},
    {"BFloat16Storage", "BF16", 2, TensorDType::BF16},
    {"DoubleStorage", "F64", 8, std::nullopt},
    {"LongStorage", "I64", 8, std::nullopt},
    {"IntStorage", "I32", 4, std::nullopt},
    {"ShortStorage", "I16", 2, std::nullopt},
    {"CharStorage", "I8", 1, std::nullopt},
    {"ByteStorage", "U8", 1, std::nullopt},
    {"BoolStorage", "BOOL", 1, std::nullopt},
    {"ComplexFloatStorage", "C64", 8, std::nullopt},
    {"ComplexDoubleStorage", "C128", 16, std::nullopt},
};

// ---- The objects a pickle builds ----

enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor };

// What a Python object of the pickle is, completing sentences such as "APPEND to a tuple, not a list".
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None:
      return "None";  // i18n: English (Python's None)
    case Kind::Bool:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a bool");
    case Kind::Int:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("an int");
    case Kind::Float:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a float");
    case Kind::Str:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a string");
    case Kind::Tuple:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a tuple");
    case Kind::List:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a list");
    case Kind::Dict:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a dict");
    case Kind::Global:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a global");
    case Kind::Storage:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a storage");
    case Kind::Tensor:
      // TRANSLATORS: a kind of Python object in a checkpoint, completing "APPEND to %s, not a list".
      return _("a tensor");
  }
  return "?";
}

// The globals accepted (torch/_weights_only_unpickler.py, _get_allowed_globals(), the part a
// state dict of float tensors needs).
enum class Callable { OrderedDict, RebuildTensorV2, RebuildParameter, Storage };

struct Value;

struct DictData {
  bool ordered = false;  // collections.OrderedDict (BUILD allowed on it, as torch does)
  std::vector<std::pair<Value*, Value*>> entries;
  std::unordered_map<std::string, std::size_t> index;  // by hash_key() of the key
};

struct StorageRef {
  const StorageType* type = nullptr;
  std::string key;
  std::int64_t numel = 0;
};

struct TensorRef {
  const Value* storage = nullptr;
  std::int64_t offset = 0;
  std::vector<std::int64_t> size, stride;
};

struct Value {
  Kind kind = Kind::None;
  int depth = 0;  // containers within it, as they were inserted
  std::int64_t i = 0;
  double f = 0;
  std::string s;                              // Str; Global: its dotted name
  Callable callable{};                        // Global
  const StorageType* storage_type = nullptr;  // Global torch.<T>Storage
  std::vector<Value*> items;                  // Tuple, List
  std::unique_ptr<DictData> dict;
  std::unique_ptr<StorageRef> storage;
  std::unique_ptr<TensorRef> tensor;
};

// A dict key's identity: the pickles torch writes key dicts by strings and ints only.
std::optional<std::string> hash_key(const Value& v) {
  switch (v.kind) {
    case Kind::Str:
      return "s" + v.s;
    case Kind::Int:
      return "i" + std::to_string(v.i);
    case Kind::Bool:
      return "i" + std::to_string(v.i);  // True == 1 as Python's dict keys
    case Kind::None:
      return std::string("n");
    default:
      return std::nullopt;
  }
}

constexpr std::size_t kMaxValues = 1u << 20;

// ---- The unpickler (pickle protocol 2 as torch.save writes it, and the protocol 4 framing
// opcodes), after torch/_weights_only_unpickler.py's Unpickler.load. In three parts: the
// Unpickler's state (the bytes read, the stack, the marks, the memo and the objects made, with
// the checks each step needs), the allow-list (which globals may be named and what calling them
// builds: allowed_global, reduce, persistent_load, build) and the opcode handlers (container_op,
// scalar_op, object_op), which unpickle() runs until STOP ----

class Unpickler {
 public:
  Unpickler(std::span<const std::uint8_t> data, const std::string& what) : p_(data), what_(what) {}

  [[noreturn]] void fail(const std::string& problem) const { throw Error(what_ + ": " + problem); }

  // -- reading
  std::size_t size() const { return p_.size(); }
  std::size_t position() const { return pos_; }
  std::uint64_t remaining() const { return p_.size() - pos_; }
  void need(std::uint64_t n) const {
    if (n > p_.size() - pos_) fail(_("the pickle ends inside an opcode's argument (data.pkl is truncated)"));
  }
  std::uint8_t byte() {
    need(1);
    return p_[pos_++];
  }
  /// The next opcode; fails at the end of the bytes (no STOP).
  std::uint8_t opcode() {
    if (pos_ >= p_.size()) fail(_("the pickle ends before its STOP opcode (data.pkl is truncated)"));
    return p_[pos_++];
  }
  /// The next `n` bytes (checked to be there), consumed.
  std::span<const std::uint8_t> take(std::uint64_t n) {
    need(n);
    const auto out = p_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  /// An unsigned little-endian integer of `n` bytes.
  std::uint64_t le(int n) {
    std::uint64_t u = 0;
    const auto b = take(static_cast<std::uint64_t>(n));
    for (int k = 0; k < n; ++k) u |= std::uint64_t{b[static_cast<std::size_t>(k)]} << (8 * k);
    return u;
  }
  std::string line() {
    const auto* begin = p_.data() + pos_;
    const auto* end = std::find(begin, p_.data() + p_.size(), std::uint8_t{'\n'});
    if (end == p_.data() + p_.size()) fail(_("the pickle ends inside a GLOBAL's name (data.pkl is truncated)"));
    pos_ += static_cast<std::size_t>(end - begin) + 1;
    return std::string(begin, end);
  }

  // -- the stack
  bool marks_open() const { return !marks_.empty(); }
  std::size_t stack_size() const { return stack_.size(); }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  [[noreturn]] void underflow() const {
    fail(_("the pickle takes more objects from its stack than it put there (corrupt data.pkl)"));
  }
  void push(Value* v) {
    if (stack_.size() >= kMaxPickleStack)
      fail(text_format(_("more than %zu objects on the pickle's stack"), kMaxPickleStack));
    stack_.push_back(v);
  }
  Value* pop() {
    if (stack_.size() <= floor()) underflow();
    Value* v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Value* top() const {
    if (stack_.size() <= floor()) underflow();
    return stack_.back();
  }
  /// The top `n` objects (above the last MARK), oldest first, taken off the stack.
  std::vector<Value*> pop_n(std::size_t n) {
    if (stack_.size() < n || stack_.size() - n < floor()) underflow();
    std::vector<Value*> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return items;
  }
  void mark() {
    if (marks_.size() >= kMaxPickleMarks)
      // TRANSLATORS: MARK is an opcode of Python's pickle format (keep it as is).
      fail(text_format(_("more than %zu MARKs open at once (nesting too deep)"), kMaxPickleMarks));
    marks_.push_back(stack_.size());
  }
  std::vector<Value*> pop_mark() {
    // TRANSLATORS: MARK is an opcode of Python's pickle format (keep it as is).
    if (marks_.empty()) fail(_("an opcode that needs a MARK without one (corrupt data.pkl)"));
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Value*> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }

  // -- objects
  Value* make(Kind k) {
    if (values_.size() >= kMaxValues) fail(text_format(_("the pickle makes more than %zu objects"), kMaxValues));
    Value& v = values_.emplace_back();
    v.kind = k;
    if (k == Kind::Dict) v.dict = std::make_unique<DictData>();
    return &v;
  }
  void push_string(std::uint64_t n) {
    const auto b = take(n);  // never longer than the bytes that hold it
    Value* v = make(Kind::Str);
    v->s.assign(reinterpret_cast<const char*>(b.data()), b.size());
    push(v);
  }
  void push_int(std::int64_t i) {
    Value* v = make(Kind::Int);
    v->i = i;
    push(v);
  }
  void push_bool(bool b) {
    Value* v = make(Kind::Bool);
    v->i = b;
    push(v);
  }
  // `item` goes into the container `c`: its depth checked.
  void insert(Value& c, Value* item) {
    c.depth = std::max(c.depth, item->depth + 1);
    if (c.depth > kMaxPickleNesting)
      fail(text_format(_("containers nested more than %d deep (a state dict needs 2 or 3)"), kMaxPickleNesting));
    c.items.push_back(item);
  }
  void append(Value* list, Value* v) {
    // TRANSLATORS: APPEND is an opcode of Python's pickle format; %s is what the object is ("a dict").
    if (list->kind != Kind::List) fail(text_format(_("APPEND to %s, not a list"), kind_name(list->kind)));
    insert(*list, v);
  }
  void set_item(Value* d, Value* k, Value* v) {
    // TRANSLATORS: SETITEM is an opcode of Python's pickle format; %s is what the object is ("a list").
    if (d->kind != Kind::Dict) fail(text_format(_("SETITEM on %s, not a dict"), kind_name(d->kind)));
    const auto key = hash_key(*k);
    // TRANSLATORS: %s is what the key is ("a tuple").
    if (!key) fail(text_format(_("a dict key that is %s (keys are strings or ints)"), kind_name(k->kind)));
    d->depth = std::max({d->depth, k->depth + 1, v->depth + 1});
    if (d->depth > kMaxPickleNesting)
      fail(text_format(_("containers nested more than %d deep (a state dict needs 2 or 3)"), kMaxPickleNesting));
    DictData& dd = *d->dict;
    const auto [it, fresh] = dd.index.emplace(*key, dd.entries.size());
    if (fresh)
      dd.entries.emplace_back(k, v);
    else
      dd.entries[it->second].second = v;  // Python's d[k] = v
  }

  // -- the memo: a pickler numbers what it memoizes 0, 1, 2, ..., so no index can pass the
  // number of bytes of the pickle (each memoization takes at least one).
  std::size_t memo_size() const { return memo_.size(); }
  void memo_put(std::uint64_t i) {
    if (i > p_.size())
      // TRANSLATORS: the memo is the pickle's table of objects kept for reuse.
      fail(text_format(_("memo index %llu is past what a pickle of %zu bytes can hold"), static_cast<unsigned long long>(i),
                       p_.size()));
    memo_[i] = top();
  }
  void memo_get(std::uint64_t i) {
    const auto it = memo_.find(i);
    if (it == memo_.end())
      fail(text_format(_("memo index %llu is read before it was written (corrupt data.pkl)"),
                       static_cast<unsigned long long>(i)));
    push(it->second);
  }

 private:
  std::span<const std::uint8_t> p_;
  std::size_t pos_ = 0;
  const std::string& what_;
  std::deque<Value> values_;
  std::vector<Value*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Value*> memo_;
};

// -- The allow-list: the globals a pickle may name, and what calling them builds.

// GLOBAL / STACK_GLOBAL: `module`.`name` as a Global, when it is one of the few allowed;
// anything else fails naming it (and nothing is looked up or run).
Value* allowed_global(Unpickler& u, const std::string& module, const std::string& name) {
  const std::string full = module + "." + name;
  Value* v = u.make(Kind::Global);
  v->s = full;
  if (full == "collections.OrderedDict")
    v->callable = Callable::OrderedDict;
  else if (full == "torch._utils._rebuild_tensor_v2")
    v->callable = Callable::RebuildTensorV2;
  else if (full == "torch._utils._rebuild_parameter")
    v->callable = Callable::RebuildParameter;
  else {
    for (const StorageType& t : kStorageTypes)
      if (module == "torch" && name == t.torch_name) {
        v->callable = Callable::Storage;
        v->storage_type = &t;
        return v;
      }
    // TRANSLATORS: %s is a Python name in quotes, e.g. 'os.system'.
    u.fail(text_format(_("the pickle names the global %s, which torch.load(weights_only=True) refuses too: only tensors, "
                         "dicts, lists, tuples, numbers, strings are read (nothing in the file was run)"),
                       quote(full).c_str()));
  }
  return v;
}

// torch/_utils.py: _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
// backward_hooks, metadata=None), its arguments checked, as a Tensor viewing the storage.
Value* rebuild_tensor_v2(Unpickler& u, const std::vector<Value*>& a) {
  if (a.size() != 6 && a.size() != 7)
    u.fail(text_format(_("_rebuild_tensor_v2 with %zu arguments, not 6 or 7"), a.size()));
  // TRANSLATORS: %s is what the object is ("a tuple").
  if (a[0]->kind != Kind::Storage) u.fail(text_format(_("_rebuild_tensor_v2 of %s, not a storage"), kind_name(a[0]->kind)));
  if (a[1]->kind != Kind::Int) u.fail(_("_rebuild_tensor_v2 with a storage offset that is not an int"));
  if (a[2]->kind != Kind::Tuple || a[3]->kind != Kind::Tuple)
    u.fail(_("_rebuild_tensor_v2 with a size or stride that is not a tuple"));
  if (a[2]->items.size() != a[3]->items.size())
    u.fail(text_format(_("_rebuild_tensor_v2 with %zu sizes but %zu strides"), a[2]->items.size(), a[3]->items.size()));
  if (a[2]->items.size() > kMaxTensorDims) u.fail(text_format(_("a tensor of more than %zu dimensions"), kMaxTensorDims));
  if (a[4]->kind != Kind::Bool) u.fail(_("_rebuild_tensor_v2 with requires_grad that is not a bool"));
  if (a[5]->kind != Kind::Dict || !a[5]->dict->entries.empty())
    u.fail(_("_rebuild_tensor_v2 with backward hooks (a checkpoint's tensors have none)"));
  Value* t = u.make(Kind::Tensor);
  t->tensor = std::make_unique<TensorRef>();
  t->tensor->storage = a[0];
  t->tensor->offset = a[1]->i;
  for (std::size_t d = 0; d < a[2]->items.size(); ++d) {
    const Value* sz = a[2]->items[d];
    const Value* st = a[3]->items[d];
    if (sz->kind != Kind::Int || st->kind != Kind::Int) u.fail(_("a tensor's size or stride that is not an int"));
    t->tensor->size.push_back(sz->i);
    t->tensor->stride.push_back(st->i);
  }
  return t;
}

// REDUCE: an allowed global called with a tuple of arguments.
void reduce(Unpickler& u) {
  Value* args = u.pop();
  Value* func = u.pop();
  // TRANSLATORS: REDUCE is an opcode of Python's pickle format; %s is what the object is ("a dict").
  if (func->kind != Kind::Global) u.fail(text_format(_("REDUCE calls %s, not an allowed global"), kind_name(func->kind)));
  if (args->kind != Kind::Tuple)
    // TRANSLATORS: REDUCE is an opcode of Python's pickle format; %s is a Python name in quotes.
    u.fail(text_format(_("REDUCE of %s with arguments that are not a tuple"), quote(func->s).c_str()));
  const auto& a = args->items;
  switch (func->callable) {
    case Callable::OrderedDict: {
      if (!a.empty()) u.fail(_("collections.OrderedDict called with arguments (torch writes OrderedDict())"));
      Value* d = u.make(Kind::Dict);
      d->dict->ordered = true;
      u.push(d);
      return;
    }
    case Callable::RebuildTensorV2:
      u.push(rebuild_tensor_v2(u, a));
      return;
    case Callable::RebuildParameter:
      // torch/_utils.py: _rebuild_parameter(data, requires_grad, backward_hooks)
      if (a.size() != 3 || a[0]->kind != Kind::Tensor || a[1]->kind != Kind::Bool || a[2]->kind != Kind::Dict ||
          !a[2]->dict->entries.empty())
        u.fail(_("_rebuild_parameter with arguments other than (tensor, bool, {})"));
      u.push(a[0]);
      return;
    case Callable::Storage:
      // TRANSLATORS: %s is a Python name in quotes, e.g. 'torch.FloatStorage'.
      u.fail(text_format(_("the pickle calls %s (a storage is only named by a persistent id)"), quote(func->s).c_str()));
  }
}

// torch/serialization.py, _load's persistent_load: ('storage', storage_type, key, location, numel).
void persistent_load(Unpickler& u) {
  const Value* pid = u.pop();
  if (pid->kind != Kind::Tuple || pid->items.size() != 5 || pid->items[0]->kind != Kind::Str ||
      pid->items[0]->s != "storage")
    u.fail(_("a persistent id other than ('storage', type, key, location, numel), which torch.load refuses too"));
  const auto& a = pid->items;
  if (a[1]->kind != Kind::Global || a[1]->callable != Callable::Storage)
    u.fail(_("a storage whose type is not torch.<T>Storage"));
  if (a[2]->kind != Kind::Str || a[3]->kind != Kind::Str || a[4]->kind != Kind::Int)
    u.fail(_("a storage's key, location or size of the wrong type"));
  // TRANSLATORS: %s is a storage's key in quotes, e.g. '0'.
  if (a[4]->i < 0) u.fail(text_format(_("storage %s has a negative size"), quote(a[2]->s).c_str()));
  Value* v = u.make(Kind::Storage);
  v->storage = std::make_unique<StorageRef>(StorageRef{a[1]->storage_type, a[2]->s, a[4]->i});
  u.push(v);
}

// BUILD: torch allows it for Tensor (legacy), Parameter and OrderedDict; state dicts carry
// OrderedDict's `_metadata` (module versions) this way, which is not needed here.
void build(Unpickler& u) {
  const Value* state = u.pop();
  const Value* inst = u.top();
  if (inst->kind == Kind::Dict && inst->dict->ordered && (state->kind == Kind::Dict || state->kind == Kind::None)) return;
  // TRANSLATORS: BUILD is an opcode of Python's pickle format; %s is what the object is ("a list").
  u.fail(text_format(_("BUILD on %s (only an OrderedDict's state is accepted)"), kind_name(inst->kind)));
}

// -- The opcode handlers, each for a group of opcodes; each returns false for an opcode not its own.

// Marks, tuples, lists and dicts: opcodes that build containers on the stack.
bool container_op(Unpickler& u, std::uint8_t op) {
  switch (op) {
    case '}': u.push(u.make(Kind::Dict)); break;   // EMPTY_DICT
    case ']': u.push(u.make(Kind::List)); break;   // EMPTY_LIST
    case ')': u.push(u.make(Kind::Tuple)); break;  // EMPTY_TUPLE
    case '(': u.mark(); break;                     // MARK
    case 't': {                                    // TUPLE
      Value* t = u.make(Kind::Tuple);
      for (Value* v : u.pop_mark()) u.insert(*t, v);
      u.push(t);
      break;
    }
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
      const std::vector<Value*> items = u.pop_n(op - 0x84u);
      Value* t = u.make(Kind::Tuple);
      for (Value* v : items) u.insert(*t, v);
      u.push(t);
      break;
    }
    case 's': {  // SETITEM
      Value* v = u.pop();
      Value* k = u.pop();
      u.set_item(u.top(), k, v);
      break;
    }
    case 'u': {  // SETITEMS
      const std::vector<Value*> items = u.pop_mark();
      // TRANSLATORS: SETITEMS is an opcode of Python's pickle format.
      if (items.size() % 2) u.fail(_("SETITEMS with an odd number of items"));
      Value* d = u.top();
      for (std::size_t k = 0; k < items.size(); k += 2) u.set_item(d, items[k], items[k + 1]);
      break;
    }
    case 'a': {  // APPEND
      Value* v = u.pop();
      u.append(u.top(), v);
      break;
    }
    case 'e': {  // APPENDS
      const std::vector<Value*> items = u.pop_mark();
      Value* l = u.top();
      for (Value* v : items) u.append(l, v);
      break;
    }
    default: return false;
  }
  return true;
}

// LONG1: a little-endian two's-complement integer of up to 8 bytes.
void push_long1(Unpickler& u) {
  const std::size_t n = u.byte();
  // TRANSLATORS: LONG1 is an opcode of Python's pickle format.
  if (n > 8) u.fail(text_format(_("an integer of %zu bytes (LONG1), over 64 bits"), n));
  const auto b = u.take(n);
  std::uint64_t x = 0;
  for (std::size_t k = 0; k < n; ++k) x |= std::uint64_t{b[k]} << (8 * k);
  if (n > 0 && n < 8 && (b[n - 1] & 0x80)) x |= ~std::uint64_t{0} << (8 * n);  // sign-extend
  u.push_int(static_cast<std::int64_t>(x));
}

// Strings, integers, floats, booleans and None: opcodes that push a value.
bool scalar_op(Unpickler& u, std::uint8_t op) {
  switch (op) {
    case 'X': u.push_string(u.le(4)); break;     // BINUNICODE
    case 0x8c: u.push_string(u.byte()); break;   // SHORT_BINUNICODE
    case 0x8d: u.push_string(u.le(8)); break;    // BINUNICODE8
    case 'U': u.push_string(u.byte()); break;    // SHORT_BINSTRING (read as text, as torch's location strings)
    case 'T': u.push_string(u.le(4)); break;     // BINSTRING
    case 'J': u.push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(u.le(4)))); break;  // BININT
    case 'K': u.push_int(u.byte()); break;                                                        // BININT1
    case 'M': u.push_int(static_cast<std::int64_t>(u.le(2))); break;                              // BININT2
    case 0x8a: push_long1(u); break;                                                              // LONG1
    case 'G': {  // BINFLOAT: big-endian double
      std::uint64_t x = 0;
      for (const std::uint8_t b : u.take(8)) x = (x << 8) | b;
      Value* v = u.make(Kind::Float);
      v->f = std::bit_cast<double>(x);
      u.push(v);
      break;
    }
    case 0x88: u.push_bool(true); break;   // NEWTRUE
    case 0x89: u.push_bool(false); break;  // NEWFALSE
    case 'N': u.push(u.make(Kind::None)); break;
    default: return false;
  }
  return true;
}

// The protocol and frame, the memo, globals, persistent ids (storages), REDUCE, BUILD and NEWOBJ.
bool object_op(Unpickler& u, std::uint8_t op) {
  switch (op) {
    case 0x80: {  // PROTO
      const std::uint8_t proto = u.byte();
      if (proto < 2 || proto > 5)
        u.fail(text_format(_("pickle protocol %d is not one torch.save writes (2)"), static_cast<int>(proto)));
      break;
    }
    case 0x95: {  // FRAME: a length, then that many bytes of opcodes (only a hint)
      const std::uint64_t n = u.le(8);
      // TRANSLATORS: FRAME is an opcode of Python's pickle format.
      if (n > u.remaining()) u.fail(_("a FRAME longer than the rest of the pickle"));
      break;
    }
    case 'q': u.memo_put(u.byte()); break;         // BINPUT
    case 'r': u.memo_put(u.le(4)); break;          // LONG_BINPUT
    case 0x94: u.memo_put(u.memo_size()); break;   // MEMOIZE
    case 'h': u.memo_get(u.byte()); break;         // BINGET
    case 'j': u.memo_get(u.le(4)); break;          // LONG_BINGET
    case 'c': {                                    // GLOBAL: "module\nname\n"
      const std::string module = u.line();
      const std::string name = u.line();
      u.push(allowed_global(u, module, name));
      break;
    }
    case 0x93: {  // STACK_GLOBAL
      Value* name = u.pop();
      Value* module = u.pop();
      // TRANSLATORS: STACK_GLOBAL is an opcode of Python's pickle format.
      if (module->kind != Kind::Str || name->kind != Kind::Str) u.fail(_("STACK_GLOBAL with names that are not strings"));
      u.push(allowed_global(u, module->s, name->s));
      break;
    }
    case 'Q': persistent_load(u); break;  // BINPERSID
    case 'R': reduce(u); break;           // REDUCE
    case 0x81: {                          // NEWOBJ: torch allows it for nn.Parameter and allowlisted classes only
      u.pop();
      const Value* cls = u.pop();
      // TRANSLATORS: %s is a Python class's name in quotes or what the object is ("a dict"); NEWOBJ is an
      // opcode of Python's pickle format.
      u.fail(text_format(_("the pickle creates an object of %s (NEWOBJ), which a checkpoint of weights does not need; "
                           "nothing was run"),
                         (cls->kind == Kind::Global ? quote(cls->s) : std::string(kind_name(cls->kind))).c_str()));
    }
    case 'b': build(u); break;  // BUILD
    default: return false;
  }
  return true;
}

// Runs the pickle's opcodes until STOP: the one object it leaves (owned by `u`).
Value* unpickle(Unpickler& u) {
  while (true) {
    const std::uint8_t op = u.opcode();
    if (op == '.') {  // STOP
      // TRANSLATORS: MARK and STOP are opcodes of Python's pickle format.
      if (u.marks_open()) u.fail(_("a MARK left open at STOP"));
      // TRANSLATORS: STOP is an opcode of Python's pickle format.
      if (u.stack_size() != 1) u.fail(text_format(_("STOP with %zu objects on the stack instead of 1"), u.stack_size()));
      return u.pop();
    }
    if (!container_op(u, op) && !scalar_op(u, op) && !object_op(u, op))
      // TRANSLATORS: the first %s is a byte in hex (0x63), %zu its place in the file.
      u.fail(text_format(_("opcode %s at byte %zu of data.pkl is not one torch.save writes (only pickle protocol 2's data "
                           "opcodes are read)"),
                         hex_byte(op).c_str(), u.position() - 1));
  }
}

// ---- The zip archive (core/io/zip_archive.hpp) ----

class Archive {
 public:
  explicit Archive(ZipArchive zip) : zip_(std::move(zip)) {
    if (zip_.entry_count() == 0) fail(_("an empty zip archive, not a PyTorch checkpoint"));
    const std::string name = zip_.entry(0).name;
    const auto slash = name.find('/');
    if (slash == std::string::npos || slash == 0)
      // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes.
      fail(text_format(_("a zip archive whose first entry %s is in no folder: not a PyTorch checkpoint (torch.save writes "
                         "ARCHIVE/data.pkl)"),
                       quote(name).c_str()));
    prefix_ = name.substr(0, slash + 1);  // as torch's reader: the first entry's folder
  }

  [[noreturn]] void fail(const std::string& problem) const { zip_.fail(problem); }
  const std::string& prefix() const { return prefix_; }

  // ARCHIVE/`record`, stored uncompressed and unencrypted; nullopt when absent.
  std::optional<ZipEntry> find(const std::string& record) const {
    const std::string name = prefix_ + record;
    auto e = zip_.find(name);
    if (!e) return std::nullopt;
    // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes.
    if (e->encrypted) fail(text_format(_("the zip entry %s is encrypted"), quote(name).c_str()));
    if (!e->stored)
      fail(text_format(_("the zip entry %s is compressed; torch.save stores its entries uncompressed (re-save it with "
                         "torch.save)"),
                       quote(name).c_str()));
    if (e->size != e->comp_size || e->size > zip_.archive_size())
      // TRANSLATORS: %s is the name of a file inside the zip archive, in quotes; then two sizes in bytes.
      fail(text_format(_("the zip entry %s declares %llu bytes, more than the archive's %llu (a corrupt zip)"),
                       quote(name).c_str(), static_cast<unsigned long long>(e->size),
                       static_cast<unsigned long long>(zip_.archive_size())));
    return e;
  }

  // All bytes of `e` (found by find(), its size checked there; its CRC checked by libzip at the end).
  std::vector<std::uint8_t> read(const ZipEntry& e) const { return zip_.read(e, zip_.archive_size()); }

 private:
  ZipArchive zip_;
  std::string prefix_;
};

// ---- From the saved object to named tensors ----

// The state dict within the saved object (see index_pytorch()), prefixes dropped.
std::vector<std::pair<std::string, const Value*>> state_dict(const Value* root, const Unpickler& u) {
  if (root->kind != Kind::Dict)
    // TRANSLATORS: %s is what the object is ("a list").
    u.fail(text_format(_("the checkpoint holds %s, not a dict of tensors (a state dict)"), kind_name(root->kind)));
  const Value* dict = root;
  // DINO's release files: {"teacher": {...}, "student": {...}, "epoch": ...}; others wrap the
  // state dict in "model" or "state_dict".
  for (const char* wrapper : kPytorchStateDictWrappers) {
    const auto it = root->dict->index.find(std::string("s") + wrapper);
    if (it != root->dict->index.end() && root->dict->entries[it->second].second->kind == Kind::Dict) {
      dict = root->dict->entries[it->second].second;
      break;
    }
  }
  std::vector<std::pair<std::string, const Value*>> tensors;
  for (const auto& [k, v] : dict->dict->entries) {
    if (k->kind != Kind::Str)
      // TRANSLATORS: %s is what the key is ("an int").
      u.fail(text_format(_("the state dict has a key that is %s, not a tensor's name"), kind_name(k->kind)));
    if (v->kind != Kind::Tensor)
      // TRANSLATORS: the first %s is a name in quotes, the second what its value is ("a list").
      u.fail(text_format(_("the state dict's entry %s is %s, not a tensor"), quote(k->s).c_str(), kind_name(v->kind)));
    // Batch norm's step counter (BatchNorm2d.num_batches_tracked, int64, read by training
    // only) is left out rather than refused for its dtype: CNN state dicts hold one per norm.
    if (k->s.ends_with(".num_batches_tracked") && !v->tensor->storage->storage->type->supported) continue;
    tensors.emplace_back(k->s, v);
  }
  if (tensors.empty()) u.fail(_("the checkpoint holds no tensors"));
  auto starts = [](std::string_view prefix) { return [prefix](const auto& t) { return t.first.starts_with(prefix); }; };
  if (std::all_of(tensors.begin(), tensors.end(), starts(kPytorchModulePrefix))) {
    for (auto& t : tensors) t.first.erase(0, kPytorchModulePrefix.size());
  }
  if (std::any_of(tensors.begin(), tensors.end(), starts(kPytorchBackbonePrefix))) {
    std::erase_if(tensors, [&](const auto& t) { return !starts(kPytorchBackbonePrefix)(t); });
    for (auto& t : tensors) t.first.erase(0, kPytorchBackbonePrefix.size());
  }
  return tensors;
}

// a × b, or nullopt past int64.
std::optional<std::int64_t> mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// One tensor of the state dict, checked against its storage, to be read from it.
struct TensorPlan {
  std::string name;
  const TensorRef* t;
  const StorageRef* s;
  std::int64_t numel;
};

// Every tensor and the storages they view, checked before anything is read.
struct ArchivePlan {
  std::vector<TensorPlan> plans;
  std::map<std::string, const StorageRef*> storages;
  std::map<std::string, std::vector<std::size_t>> users;  // the plans of each storage
};

// Refuses a checkpoint written in another byte order than little-endian.
void check_byteorder(const Archive& archive) {
  if (const auto bo = archive.find("byteorder")) {
    if (bo->size > 16)
      // TRANSLATORS: byteorder is the name of a record in the checkpoint (keep it as is).
      archive.fail(text_format(_("a byteorder record of %llu bytes"), static_cast<unsigned long long>(bo->size)));
    const auto bytes = archive.read(*bo);
    const std::string order(bytes.begin(), bytes.end());
    if (order == "big") archive.fail(_("the checkpoint was written big-endian; only little-endian files are read"));
    if (order != "little")
      // TRANSLATORS: %s is the byte order the file names, in quotes.
      archive.fail(text_format(_("the checkpoint was written in byte order %s; only little-endian files are read"),
                               quote(order).c_str()));
  }
}

// Checks every tensor against its storage (dtype, offset, sizes and strides within it, the
// values' total bounded by the file's size) and plans its read.
ArchivePlan plan_tensors(const Archive& archive, const std::vector<std::pair<std::string, const Value*>>& tensors,
                         std::uint64_t archive_size) {
  ArchivePlan plan;
  auto& [plans, storages, users] = plan;
  std::uint64_t total_floats = 0;
  for (const auto& [name, v] : tensors) {
    const TensorRef& t = *v->tensor;
    const StorageRef& s = *t.storage->storage;
    const std::string tn = quote(name);  // "tensor %s" in the messages
    if (!s.type->supported)
      // TRANSLATORS: the first %s is a tensor's name in quotes; then a dtype (I64) and a storage type (LongStorage).
      archive.fail(text_format(_("tensor %s has dtype %s (torch.%s), which is not supported (F32, F16, BF16 are)"), tn.c_str(),
                               s.type->dtype, s.type->torch_name));
    const auto [it, fresh] = storages.emplace(s.key, &s);
    if (!fresh && (it->second->type != s.type || it->second->numel != s.numel))
      // TRANSLATORS: %s is a storage's key in quotes, e.g. '0'.
      archive.fail(text_format(_("storage %s is named with two different types or sizes"), quote(s.key).c_str()));
    // TRANSLATORS: %s is a tensor's name in quotes.
    if (t.offset < 0) archive.fail(text_format(_("tensor %s has a negative storage offset"), tn.c_str()));
    std::int64_t numel = 1, last = t.offset;
    bool empty = false;
    for (std::size_t d = 0; d < t.size.size(); ++d) {
      if (t.size[d] < 0 || t.stride[d] < 0) archive.fail(text_format(_("tensor %s has a negative size or stride"), tn.c_str()));
      if (t.size[d] == 0) empty = true;
    }
    for (std::size_t d = 0; d < t.size.size() && !empty; ++d) {
      const auto n = mul(numel, t.size[d]);
      if (!n) archive.fail(text_format(_("tensor %s has a shape whose element count overflows 64 bits"), tn.c_str()));
      numel = *n;
      const auto reach = mul(t.size[d] - 1, t.stride[d]);
      if (!reach || __builtin_add_overflow(last, *reach, &last))
        archive.fail(text_format(_("tensor %s has strides that reach past 64 bits"), tn.c_str()));
    }
    if (empty) numel = 0;
    if (numel > 0 && last >= s.numel)
      // TRANSLATORS: a tensor's name in quotes, an element's index, a storage's key in quotes, its element count.
      archive.fail(text_format(_("tensor %s reaches element %lld of storage %s, which holds %lld"), tn.c_str(),
                               static_cast<long long>(last), quote(s.key).c_str(), static_cast<long long>(s.numel)));
    // Views of one storage could repeat it without end (stride 0, many tensors): the values
    // are bounded by the file's size.
    if (static_cast<std::uint64_t>(numel) > archive_size ||
        (total_floats += static_cast<std::uint64_t>(numel)) > archive_size)
      archive.fail(text_format(_("the tensors' values would take more than 4 times the file's %llu bytes (views repeating one "
                                 "storage)"),
                               static_cast<unsigned long long>(archive_size)));
    users[s.key].push_back(plans.size());
    plans.push_back({name, &t, &s, numel});
  }
  return plan;
}

// Tensor `p`'s values from its storage's bytes `data` (elements of `element` bytes in `dtype`).
std::vector<float> tensor_values(const TensorPlan& p, const std::vector<std::uint8_t>& data, TensorDType dtype, std::size_t element) {
  std::vector<float> values(static_cast<std::size_t>(p.numel));
  const TensorRef& t = *p.t;
  const std::size_t dims = t.size.size();
  // Contiguous (row-major strides): one conversion; otherwise element by element. (The
  // products of trailing sizes fit: they divide numel, checked above.)
  bool contiguous = true;
  for (std::int64_t d = static_cast<std::int64_t>(dims) - 1, expect = 1; d >= 0 && p.numel > 0; --d) {
    if (t.size[d] != 1 && t.stride[d] != expect) contiguous = false;
    expect *= t.size[d];
  }
  if (p.numel == 0) {
    // nothing to read
  } else if (contiguous) {
    convert_to_float(dtype, data.data() + static_cast<std::size_t>(t.offset) * element, values.size(),
                     values.data());
  } else {
    std::vector<std::int64_t> index(dims, 0);
    for (std::size_t k = 0; k < values.size(); ++k) {
      std::int64_t at = t.offset;
      for (std::size_t d = 0; d < dims; ++d) at += index[d] * t.stride[d];
      convert_to_float(dtype, data.data() + static_cast<std::size_t>(at) * element, 1, &values[k]);
      for (std::size_t d = dims; d-- > 0;) {
        if (++index[d] < t.size[d]) break;
        index[d] = 0;
      }
    }
  }
  return values;
}

// Storage by storage, each read once: its tensors' values converted from it into `file`.
void read_storages(const Archive& archive, const ArchivePlan& plan, SafetensorsFile& file, const std::atomic<bool>* stop) {
  for (const auto& [key, s] : plan.storages) {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error(_("cancelled"));
    const std::size_t element = s->type->element;
    const auto bytes_needed = mul(s->numel, static_cast<std::int64_t>(element));
    const std::string record = "data/" + key;
    const auto entry = archive.find(record);
    if (!entry)
      // TRANSLATORS: a storage's key in quotes, then the name of a file inside the zip archive (archive/data/0).
      archive.fail(text_format(_("storage %s has no zip entry %s"), quote(key).c_str(), (archive.prefix() + record).c_str()));
    if (!bytes_needed || static_cast<std::uint64_t>(*bytes_needed) != entry->size)
      // TRANSLATORS: a storage's key in quotes, its size in bytes, its element count, the bytes of one element.
      archive.fail(text_format(_("storage %s holds %llu bytes but its pickle declares %lld elements of %zu bytes"),
                               quote(key).c_str(), static_cast<unsigned long long>(entry->size),
                               static_cast<long long>(s->numel), element));
    const std::vector<std::uint8_t> data = archive.read(*entry);
    const TensorDType dtype = *s->type->supported;
    for (const std::size_t u : plan.users.at(key)) {
      const TensorPlan& p = plan.plans[u];
      file.tensors.at(p.name).values = tensor_values(p, data, dtype, element);
    }
  }
}

SafetensorsFile read_archive(ZipArchive zip, std::shared_ptr<SafetensorsSource> source, const std::string& what,
                             const std::atomic<bool>* stop = nullptr) {
  const std::uint64_t archive_size = zip.archive_size();
  const Archive archive(std::move(zip));
  check_byteorder(archive);
  const auto pkl = archive.find("data.pkl");
  const std::string pkl_name = archive.prefix() + "data.pkl";
  // TRANSLATORS: %s is the name of a file inside the zip archive (archive/data.pkl).
  if (!pkl) archive.fail(text_format(_("a zip archive without %s: not a PyTorch checkpoint"), pkl_name.c_str()));
  if (pkl->size > kMaxPickleBytes)
    archive.fail(text_format(_("data.pkl is %llu bytes, over the limit of %llu"), static_cast<unsigned long long>(pkl->size),
                             static_cast<unsigned long long>(kMaxPickleBytes)));
  const std::vector<std::uint8_t> pickle = archive.read(*pkl);
  Unpickler unpickler(pickle, what);
  const Value* root = unpickle(unpickler);
  const auto tensors = state_dict(root, unpickler);

  // Every tensor checked against its storage before anything is read.
  const ArchivePlan plan = plan_tensors(archive, tensors, archive_size);
  SafetensorsFile file;
  for (const TensorPlan& p : plan.plans) {
    Tensor& t = file.tensors[p.name];
    t.dtype = *p.s->type->supported;
    t.shape = p.t->size;
  }
  if (file.tensors.size() != plan.plans.size())
    archive.fail(_("two tensors of the state dict have the same name once prefixes are dropped"));
  read_storages(archive, plan, file, stop);
  file.source = std::move(source);
  return file;
}

[[noreturn]] void not_zip(std::span<const std::uint8_t> first, const std::string& what) {
  if (is_legacy_torch_magic(first))
    throw Error(what + ": " +
                _("a PyTorch file in the legacy format (before torch 1.6), which is not read: re-save it with torch >= 1.6 "
                  "(torch.save(torch.load(path), new_path))"));
  throw Error(what + ": " + _("not a PyTorch checkpoint (no zip archive, which torch.save writes since torch 1.6)"));
}

}  // namespace

bool is_legacy_torch_magic(std::span<const std::uint8_t> first) {
  if (first.size() >= 2 && first[0] == 0x80 && first[1] >= 2 && first[1] <= 5)
    return true;  // a pickle: torch's magic number first
  static constexpr char kTar[] = "ustar";
  return first.size() >= 262 && std::memcmp(first.data() + 257, kTar, 5) == 0;
}

SafetensorsFile index_pytorch(std::span<const std::uint8_t> bytes, const std::string& what) {
  if (!is_zip_magic(bytes)) not_zip(bytes, what);
  return read_archive(ZipArchive::open_memory(bytes, what), memory_source(bytes, what), what);
}

namespace {

// The first bytes of the file at `path` (at most 512; fewer for a shorter or unreadable file),
// enough for is_zip_magic() and is_legacy_torch_magic().
std::vector<std::uint8_t> first_bytes(const std::filesystem::path& path) {
  std::vector<std::uint8_t> first(512);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(first.data()), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<std::size_t>(in.gcount()));
  return first;
}

}  // namespace

SafetensorsFile open_pytorch(const std::filesystem::path& path, const std::atomic<bool>* stop) {
  const std::string what = path.string();
  auto source = open_file_source(path);  // the checks of a missing path, a directory, ...
  const std::vector<std::uint8_t> first = first_bytes(path);
  if (!is_zip_magic(first)) not_zip(first, what);
  return read_archive(ZipArchive::open_file(path, what), std::move(source), what, stop);
}

SafetensorsFile open_checkpoint(const std::filesystem::path& file, const std::atomic<bool>* stop) {
  std::error_code ec;
  bool pytorch = false;
  if (std::filesystem::is_regular_file(file, ec)) {
    const std::vector<std::uint8_t> first = first_bytes(file);
    const std::string ext = file.extension().string();
    pytorch = is_zip_magic(first) || is_legacy_torch_magic(first) || ext == ".pth" || ext == ".pt" || ext == ".bin";
  }
  return pytorch ? open_pytorch(file, stop) : open_safetensors(file);
}

}  // namespace attnlab
