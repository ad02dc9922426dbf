#include "model/torch_state_dict.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <variant>

#include "common/file_util.h"

namespace trainyard::model {
namespace {

namespace fs = std::filesystem;

// A Python value as far as a state_dict pickle needs one.
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Global {
  std::string module, name;
  std::string Qualified() const { return module + "." + name; }
};
struct Storage {
  torch::Tensor bytes;  // (nbytes) uint8, the record's data
  torch::ScalarType dtype;
};
struct Dict {
  std::vector<std::pair<ValuePtr, ValuePtr>> items;
};
struct Tuple {
  std::vector<ValuePtr> items;
};
struct List {
  std::vector<ValuePtr> items;
};
struct None {};
struct Mark {};
struct Value {
  std::variant<None, Mark, bool, int64_t, double, std::string, Global, Storage, Dict, Tuple, List,
               torch::Tensor>
      v;
};

template <typename T>
ValuePtr Make(T t) {
  auto p = std::make_shared<Value>();
  p->v = std::move(t);
  return p;
}

// Thrown inside the interpreter only, turned into a Status at its edge.
struct PickleError {
  std::string message;
};
[[noreturn]] void Fail(std::string message) { throw PickleError{std::move(message)}; }

template <typename T>
T& As(const ValuePtr& p, const char* what) {
  if (auto* t = std::get_if<T>(&p->v)) return *t;
  Fail(std::string("malformed state_dict pickle: expected ") + what);
}

torch::ScalarType StorageDtype(const std::string& name) {
  static const std::map<std::string, torch::ScalarType> kTypes = {
      {"FloatStorage", torch::kFloat32}, {"DoubleStorage", torch::kFloat64},
      {"HalfStorage", torch::kFloat16},  {"BFloat16Storage", torch::kBFloat16},
      {"LongStorage", torch::kInt64},    {"IntStorage", torch::kInt32},
      {"ShortStorage", torch::kInt16},   {"CharStorage", torch::kInt8},
      {"ByteStorage", torch::kUInt8},    {"BoolStorage", torch::kBool}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) Fail("unsupported storage type torch." + name);
  return it->second;
}

// Returns the bytes of storage `key` ((numel * element size) uint8) for a persistent id.
using StorageSource =
    std::function<torch::Tensor(const std::string& key, torch::ScalarType dtype, int64_t numel)>;

class StateDictUnpickler {
 public:
  StateDictUnpickler(StorageSource source, const char* data, size_t size, size_t pos = 0)
      : source_(std::move(source)), data_(data), size_(size), pos_(pos) {}

