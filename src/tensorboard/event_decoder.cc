#include "tensorboard/event_decoder.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "tensorboard/proto_wire.h"

namespace trainyard::tensorboard {
namespace {

// tensorflow.DataType values of the numeric types a scalar can have.
enum DataType : int {
  kDtFloat = 1,
  kDtDouble = 2,
  kDtInt32 = 3,
  kDtUint8 = 4,
  kDtInt16 = 5,
  kDtInt8 = 6,
  kDtInt64 = 9,
  kDtBool = 10,
  kDtBfloat16 = 14,
  kDtUint16 = 17,
  kDtHalf = 19,
  kDtUint32 = 22,
  kDtUint64 = 23,
};
constexpr uint64_t kDataClassScalar = 1;

double HalfToDouble(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa ? NAN : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -v : v;
}

double Bfloat16ToDouble(uint16_t b) { return Fixed32ToFloat(static_cast<uint32_t>(b) << 16); }

// Appends the value(s) of a repeated field occurrence: `as_float`/`as_double` for fixed-width
// fields, otherwise varints interpreted by `from_varint`.
template <typename FromVarint>
Status AppendRepeated(ProtoReader& r, WireType type, WireType element_type, FromVarint from_varint,
                      std::vector<double>* out) {
  auto read_one = [&](ProtoReader& src) -> Status {
    if (element_type == WireType::kFixed32) {
      TY_ASSIGN_OR_RETURN(uint32_t bits, src.ReadFixed32());
      out->push_back(Fixed32ToFloat(bits));
    } else if (element_type == WireType::kFixed64) {
      TY_ASSIGN_OR_RETURN(uint64_t bits, src.ReadFixed64());
      out->push_back(Fixed64ToDouble(bits));
    } else {
      TY_ASSIGN_OR_RETURN(uint64_t v, src.ReadVarint());
      out->push_back(from_varint(v));
    }
    return Status::Ok();
  };
  if (type == WireType::kLengthDelimited) {
    TY_ASSIGN_OR_RETURN(std::string_view packed, r.ReadBytes());
    ProtoReader p(packed);
    while (!p.done()) TY_RETURN_IF_ERROR(read_one(p));
    return Status::Ok();
  }
  if (type != element_type) return InvalidArgumentError("protobuf: repeated field has wrong type");
  return read_one(r);
}

struct Tensor {
  int dtype = 0;
  int64_t elements = 1;  // product of the shape's dims (1 for a rank-0 shape)
  std::string_view content;
  std::vector<double> values;  // from the typed *_val fields
};

StatusOr<int64_t> ShapeElements(std::string_view shape) {
  int64_t elements = 1;
  ProtoReader r(shape);
  while (!r.done()) {
    TY_ASSIGN_OR_RETURN(FieldTag tag, r.ReadTag());
    if (tag.number == 1 && tag.type == WireType::kLengthDelimited) {  // dim
      TY_ASSIGN_OR_RETURN(std::string_view dim, r.ReadBytes());
      ProtoReader d(dim);
      int64_t size = 0;
      while (!d.done()) {
        TY_ASSIGN_OR_RETURN(FieldTag dt, d.ReadTag());
        if (dt.number == 1 && dt.type == WireType::kVarint) {
          TY_ASSIGN_OR_RETURN(uint64_t s, d.ReadVarint());
          size = static_cast<int64_t>(s);
        } else {
          TY_RETURN_IF_ERROR(d.Skip(dt.type));
        }
      }
      elements *= size;
    } else {
      TY_RETURN_IF_ERROR(r.Skip(tag.type));
    }
  }
  return elements;
}

StatusOr<Tensor> DecodeTensor(std::string_view bytes) {
  Tensor t;
  ProtoReader r(bytes);
  auto signed32 = [](uint64_t v) { return static_cast<double>(static_cast<int32_t>(v)); };
  auto signed64 = [](uint64_t v) { return static_cast<double>(static_cast<int64_t>(v)); };
  auto unsigned64 = [](uint64_t v) { return static_cast<double>(v); };
  while (!r.done()) {
    TY_ASSIGN_OR_RETURN(FieldTag tag, r.ReadTag());
    switch (tag.number) {
      case 1: {
        TY_ASSIGN_OR_RETURN(uint64_t dtype, r.ReadVarint());
        t.dtype = static_cast<int>(dtype);
        break;
      }
      case 2: {
        TY_ASSIGN_OR_RETURN(std::string_view shape, r.ReadBytes());
        TY_ASSIGN_OR_RETURN(t.elements, ShapeElements(shape));
        break;
      }
      case 4: {
        TY_ASSIGN_OR_RETURN(t.content, r.ReadBytes());
        break;
      }
      case 5:
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kFixed32, unsigned64, &t.values));
        break;
      case 6:
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kFixed64, unsigned64, &t.values));
        break;
      case 7:  // int_val: also int8/16, uint8/16 and bool
      case 11:
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kVarint, signed32, &t.values));
        break;
      case 10:
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kVarint, signed64, &t.values));
        break;
      case 13: {  // half_val: float16 / bfloat16 bit patterns
        std::vector<double> bits;
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kVarint, unsigned64, &bits));
        for (double b : bits) {
          // A 16-bit pattern in a varint; anything wider is malformed (and casting it is UB).
          if (!(b >= 0 && b <= 65535)) {
            return InvalidArgumentError("TensorProto.half_val: " + std::to_string(b) +
                                        " is not a 16-bit pattern");
          }
          const auto h = static_cast<uint16_t>(b);
          t.values.push_back(t.dtype == kDtBfloat16 ? Bfloat16ToDouble(h) : HalfToDouble(h));
        }
        break;
      }
      case 16:
      case 17:
        TY_RETURN_IF_ERROR(AppendRepeated(r, tag.type, WireType::kVarint, unsigned64, &t.values));
        break;
      default:
        TY_RETURN_IF_ERROR(r.Skip(tag.type));
    }
  }
  return t;
}

