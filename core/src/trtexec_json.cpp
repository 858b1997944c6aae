// trtexec's --exportOutput JSON, read by a small parser of its own: nlohmann-json refuses the bare
// `inf`/`nan` trtexec writes, and trtexec does not escape names.
#include "core/trtexec_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "core/half.h"
#include "core/mapped_file.h"

namespace reduce {

namespace {

// A cursor over the file's text; errors say the line they are on.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  // Consumes `c` (after spaces) when it is next.
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status expect(char c) {
    if (take(c)) return {};
    return fail(std::string("expected '") + c + "'");
  }
  // A string as trtexec writes it: everything up to the next quote, no escapes.
  Expected<std::string_view> string() {
    REDUCE_TRY(expect('"'));
    const size_t close = text_.find('"', pos_);
    if (close == std::string_view::npos) return fail("unterminated string");
    std::string_view s = text_.substr(pos_, close - pos_);
    pos_ = close + 1;
    return s;
  }
  // A bare number or word (`1e-05`, `-inf`, `nan`), up to the next separator.
  Expected<std::string_view> scalar() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ']' && text_[pos_] != ' ' &&
           text_[pos_] != '\n' && text_[pos_] != '\r' && text_[pos_] != '\t')
      ++pos_;
    if (pos_ == start) return fail("expected a number");
    return text_.substr(start, pos_ - start);
  }
  Error fail(const std::string& what) const {
    const size_t line = 1 + static_cast<size_t>(std::count(text_.begin(), text_.begin() + static_cast<long>(pos_), '\n'));
    return make_error(what + " (line " + std::to_string(line) + ")");
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

Expected<Shape> parse_dimensions(std::string_view text) {
  Shape shape;
  if (text.empty()) return shape;  // a scalar
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string_view part = text.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
    int64_t d = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (ec != std::errc() || p != part.data() + part.size() || d < 0)
      return make_error("dimensions \"" + std::string(text) + "\" are not AxBxC");
    shape.push_back(d);
    if (x == std::string_view::npos) return shape;
    start = x + 1;
  }
}

template <typename T>
Status store_integer(std::string_view word, Tensor& t, uint64_t i) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Wide v = 0;
  auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || p != word.data() + word.size() || v < static_cast<Wide>(std::numeric_limits<T>::min()) ||
      v > static_cast<Wide>(std::numeric_limits<T>::max()))
    return make_error("value '" + std::string(word) + "' is not of type " + std::string(dtype_name(t.dtype())));
  t.mutable_data<T>()[i] = static_cast<T>(v);
  return {};
}

// Element i of `t` from the word trtexec printed.
Status store(std::string_view word, Tensor& t, uint64_t i) {
  switch (t.dtype()) {
    case DType::Float:
    case DType::Double:
    case DType::Float16:
    case DType::BFloat16: {
      double v = 0;
      auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
      // from_chars reads `inf` and `nan` with their sign, as glibc prints them.
      if ((ec != std::errc() && ec != std::errc::result_out_of_range) || p != word.data() + word.size())
        return make_error("value '" + std::string(word) + "' is not a number");
      if (t.dtype() == DType::Float) t.mutable_data<float>()[i] = static_cast<float>(v);
      if (t.dtype() == DType::Double) t.mutable_data<double>()[i] = v;
      if (t.dtype() == DType::Float16) t.mutable_data<uint16_t>()[i] = float_to_half(static_cast<float>(v));
      if (t.dtype() == DType::BFloat16) t.mutable_data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(v));
      return {};
    }
    case DType::Bool:
      if (word != "0" && word != "1") return make_error("value '" + std::string(word) + "' is not a bool (0 or 1)");
      t.mutable_data<uint8_t>()[i] = word == "1";
      return {};
    case DType::Int8: return store_integer<int8_t>(word, t, i);
    case DType::UInt8: return store_integer<uint8_t>(word, t, i);
    case DType::Int16: return store_integer<int16_t>(word, t, i);
    case DType::UInt16: return store_integer<uint16_t>(word, t, i);
    case DType::Int32: return store_integer<int32_t>(word, t, i);
    case DType::UInt32: return store_integer<uint32_t>(word, t, i);
    case DType::Int64: return store_integer<int64_t>(word, t, i);
    case DType::UInt64: return store_integer<uint64_t>(word, t, i);
    default: return make_error("element type " + std::string(dtype_name(t.dtype())) + " cannot be read from trtexec's output");
  }
}