  // Runs one pickle from the current position to its STOP; the next call reads the next pickle
  // (the legacy format is several pickles back to back).
  ValuePtr Run() {
    stack_.clear();
    memo_.clear();
    while (true) {
      const uint8_t op = ReadU8();
      switch (op) {
        case 0x80:
          ReadU8();
          break;  // PROTO
        case 0x95:
          Read(8);
          break;  // FRAME
        case '(':
          Push(Make(Mark{}));
          break;
        case '.':
          return Pop();  // STOP
        case 'N':
          Push(Make(None{}));
          break;
        case 0x88:
          Push(Make(true));
          break;
        case 0x89:
          Push(Make(false));
          break;
        case 'K':
          Push(Make(int64_t{ReadU8()}));
          break;
        case 'M':
          Push(Make(static_cast<int64_t>(ReadLe<uint16_t>())));
          break;
        case 'J':
          Push(Make(static_cast<int64_t>(ReadLe<int32_t>())));
          break;
        case 0x8a:
          Push(Make(ReadLong1()));
          break;
        case 'G':
          Push(Make(ReadBinFloat()));
          break;
        case 'X':
          Push(Make(Read(ReadLe<uint32_t>())));
          break;
        case 0x8c:
          Push(Make(Read(ReadU8())));
          break;
        case 0x8d:
          Push(Make(Read(ReadLe<uint64_t>())));
          break;
        case 'T':
          Push(Make(Read(ReadLe<uint32_t>())));
          break;
        case 'U':
          Push(Make(Read(ReadU8())));
          break;
        case 'B':
          Push(Make(Read(ReadLe<uint32_t>())));
          break;
        case 'C':
          Push(Make(Read(ReadU8())));
          break;
        case 'c': {  // GLOBAL "module\nname\n"
          std::string module = ReadLine(), name = ReadLine();
          Push(Make(Global{module, name}));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          auto name = As<std::string>(Pop(), "a class name");
          auto module = As<std::string>(Pop(), "a module name");
          Push(Make(Global{module, name}));
          break;
        }
        case 'q':
          memo_[ReadU8()] = Top();
          break;
        case 'r':
          memo_[ReadLe<uint32_t>()] = Top();
          break;
        case 0x94:
          memo_[memo_.size()] = Top();
          break;  // MEMOIZE
        case 'h':
          Push(Memo(ReadU8()));
          break;
        case 'j':
          Push(Memo(ReadLe<uint32_t>()));
          break;
        case ')':
          Push(Make(Tuple{}));
          break;
        case 't':
          Push(Make(Tuple{PopToMark()}));
          break;
        case 0x85: {
          auto a = Pop();
          Push(Make(Tuple{{a}}));
          break;
        }
        case 0x86: {
          auto b = Pop(), a = Pop();
          Push(Make(Tuple{{a, b}}));
          break;
        }
        case 0x87: {
          auto c = Pop(), b = Pop(), a = Pop();
          Push(Make(Tuple{{a, b, c}}));
          break;
        }
        case ']':
          Push(Make(List{}));
          break;
        case 'a': {
          auto v = Pop();
          As<List>(Top(), "a list").items.push_back(v);
          break;
        }
        case 'e': {
          auto items = PopToMark();
          auto& list = As<List>(Top(), "a list").items;
          list.insert(list.end(), items.begin(), items.end());
          break;
        }
        case '}':
          Push(Make(Dict{}));
          break;
        case 's': {
          auto v = Pop(), k = Pop();
          As<Dict>(Top(), "a dict").items.push_back({k, v});
          break;
        }
        case 'u': {
          auto items = PopToMark();
          if (items.size() % 2) Fail("malformed state_dict pickle: odd SETITEMS");
          auto& dict = As<Dict>(Top(), "a dict").items;
          for (size_t i = 0; i < items.size(); i += 2) dict.push_back({items[i], items[i + 1]});
          break;
        }
        case '0':
          Pop();
          break;  // POP
        case '1':
          PopToMark();
          break;  // POP_MARK
        case '2':
          Push(Top());
          break;  // DUP
        case 'b':
          Pop();
          break;      // BUILD: object state (OrderedDict._metadata) not needed
        case 'R':     // REDUCE
        case 0x81: {  // NEWOBJ
          auto args = As<Tuple>(Pop(), "an argument tuple").items;
          auto callable = As<Global>(Pop(), "a class");
          Push(Call(callable, args));
          break;
        }
        case 'Q':
          Push(PersistentLoad(As<Tuple>(Pop(), "a persistent id").items));
          break;
        default: {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "0x%02x", op);
          Fail(std::string("unsupported pickle opcode ") + hex + " at byte " +
               std::to_string(pos_ - 1));
        }
      }
    }
  }

 private:
  void Push(ValuePtr v) { stack_.push_back(std::move(v)); }
  ValuePtr Pop() {
    if (stack_.empty()) Fail("malformed state_dict pickle: stack underflow");
    auto v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  const ValuePtr& Top() {
    if (stack_.empty()) Fail("malformed state_dict pickle: stack underflow");
    return stack_.back();
  }
  std::vector<ValuePtr> PopToMark() {
    size_t i = stack_.size();
    while (i > 0 && !std::holds_alternative<Mark>(stack_[i - 1]->v)) --i;
    if (i == 0) Fail("malformed state_dict pickle: missing MARK");
    std::vector<ValuePtr> items(stack_.begin() + i, stack_.end());
    stack_.resize(i - 1);
    return items;
  }
  ValuePtr Memo(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) Fail("malformed state_dict pickle: unknown memo " + std::to_string(key));
    return it->second;
  }

