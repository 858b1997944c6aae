// TfIdfVectorizer: counts the pool's n-grams (with skips) in each row of integer tokens.
#include <algorithm>
#include <map>

#include "reference/kernel.h"

namespace reduce::ref {

namespace {

enum class Mode { TF, IDF, TFIDF };

struct Gram {
  size_t output;  // position in Y
  float weight;
};

class TfIdfVectorizerKernel : public Kernel {
 public:
  TfIdfVectorizerKernel(Mode mode, int64_t min_n, int64_t max_n, int64_t max_skip, std::map<std::vector<int64_t>, Gram> grams,
                        size_t width)
      : mode_(mode), min_n_(min_n), max_n_(max_n), max_skip_(max_skip), grams_(std::move(grams)), width_(width) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DType::Int32 && x.dtype() != DType::Int64)
      return make_error("input must be int32 or int64 (string tokens are not supported), got " +
                        std::string(dtype_name(x.dtype())));
    if (x.rank() != 1 && x.rank() != 2) return make_error("input must have rank 1 or 2, got " + shape_to_string(x.shape()));
    const size_t rows = x.rank() == 2 ? static_cast<size_t>(x.shape()[0]) : 1;
    const size_t cols = static_cast<size_t>(x.shape().back());
    Shape out_shape = x.rank() == 2 ? Shape{x.shape()[0], static_cast<int64_t>(width_)} : Shape{static_cast<int64_t>(width_)};
    REDUCE_ASSIGN(Tensor* y, ctx.allocate_output(0, DType::Float, out_shape));
    auto out = y->mutable_data<float>();
    auto token = [&](size_t i) { return x.dtype() == DType::Int32 ? int64_t{x.data<int32_t>()[i]} : x.data<int64_t>()[i]; };
    std::vector<double> counts(width_);
    std::vector<int64_t> gram;
    for (size_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0.0);
      for (size_t start = 0; start < cols; ++start)
        for (int64_t skip = 0; skip <= max_skip_; ++skip)
          for (int64_t n = min_n_; n <= max_n_; ++n) {
            if (n == 1 && skip > 0) continue;  // a unigram does not depend on the skip: count it once
            const size_t step = static_cast<size_t>(skip) + 1, last = start + static_cast<size_t>(n - 1) * step;
            if (last >= cols) break;
            gram.clear();
            for (size_t p = start; p <= last; p += step) gram.push_back(token(r * cols + p));
            if (auto it = grams_.find(gram); it != grams_.end()) counts[it->second.output] += 1;
          }
      for (const auto& [g, info] : grams_) {
        const double c = counts[info.output];
        double v = c;
        if (mode_ == Mode::IDF) v = c > 0 ? info.weight : 0;
        if (mode_ == Mode::TFIDF) v = c * info.weight;
        out[r * width_ + info.output] = static_cast<float>(v);
      }
    }
    return {};
  }

 private:
  Mode mode_;
  int64_t min_n_, max_n_, max_skip_;
  std::map<std::vector<int64_t>, Gram> grams_;
  size_t width_;
};

}  // namespace

Expected<KernelPtr> make_tfidf_vectorizer(const Node& node, int64_t) {
  const std::string mode_name = attr_string(node, "mode", "");
  Mode mode;
  if (mode_name == "TF") mode = Mode::TF;
  else if (mode_name == "IDF") mode = Mode::IDF;
  else if (mode_name == "TFIDF") mode = Mode::TFIDF;
  else return make_error("mode must be TF, IDF or TFIDF, got '" + mode_name + "'");
  const int64_t min_n = attr_int(node, "min_gram_length", 0), max_n = attr_int(node, "max_gram_length", 0);
  const int64_t max_skip = attr_int(node, "max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_n > 64) return make_error("need 1 <= min_gram_length <= max_gram_length <= 64");
  if (max_skip < 0 || max_skip > 1024) return make_error("max_skip_count must be in [0, 1024]");
  if (node.attribute("pool_strings")) return make_error("string pools are not supported");
  const auto pool = attr_ints(node, "pool_int64s");
  const auto starts = attr_ints(node, "ngram_counts");
  const auto indexes = attr_ints(node, "ngram_indexes");
  std::vector<float> weights;
  if (const Attribute* w = node.attribute("weights"); w && w->kind == Attribute::Kind::Floats) weights = w->floats;
  if (starts.size() < static_cast<size_t>(max_n)) return make_error("ngram_counts needs one start per n-gram length");
  std::map<std::vector<int64_t>, Gram> grams;
  size_t width = 0, j = 0;
  for (size_t n = 1; n <= starts.size(); ++n) {
    const int64_t begin = starts[n - 1], end = n < starts.size() ? starts[n] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % static_cast<int64_t>(n) != 0)
      return make_error("ngram_counts does not split pool_int64s into whole n-grams");
    for (int64_t p = begin; p < end; p += static_cast<int64_t>(n), ++j) {
      if (j >= indexes.size()) return make_error("ngram_indexes has fewer entries than the pool has n-grams");
      if (indexes[j] < 0 || indexes[j] > (int64_t{1} << 24)) return make_error("ngram_indexes values must be in [0, 2^24]");
      if (!weights.empty() && j >= weights.size()) return make_error("weights has fewer entries than the pool has n-grams");
      const auto out = static_cast<size_t>(indexes[j]);
      grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + static_cast<int64_t>(n))] =
          Gram{out, weights.empty() ? 1.0f : weights[j]};
      width = std::max(width, out + 1);
    }
  }
  return KernelPtr(new TfIdfVectorizerKernel(mode, min_n, max_n, max_skip, std::move(grams), width));
}

}  // namespace reduce::ref