// `{ "name" : ..., "dimensions" : ..., "values" : [ ... ] }`, keys in any order, each once.
Expected<NamedTensor> read_output(Cursor& c, const std::map<std::string, DType, std::less<>>& dtypes) {
  REDUCE_TRY(c.expect('{'));
  std::optional<std::string> name;
  std::optional<Shape> shape;
  std::optional<Tensor> tensor;
  do {
    REDUCE_ASSIGN(std::string_view key, c.string());
    REDUCE_TRY(c.expect(':'));
    if (key == "name" && !name) {
      REDUCE_ASSIGN(std::string_view n, c.string());
      name = std::string(n);
    } else if (key == "dimensions" && !shape) {
      REDUCE_ASSIGN(std::string_view d, c.string());
      REDUCE_ASSIGN(shape, parse_dimensions(d));
    } else if (key == "values" && name && shape && !tensor) {
      const auto it = dtypes.find(*name);
      if (it == dtypes.end()) return make_error("output '" + *name + "' is not an output of the model");
      REDUCE_ASSIGN(Tensor t, Tensor::allocate(it->second, *shape));
      REDUCE_TRY(c.expect('['));
      uint64_t count = 0;
      if (!c.take(']')) {
        do {
          REDUCE_ASSIGN(std::string_view word, c.scalar());
          if (count >= t.elements())
            return make_error("output '" + *name + "': more values than its dimensions hold (" + std::to_string(t.elements()) + ")");
          if (Status s = store(word, t, count++); !s.ok()) return make_error("output '" + *name + "': " + s.error().what);
        } while (c.take(','));
        REDUCE_TRY(c.expect(']'));
      }
      if (count != t.elements())
        return make_error("output '" + *name + "': " + std::to_string(count) + " values for dimensions holding " +
                          std::to_string(t.elements()));
      tensor = std::move(t);
    } else {
      return c.fail("unexpected key \"" + std::string(key) + "\" (expected \"name\", \"dimensions\", then \"values\", each once)");
    }
  } while (c.take(','));
  REDUCE_TRY(c.expect('}'));
  if (!tensor) return c.fail("an output without \"name\", \"dimensions\" and \"values\"");
  return NamedTensor{*name, std::move(*tensor)};
}

}  // namespace

Expected<std::vector<NamedTensor>> read_trtexec_outputs(const std::filesystem::path& path,
                                                        const std::map<std::string, DType, std::less<>>& dtypes) {
  REDUCE_ASSIGN(std::string text, read_file(path));
  Cursor c(text);
  std::vector<NamedTensor> out;
  std::set<std::string, std::less<>> seen;
  const auto fail = [&](const Error& e) { return Error{path.string(), "not trtexec --exportOutput JSON: " + e.what}; };
  if (Status s = c.expect('['); !s.ok()) return fail(s.error());
  if (!c.take(']')) {
    do {
      auto output = read_output(c, dtypes);
      if (!output) return fail(output.error());
      if (!seen.insert(output->name).second) return fail(make_error("output '" + output->name + "' appears twice"));
      out.push_back(std::move(*output));
    } while (c.take(','));
    if (Status s = c.expect(']'); !s.ok()) return fail(s.error());
  }
  if (!c.at_end()) return fail(c.fail("text after the closing ']'"));
  return out;
}

Status write_raw_tensor(const std::filesystem::path& path, const Tensor& tensor) {
  return write_file_atomic(path, tensor.bytes());
}

}  // namespace reduce