template <typename T>
T LoadLe(std::string_view b) {
  T v;
  std::memcpy(&v, b.data(), sizeof(T));  // event files are little-endian, as are our hosts
  return v;
}

// The value of a one-element numeric tensor, or nullopt for anything else.
std::optional<double> ScalarOf(const Tensor& t) {
  if (t.elements != 1) return std::nullopt;
  if (!t.content.empty()) {
    const std::string_view c = t.content;
    switch (t.dtype) {
      case kDtFloat:
        if (c.size() == 4) return LoadLe<float>(c);
        break;
      case kDtDouble:
        if (c.size() == 8) return LoadLe<double>(c);
        break;
      case kDtInt32:
        if (c.size() == 4) return LoadLe<int32_t>(c);
        break;
      case kDtUint32:
        if (c.size() == 4) return LoadLe<uint32_t>(c);
        break;
      case kDtInt64:
        if (c.size() == 8) return static_cast<double>(LoadLe<int64_t>(c));
        break;
      case kDtUint64:
        if (c.size() == 8) return static_cast<double>(LoadLe<uint64_t>(c));
        break;
      case kDtInt16:
        if (c.size() == 2) return LoadLe<int16_t>(c);
        break;
      case kDtUint16:
        if (c.size() == 2) return LoadLe<uint16_t>(c);
        break;
      case kDtInt8:
        if (c.size() == 1) return static_cast<int8_t>(c[0]);
        break;
      case kDtUint8:
      case kDtBool:
        if (c.size() == 1) return static_cast<uint8_t>(c[0]);
        break;
      case kDtHalf:
        if (c.size() == 2) return HalfToDouble(LoadLe<uint16_t>(c));
        break;
      case kDtBfloat16:
        if (c.size() == 2) return Bfloat16ToDouble(LoadLe<uint16_t>(c));
        break;
    }
    return std::nullopt;
  }
  if (t.values.size() == 1) return t.values[0];
  return std::nullopt;
}

struct Metadata {
  std::string_view plugin_name;
  uint64_t data_class = 0;
};

