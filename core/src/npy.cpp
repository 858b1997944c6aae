// NumPy .npy files: header parsing and writing, byte order and Fortran order conversion.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/mapped_file.h"
#include "core/tensor_file.h"
#include "npy_layout.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kHeaderAlignment = 64;  // numpy aligns the data so it can be mapped
constexpr bool kNativeLittle = std::endian::native == std::endian::little;

struct NpyKind {
  char kind;  // numpy's kind letter
  size_t size;
  DType dtype;
};

constexpr NpyKind kKinds[] = {
    {'f', 2, DType::Float16}, {'f', 4, DType::Float},     {'f', 8, DType::Double},
    {'i', 1, DType::Int8},    {'i', 2, DType::Int16},     {'i', 4, DType::Int32},
    {'i', 8, DType::Int64},   {'u', 1, DType::UInt8},     {'u', 2, DType::UInt16},
    {'u', 4, DType::UInt32},  {'u', 8, DType::UInt64},    {'b', 1, DType::Bool},
    {'c', 8, DType::Complex64}, {'c', 16, DType::Complex128},
};

struct NpyHeader {
  DType dtype = DType::Undefined;
  bool swap = false;  // the data's byte order is not the host's
  bool fortran_order = false;
  Shape shape;
};

// The dtype for a descr such as "<f4", "|b1", ">i8".
Expected<std::pair<DType, bool>> dtype_from_descr(const std::string& descr) {
  auto unsupported = [&] { return make_error("unsupported numpy dtype '" + descr + "'"); };
  if (descr.size() < 3) return unsupported();
  const char order = descr[0];
  const std::string_view digits = std::string_view(descr).substr(2);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.size() > 2)
    return unsupported();
  const size_t size = std::stoul(std::string(digits));
  for (const auto& k : kKinds) {
    if (k.kind != descr[1] || k.size != size) continue;
    bool little;
    if (order == '<') little = true;
    else if (order == '>') little = false;
    else if (order == '=' || (order == '|' && size == 1)) little = kNativeLittle;
    else return unsupported();
    return std::pair{k.dtype, size > 1 && little != kNativeLittle};
  }
  return unsupported();
}

