// The whole-model candidate and the canonical candidate hash.
#include "core/candidate.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>

#include "core/model.h"

namespace reduce {

Candidate Candidate::whole(const Graph& graph) {
  Candidate c;
  c.nodes.resize(graph.nodes.size());
  for (size_t i = 0; i < c.nodes.size(); ++i) c.nodes[i] = i;
  return c;
}

Status check_well_formed(const Candidate& c, size_t node_count, size_t body_node_count) {
  if (c.nodes.empty()) return make_error("the candidate keeps no node");
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    if (c.nodes[i] >= node_count)
      return make_error("the candidate keeps node " + std::to_string(c.nodes[i]) + ", but the graph has " +
                        std::to_string(node_count) + " nodes");
    if (i > 0 && c.nodes[i] <= c.nodes[i - 1]) return make_error("the candidate's nodes are not ascending");
  }
  if (!std::is_sorted(c.frozen.begin(), c.frozen.end())) return make_error("the candidate's frozen values are not sorted");
  const auto& body = c.removed_body_nodes;
  if (std::adjacent_find(body.begin(), body.end(), std::greater_equal<size_t>()) != body.end())
    return make_error("the candidate's removed body nodes are not ascending");
  if (!body.empty() && body.back() >= body_node_count)
    return make_error("the candidate removes body node " + std::to_string(body.back()) + ", but the graph has " +
                      std::to_string(body_node_count) + " body nodes");
  return {};
}

namespace {

// Two independent 64-bit lanes over 64-bit words. Each step is a bijection of the lane's state
// (xor or add the word, multiply by an odd constant, xor-shift), so two inputs of the same length
// that differ in one word never collide in a lane; every field is length-prefixed, so the encoding
// is prefix-free. The murmur3 finalizer spreads the last words over all bits.
class Hasher {
 public:
  void word(uint64_t w) {
    a_ = (a_ ^ w) * 0x9E3779B97F4A7C15ull;
    a_ ^= a_ >> 32;
    b_ = (b_ + w) * 0xD6E8FEB86659FD93ull;
    b_ ^= b_ >> 29;
  }
  void text(const std::string& s) {
    word(s.size());
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      word(w);
    }
    if (i < s.size()) {
      uint64_t w = 0;
      std::memcpy(&w, s.data() + i, s.size() - i);
      word(w);
    }
  }
  std::pair<uint64_t, uint64_t> finish() const { return {fmix(a_), fmix(b_ ^ 0x632BE59BD9B4E019ull)}; }

 private:
  static uint64_t fmix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
  }
  uint64_t a_ = 14695981039346656037ull, b_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace

std::pair<uint64_t, uint64_t> candidate_hash(const Candidate& c) {
  Hasher h;
  h.word(c.nodes.size());
  for (size_t n : c.nodes) h.word(n);
  h.word(c.frozen.size());
  for (const auto& f : c.frozen) h.text(f);
  h.word(c.outputs.size());
  for (const auto& o : c.outputs) h.text(o);
  h.word(c.input_shapes.size());
  for (const auto& [name, shape] : c.input_shapes) {
    h.text(name);
    h.word(shape.size());
    for (int64_t d : shape) h.word(static_cast<uint64_t>(d));
  }
  h.word(c.filled.size());
  for (const auto& [name, value] : c.filled) {
    h.text(name);
    h.word(std::bit_cast<uint64_t>(value == 0 ? 0.0 : value));  // -0.0 == 0.0: one hash
  }
  h.word(c.dropped_attributes.size());
  for (const auto& [node, attr] : c.dropped_attributes) {
    h.word(node);
    h.text(attr);
  }
  // Only when present, so that the hashes of candidates without body edits stay what they were.
  if (!c.removed_body_nodes.empty()) {
    h.word(c.removed_body_nodes.size());
    for (size_t id : c.removed_body_nodes) h.word(id);
  }
  return h.finish();
}

}  // namespace reduce