StatusOr<Metadata> DecodeMetadata(std::string_view bytes) {
  Metadata m;
  ProtoReader r(bytes);
  while (!r.done()) {
    TY_ASSIGN_OR_RETURN(FieldTag tag, r.ReadTag());
    if (tag.number == 1 && tag.type == WireType::kLengthDelimited) {
      TY_ASSIGN_OR_RETURN(std::string_view plugin, r.ReadBytes());
      ProtoReader p(plugin);
      while (!p.done()) {
        TY_ASSIGN_OR_RETURN(FieldTag pt, p.ReadTag());
        if (pt.number == 1 && pt.type == WireType::kLengthDelimited) {
          TY_ASSIGN_OR_RETURN(m.plugin_name, p.ReadBytes());
        } else {
          TY_RETURN_IF_ERROR(p.Skip(pt.type));
        }
      }
    } else if (tag.number == 4 && tag.type == WireType::kVarint) {
      TY_ASSIGN_OR_RETURN(m.data_class, r.ReadVarint());
    } else {
      TY_RETURN_IF_ERROR(r.Skip(tag.type));
    }
  }
  return m;
}

// One Summary.Value; nullopt when it is not a scalar.
StatusOr<std::optional<std::pair<std::string, double>>> DecodeValue(std::string_view bytes) {
  ProtoReader r(bytes);
  std::string tag_name;
  std::optional<double> simple;
  std::optional<Tensor> tensor;
  Metadata metadata;
  while (!r.done()) {
    TY_ASSIGN_OR_RETURN(FieldTag tag, r.ReadTag());
    if (tag.number == 1 && tag.type == WireType::kLengthDelimited) {
      TY_ASSIGN_OR_RETURN(std::string_view name, r.ReadBytes());
      tag_name = std::string(name);
    } else if (tag.number == 2 && tag.type == WireType::kFixed32) {
      TY_ASSIGN_OR_RETURN(uint32_t bits, r.ReadFixed32());
      simple = Fixed32ToFloat(bits);
    } else if (tag.number == 8 && tag.type == WireType::kLengthDelimited) {
      TY_ASSIGN_OR_RETURN(std::string_view t, r.ReadBytes());
      TY_ASSIGN_OR_RETURN(tensor, DecodeTensor(t));
    } else if (tag.number == 9 && tag.type == WireType::kLengthDelimited) {
      TY_ASSIGN_OR_RETURN(std::string_view m, r.ReadBytes());
      TY_ASSIGN_OR_RETURN(metadata, DecodeMetadata(m));
    } else {
      TY_RETURN_IF_ERROR(r.Skip(tag.type));
    }
  }
  std::optional<std::pair<std::string, double>> out;
  if (simple) {
    out.emplace(std::move(tag_name), *simple);
  } else if (tensor && (metadata.plugin_name == "scalars" ||
                        metadata.data_class == kDataClassScalar || metadata.plugin_name.empty())) {
    if (auto v = ScalarOf(*tensor)) out.emplace(std::move(tag_name), *v);
  }
  return out;
}

}  // namespace

Status DecodeEventScalars(std::string_view payload, std::vector<ScalarEvent>* out) {
  ProtoReader r(payload);
  double wall_time = 0;
  int64_t step = 0;
  std::vector<std::pair<std::string, double>> values;
  while (!r.done()) {
    TY_ASSIGN_OR_RETURN(FieldTag tag, r.ReadTag());
    if (tag.number == 1 && tag.type == WireType::kFixed64) {
      TY_ASSIGN_OR_RETURN(uint64_t bits, r.ReadFixed64());
      wall_time = Fixed64ToDouble(bits);
    } else if (tag.number == 2 && tag.type == WireType::kVarint) {
      TY_ASSIGN_OR_RETURN(uint64_t s, r.ReadVarint());
      step = static_cast<int64_t>(s);
    } else if (tag.number == 5 && tag.type == WireType::kLengthDelimited) {
      TY_ASSIGN_OR_RETURN(std::string_view summary, r.ReadBytes());
      ProtoReader s(summary);
      while (!s.done()) {
        TY_ASSIGN_OR_RETURN(FieldTag st, s.ReadTag());
        if (st.number == 1 && st.type == WireType::kLengthDelimited) {
          TY_ASSIGN_OR_RETURN(std::string_view value, s.ReadBytes());
          TY_ASSIGN_OR_RETURN(auto scalar, DecodeValue(value));
          if (scalar) values.push_back(std::move(*scalar));
        } else {
          TY_RETURN_IF_ERROR(s.Skip(st.type));
        }
      }
    } else {
      TY_RETURN_IF_ERROR(r.Skip(tag.type));
    }
  }
  for (auto& [tag, value] : values) out->push_back({std::move(tag), step, wall_time, value});
  return Status::Ok();
}

}  // namespace trainyard::tensorboard