// Parses the Python dict literal numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  Expected<NpyHeader> parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    if (!eat('{')) return malformed("it does not start with '{'");
    for (skip_space(); !eat('}'); skip_space()) {
      REDUCE_ASSIGN(std::string key, string_literal());
      skip_space();
      if (!eat(':')) return malformed("expected ':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (peek() == '[') return make_error("structured numpy dtypes are not supported");
        REDUCE_ASSIGN(std::string descr, string_literal());
        REDUCE_ASSIGN(auto dtype, dtype_from_descr(descr));
        std::tie(h.dtype, h.swap) = dtype;
        have_descr = true;
      } else if (key == "fortran_order") {
        REDUCE_ASSIGN(h.fortran_order, boolean());
        have_order = true;
      } else if (key == "shape") {
        REDUCE_ASSIGN(h.shape, tuple());
        have_shape = true;
      } else {
        return malformed("unexpected key '" + key + "'");
      }
      skip_space();
      if (!eat(',') && peek() != '}') return malformed("expected ',' or '}' after '" + key + "'");
    }
    skip_space();
    if (pos_ != s_.size()) return malformed("unexpected text after '}'");
    if (!have_descr || !have_order || !have_shape)
      return malformed("it needs the keys 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  static Error malformed(const std::string& why) { return make_error("malformed .npy header: " + why); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }

  Expected<std::string> string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return malformed("expected a quoted string");
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return malformed("unterminated string");
    std::string value(s_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) return malformed("escapes in strings are not supported");
    pos_ = end + 1;
    return value;
  }

  Expected<bool> boolean() {
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return malformed("fortran_order is not True or False");
  }

  Expected<int64_t> integer() {
    uint64_t v = 0;
    const size_t start = pos_;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
      const uint64_t digit = static_cast<uint64_t>(s_[pos_] - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10)
        return malformed("a dimension is too large");
      v = v * 10 + digit;
    }
    if (pos_ == start) return malformed("the shape holds something other than non-negative integers");
    eat('L');  // Python 2 long literals in old files
    return static_cast<int64_t>(v);
  }

  // "()", "(5,)", "(3, 4)", "(3, 4,)"
  Expected<Shape> tuple() {
    if (!eat('(')) return malformed("the shape is not a tuple");
    Shape shape;
    for (skip_space(); !eat(')'); skip_space()) {
      REDUCE_ASSIGN(int64_t d, integer());
      shape.push_back(d);
      skip_space();
      if (!eat(',') && peek() != ')') return malformed("expected ',' or ')' in the shape");
    }
    return shape;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint32_t read_le(const std::byte* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// Reverses the bytes of every scalar (each half of a complex number is its own scalar).
void swap_bytes(Tensor& t) {
  const size_t scalar = t.dtype() == DType::Complex64 || t.dtype() == DType::Complex128
                            ? dtype_size(t.dtype()) / 2
                            : dtype_size(t.dtype());
  auto bytes = t.mutable_bytes();
  for (size_t i = 0; i + scalar <= bytes.size(); i += scalar) std::reverse(&bytes[i], &bytes[i] + scalar);
}

// Copies column-major `src` into `dst` in row-major order; both have `shape` as the logical shape.
void fortran_to_c(std::span<const std::byte> src, std::span<std::byte> dst, const Shape& shape, size_t esize) {
  const size_t rank = shape.size();
  std::vector<uint64_t> stride(rank), index(rank, 0);  // column-major strides, in elements
  uint64_t s = 1;
  for (size_t k = 0; k < rank; ++k) stride[k] = s, s *= static_cast<uint64_t>(shape[k]);
  uint64_t from = 0;
  for (size_t out = 0; out < dst.size(); out += esize) {
    std::memcpy(&dst[out], &src[from * esize], esize);
    // Advance the row-major index (last axis fastest), keeping `from` in step.
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<uint64_t>(shape[k])) {
        from += stride[k];
        break;
      }
      from -= stride[k] * (index[k] - 1);
      index[k] = 0;
    }
  }
}