  std::string Read(uint64_t n) {
    if (n > size_ - pos_) Fail("state_dict pickle is truncated");
    std::string s(data_ + pos_, n);
    pos_ += n;
    return s;
  }
  uint8_t ReadU8() { return static_cast<uint8_t>(Read(1)[0]); }
  template <typename T>
  T ReadLe() {
    auto s = Read(sizeof(T));
    T v;
    std::memcpy(&v, s.data(), sizeof(T));
    return v;
  }
  int64_t ReadLong1() {
    const uint8_t n = ReadU8();
    if (n > 8) Fail("pickle integer wider than 64 bits");
    auto s = Read(n);
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[i]);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(s[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
    return static_cast<int64_t>(v);
  }
  double ReadBinFloat() {  // big-endian IEEE double
    auto s = Read(8);
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(s[i]);
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  std::string ReadLine() {
    const void* nl = std::memchr(data_ + pos_, '\n', size_ - pos_);
    if (!nl) Fail("state_dict pickle is truncated");
    size_t end = static_cast<const char*>(nl) - data_;
    std::string s(data_ + pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

 public:
  size_t position() const { return pos_; }

 private:
  // ('storage', torch.FloatStorage, key, location, numel[, view_metadata]).
  ValuePtr PersistentLoad(const std::vector<ValuePtr>& pid) {
    if (pid.size() < 5 || As<std::string>(pid[0], "'storage'") != "storage") {
      Fail("malformed state_dict pickle: unexpected persistent id");
    }
    if (pid.size() > 5 && !std::holds_alternative<None>(pid[5]->v)) {
      Fail("storage views (legacy view_metadata) are not supported");
    }
    const auto dtype = StorageDtype(As<Global>(pid[1], "a storage type").name);
    const auto key = As<std::string>(pid[2], "a storage key");
    const auto numel = As<int64_t>(pid[4], "a storage size");
    if (numel < 0) Fail("negative storage size");
    auto it = storages_.find(key);
    if (it == storages_.end())
      it = storages_.emplace(key, Storage{source_(key, dtype, numel), dtype}).first;
    if (it->second.dtype != dtype) Fail("storage " + key + " used with two dtypes");
    return Make(it->second);
  }

  ValuePtr Call(const Global& g, const std::vector<ValuePtr>& args) {
    const std::string q = g.Qualified();
    if (q == "collections.OrderedDict" || q == "builtins.dict") return Make(Dict{});
    if (q == "torch._utils._rebuild_tensor_v2" || q == "torch._utils._rebuild_tensor") {
      if (args.size() < 4) Fail("malformed " + q + " call");
      return Make(RebuildTensor(As<Storage>(args[0], "a storage"),
                                As<int64_t>(args[1], "a storage offset"), IntTuple(args[2]),
                                IntTuple(args[3])));
    }
    if (q == "torch.jit._pickle.restore_type_tag") {  // LibTorch's pickle_save: (value, type)
      if (args.empty()) Fail("malformed " + q + " call");
      return args[0];
    }
    if (q == "torch._utils._rebuild_parameter" ||
        q == "torch._utils._rebuild_parameter_with_state") {
      if (args.empty()) Fail("malformed " + q + " call");
      return Make(As<torch::Tensor>(args[0], "a tensor"));
    }
    Fail("unsupported object " + q +
         " in the checkpoint: only a state_dict of plain tensors can be loaded");
  }

  static std::vector<int64_t> IntTuple(const ValuePtr& v) {
    std::vector<int64_t> out;
    for (const auto& item : As<Tuple>(v, "a shape tuple").items) {
      out.push_back(As<int64_t>(item, "an integer"));
    }
    return out;
  }

  static torch::Tensor RebuildTensor(const Storage& s, int64_t offset,
                                     const std::vector<int64_t>& sizes,
                                     const std::vector<int64_t>& strides) {
    if (sizes.size() != strides.size()) Fail("tensor sizes and strides differ in rank");
    const int64_t elem = c10::elementSize(s.dtype);
    const int64_t numel = s.bytes.numel() / elem;
    // The highest element index the view touches must lie inside the storage.
    int64_t last = offset, count = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0 || strides[i] < 0) Fail("negative tensor size or stride");
      count *= sizes[i];
      if (sizes[i] > 0) last += (sizes[i] - 1) * strides[i];
    }
    if (offset < 0 || (count > 0 && last >= numel)) {
      Fail("tensor reaches outside its storage (" + std::to_string(numel) + " elements)");
    }
    auto typed = s.bytes.narrow(0, 0, numel * elem).view(s.dtype);  // (numel)
    // A view for now: legacy files fill their storages only after the pickle.
    return typed.as_strided(sizes, strides, offset);
  }

  StorageSource source_;
  const char* data_;
  size_t size_;
  size_t pos_;
  std::vector<ValuePtr> stack_;
  std::map<uint64_t, ValuePtr> memo_;
  std::map<std::string, Storage> storages_;
};

// The state_dict (a dict of name -> tensor views) as contiguous tensors of their own.
StatusOr<std::map<std::string, torch::Tensor>> ToStateDict(const ValuePtr& root,
                                                           const fs::path& path) {
  auto bad = [&](const std::string& m) { return InvalidArgumentError(path.string() + ": " + m); };
  auto* dict = std::get_if<Dict>(&root->v);
  if (!dict) return bad("the pickle is not a state_dict (expected a dict of tensors)");
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : dict->items) {
    auto* name = std::get_if<std::string>(&k->v);
    if (!name) return bad("state_dict has a non-string key");
    auto* tensor = std::get_if<torch::Tensor>(&v->v);
    if (!tensor) {
      return bad("state_dict entry \"" + *name +
                 "\" is not a tensor (a wrapped checkpoint? save model.state_dict() itself)");
    }
    if (!out.emplace(*name, tensor->clone(at::MemoryFormat::Contiguous)).second) {
      return bad("duplicate entry \"" + *name + "\"");
    }
  }
  return out;
}

StatusOr<std::map<std::string, torch::Tensor>> ReadZip(const fs::path& path) {
  caffe2::serialize::PyTorchStreamReader zip(path.string());
  if (zip.hasRecord("byteorder")) {
    auto [ptr, n] = zip.getRecord("byteorder");
    if (std::string(static_cast<const char*>(ptr.get()), n) != "little") {
      Fail("big-endian checkpoints are not supported");
    }
  }
  if (!zip.hasRecord("data.pkl")) Fail("archive has no data.pkl");
  auto [pkl, pkl_size] = zip.getRecord("data.pkl");
  auto source = [&zip](const std::string& key, torch::ScalarType dtype, int64_t numel) {
    const std::string record = "data/" + key;
    if (!zip.hasRecord(record)) Fail("archive has no record " + record);
    auto [ptr, nbytes] = zip.getRecord(record);
    if (static_cast<int64_t>(nbytes) < numel * static_cast<int64_t>(c10::elementSize(dtype))) {
      Fail("record " + record + " is shorter than its storage");
    }
    auto owner = std::make_shared<at::DataPtr>(std::move(ptr));
    return torch::from_blob(
        owner->get(), {static_cast<int64_t>(nbytes)}, [owner](void*) {}, torch::kUInt8);
  };
  StateDictUnpickler unpickler(source, static_cast<const char*>(pkl.get()), pkl_size);
  return ToStateDict(unpickler.Run(), path);
}

// Pre-1.6 torch.save: pickles of the magic number, protocol version and sys_info, then the
// object with persistent storage ids, then the sorted storage keys, then for each key an int64
// element count followed by the raw little-endian data.
StatusOr<std::map<std::string, torch::Tensor>> ReadLegacy(const fs::path& path) {
  TY_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  // PROTO 2, LONG1 of 10 bytes = 0x1950a86a20f9469cfc6c, STOP.
  static const char kMagic[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.";
  if (bytes.size() < 15 || std::memcmp(bytes.data(), kMagic, 15) != 0) {
    Fail("not a torch.save file (neither a zip archive nor the legacy magic number)");
  }
  // key -> (uint8 bytes, element size); the bytes are filled after the pickle.
  std::map<std::string, std::pair<torch::Tensor, int64_t>> storages;
  auto source = [&](const std::string& key, torch::ScalarType dtype, int64_t numel) {
    const int64_t elem = static_cast<int64_t>(c10::elementSize(dtype));
    if (numel > static_cast<int64_t>(bytes.size()) / elem) {
      Fail("storage " + key + " is larger than the file");
    }
    auto t = torch::empty({numel * elem}, torch::kUInt8);
    storages[key] = {t, elem};
    return t;
  };
  StateDictUnpickler unpickler(source, bytes.data(), bytes.size(), 15);
  auto protocol = unpickler.Run();
  if (!std::holds_alternative<int64_t>(protocol->v) || std::get<int64_t>(protocol->v) != 1001) {
    Fail("unsupported legacy protocol version");
  }
  auto sys_info = unpickler.Run();
  if (auto* info = std::get_if<Dict>(&sys_info->v)) {
    for (const auto& [k, v] : info->items) {
      auto* name = std::get_if<std::string>(&k->v);
      auto* little = std::get_if<bool>(&v->v);
      if (name && *name == "little_endian" && little && !*little) {
        Fail("big-endian checkpoints are not supported");
      }
    }
  }
  ValuePtr root = unpickler.Run();
  auto keys = As<List>(unpickler.Run(), "the list of storage keys").items;
  size_t pos = unpickler.position();
  for (const auto& k : keys) {
    const auto& key = As<std::string>(k, "a storage key");
    auto it = storages.find(key);
    if (it == storages.end()) Fail("storage " + key + " listed but never used");
    if (bytes.size() - pos < 8) Fail("file is truncated in storage " + key);
    int64_t numel;
    std::memcpy(&numel, bytes.data() + pos, 8);
    pos += 8;
    auto& [storage, elem] = it->second;
    const uint64_t nbytes = static_cast<uint64_t>(storage.numel());
    if (numel < 0 || static_cast<uint64_t>(numel) * elem != nbytes) {
      Fail("storage " + key + " has " + std::to_string(numel) + " elements on disk, " +
           std::to_string(nbytes / elem) + " in the pickle");
    }
    if (bytes.size() - pos < nbytes) Fail("file is truncated in storage " + key);
    std::memcpy(storage.data_ptr(), bytes.data() + pos, nbytes);
    pos += nbytes;
  }
  return ToStateDict(root, path);
}

}  // namespace

StatusOr<std::map<std::string, torch::Tensor>> ReadTorchStateDict(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFoundError("file not found: " + path.string());
  auto bad = [&](const std::string& m) { return InvalidArgumentError(path.string() + ": " + m); };
  char magic[4] = {};
  {
    std::ifstream in(path, std::ios::binary);
    in.read(magic, 4);
    if (in.gcount() < 4) return bad("not a torch.save file (too short)");
  }
  try {
    if (std::memcmp(magic, "PK\x03\x04", 4) == 0) return ReadZip(path);
    if (static_cast<uint8_t>(magic[0]) == 0x80) return ReadLegacy(path);
    return bad("not a torch.save file (neither a zip archive nor the legacy format)");
  } catch (const PickleError& e) {
    return bad(e.message);
  } catch (const c10::Error& e) {
    return bad(std::string("corrupt torch.save archive: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return bad(std::string("cannot read torch.save file: ") + e.what());
  }
}

}  // namespace trainyard::model