std::string shape_literal(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

namespace {

// The header of a .npy image: its parsed dict and the byte size of the header.
struct NpyPrefix {
  NpyHeader header;
  size_t size = 0;
};

Expected<NpyPrefix> parse_prefix(std::span<const std::byte> bytes) {
  REDUCE_ASSIGN(uint64_t size, detail::npy_header_size(bytes));
  if (size > bytes.size()) return make_error("truncated .npy header");
  const size_t prefix = bytes[6] == std::byte{1} ? 10 : 12;
  const std::string_view text(reinterpret_cast<const char*>(&bytes[prefix]), size - prefix);
  REDUCE_ASSIGN(NpyHeader h, HeaderParser(text).parse());
  return NpyPrefix{std::move(h), static_cast<size_t>(size)};
}

std::string describe(const NpyHeader& h) {
  return ".npy shape " + shape_to_string(h.shape) + " of " + std::string(dtype_name(h.dtype));
}

// The data size the header declares; `note` follows "is too large" when it cannot be represented.
Expected<uint64_t> data_size(const NpyHeader& h, const std::string& note) {
  const size_t esize = dtype_size(h.dtype);
  REDUCE_ASSIGN(uint64_t n, element_count(h.shape));
  if (n > std::numeric_limits<uint64_t>::max() / esize) return make_error(describe(h) + " is too large" + note);
  return n * esize;
}

}  // namespace

namespace detail {

Expected<uint64_t> npy_header_size(std::span<const std::byte> bytes) {
  if (bytes.size() < kMagic.size() + 2 || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    return make_error("not a .npy file (the magic string \\x93NUMPY is missing)");
  const auto major = static_cast<unsigned>(bytes[6]), minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return make_error("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  const size_t len_size = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_size;
  if (bytes.size() < prefix) return make_error("truncated .npy header");
  return prefix + uint64_t{read_le(&bytes[8], len_size)};
}

Expected<uint64_t> npy_data_size(std::span<const std::byte> header) {
  REDUCE_ASSIGN(NpyPrefix p, parse_prefix(header));
  return data_size(p.header, "");
}

}  // namespace detail

Expected<Tensor> parse_npy(std::span<const std::byte> bytes, std::shared_ptr<const void> owner) {
  REDUCE_ASSIGN(NpyPrefix p, parse_prefix(bytes));
  const NpyHeader& h = p.header;
  // Check the shape against the data present before allocating anything.
  const auto data = bytes.subspan(p.size);
  const size_t esize = dtype_size(h.dtype);
  const std::string what = describe(h);
  REDUCE_ASSIGN(const uint64_t size, data_size(h, " (the file has " + std::to_string(data.size()) + " bytes of data)"));
  if (size != data.size())
    return make_error(what + " needs " + std::to_string(size) + " bytes of data, the file has " +
                      std::to_string(data.size()));

  const bool convert = h.swap || (h.fortran_order && h.shape.size() > 1);
  if (owner && !convert) return Tensor::view(h.dtype, h.shape, std::move(owner), data.data(), data.size());
  if (!h.fortran_order || h.shape.size() <= 1) {
    REDUCE_ASSIGN(Tensor t, Tensor::copy_of(h.dtype, h.shape, data));
    if (h.swap) swap_bytes(t);
    return t;
  }
  REDUCE_ASSIGN(Tensor t, Tensor::allocate(h.dtype, h.shape));
  fortran_to_c(data, t.mutable_bytes(), h.shape, esize);
  if (h.swap) swap_bytes(t);
  return t;
}

Expected<Tensor> read_npy(const fs::path& path) {
  REDUCE_ASSIGN(auto file, MappedFile::open(path));
  const auto bytes = file->bytes();
  auto t = parse_npy(bytes, std::move(file));
  if (!t) return t.error().at(path.string());
  return t;
}

Expected<std::string> npy_header(const Tensor& tensor) {
  if (tensor.dtype() == DType::BFloat16)
    return make_error("numpy has no bfloat16 type; convert the tensor to float32 or float16 first");
  const size_t esize = dtype_size(tensor.dtype());
  // numpy has no narrow types either: their one byte per element is written as it is in memory,
  // int4/int2 as int8 values, the others (uint4/uint2 values, float8/float4/E8M0 bits) as uint8.
  // Read back for an input declared narrow, they become that type again (bind_inputs).
  DType as = tensor.dtype();
  if (dtype_is_small_int(as) || dtype_is_small_float(as))
    as = as == DType::Int4 || as == DType::Int2 ? DType::Int8 : DType::UInt8;
  const auto kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                 [&](const NpyKind& k) { return k.dtype == as; });
  if (kind == std::end(kKinds))
    return make_error("cannot write a tensor of type " + std::string(dtype_name(tensor.dtype())) + " to .npy");
  const char order = esize == 1 ? '|' : kNativeLittle ? '<' : '>';
  const std::string dict = "{'descr': '" + std::string(1, order) + kind->kind + std::to_string(esize) +
                           "', 'fortran_order': False, 'shape': " + shape_literal(tensor.shape()) + ", }";
  // Version 1.0 stores the header length in 2 bytes; 2.0 in 4.
  const size_t unpadded = dict.size() + 1;  // + '\n'
  const bool v1 = unpadded + kHeaderAlignment <= 0xffff;
  const size_t prefix = kMagic.size() + 2 + (v1 ? 2 : 4);
  const size_t total = (prefix + unpadded + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  const size_t header_len = total - prefix;
  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(header_len - unpadded, ' ');
  out += '\n';
  return out;
}

Expected<std::string> npy_bytes(const Tensor& tensor) {
  REDUCE_ASSIGN(std::string out, npy_header(tensor));
  const auto data = tensor.bytes();
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

Status write_npy(const fs::path& path, const Tensor& tensor) {
  auto header = npy_header(tensor);
  if (!header) return header.error().at(path.string());
  AtomicFileWriter out(path);
  REDUCE_TRY(out.open());
  REDUCE_TRY(out.write(std::as_bytes(std::span<const char>(header->data(), header->size()))));
  REDUCE_TRY(out.write(tensor.bytes()));
  return out.commit();
}

}  // namespace reduce
