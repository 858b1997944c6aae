// ONNX Runtime's refusals that are a limit of the release, as found in the messages of onnxruntime-node
// 1.12 to 1.30 over ONNX's node tests (docs/onnxruntime.md lists them).
#include "adapters/ort.h"

#include <algorithm>
#include <cctype>

namespace reduce {

namespace {

constexpr size_t kMaxWords = 160;  // a limit is said in a line, whatever the engine wrote

// The digits (with a leading '-') at `at`, or empty.
std::string_view number_at(std::string_view s, size_t at) {
  size_t end = at;
  if (end < s.size() && s[end] == '-') ++end;
  while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
  return end > at && s[end - 1] != '-' ? s.substr(at, end - at) : std::string_view{};
}

// The number right after `marker`, or empty when the marker is not there.
std::string_view number_after(std::string_view s, std::string_view marker) {
  const size_t at = s.find(marker);
  return at == std::string_view::npos ? std::string_view{} : number_at(s, at + marker.size());
}

// The word after `marker` up to the first of `stops` (an operator's name and version), or empty.
std::string_view word_after(std::string_view s, std::string_view marker, std::string_view stops = " ,'\n") {
  const size_t at = s.find(marker);
  if (at == std::string_view::npos) return {};
  const size_t from = at + marker.size();
  const size_t end = std::min(s.find_first_of(stops, from), s.size());
  return s.substr(from, std::min(end - from, kMaxWords));
}

// The word before `marker` (after the last space), or empty.
std::string_view word_before(std::string_view s, std::string_view marker) {
  const size_t at = s.find(marker);
  if (at == std::string_view::npos) return {};
  const size_t space = s.rfind(' ', at == 0 ? 0 : at - 1);
  const size_t from = space == std::string_view::npos ? 0 : space + 1;
  return s.substr(from, std::min(at - from, kMaxWords));
}

// The sentence that holds `marker` (from the last ". " before it to the end of its own), or empty.
std::string_view sentence_with(std::string_view s, std::string_view marker) {
  const size_t at = s.find(marker);
  if (at == std::string_view::npos) return {};
  const size_t stop = s.rfind(". ", at);
  size_t start = stop == std::string_view::npos ? 0 : stop + 2;
  if (at - start > kMaxWords) start = at - kMaxWords;  // a sentence of megabytes: the words before the marker
  const size_t end = std::min(s.find('.', at), s.size());
  return s.substr(start, std::min(end - start, 2 * kMaxWords));
}

}  // namespace

std::string ort_limit(std::string_view message) {
  // "Unsupported model IR version: 10, max supported IR version: 9"
  if (const auto ir = number_after(message, "Unsupported model IR version: "); !ir.empty()) {
    const auto max = number_after(message, "max supported IR version: ");
    return "IR version " + std::string(ir) + (max.empty() ? " is newer than it reads" : "; it reads up to " + std::string(max));
  }
  // "Opset 19 is under development ... Current official support for domain ai.onnx is till opset 18."
  if (const auto opset = number_after(message, "Opset "); !opset.empty() && message.find(" is under development") != std::string_view::npos) {
    const auto domain = word_after(message, "Current official support for domain ");
    const auto till = number_after(message, std::string(domain) + " is till opset ");
    return "opset " + std::string(opset) + (domain.empty() ? "" : " of " + std::string(domain)) +
           (till.empty() ? " is newer than it knows" : "; it knows up to " + std::string(till));
  }
  // "Fatal error: ai.onnx.preview.training:Adam(-1) is not a registered function/op"
  if (const auto op = word_before(message, " is not a registered function/op"); !op.empty())
    return "no schema for " + std::string(op.substr(0, op.rfind('(')));
  // "No Op registered for Foo with domain_version of 21"
  if (const auto op = word_after(message, "No Op registered for "); !op.empty()) {
    const auto version = number_after(message, "with domain_version of ");
    return "no schema for " + std::string(op) + (version.empty() ? "" : " at opset " + std::string(version));
  }
  // "Could not find an implementation for Add(14) node with name ''"
  if (const auto op = word_after(message, "Could not find an implementation for "); !op.empty())
    return "no kernel for " + std::string(op) + " with these types";
  // The JavaScript binding: "Unsupported tensor type: float16", "Tensor.data must be a typed array".
  if (const auto type = word_after(message, "Unsupported tensor type: ", " ,.;\n"); !type.empty())
    return "its JavaScript binding cannot pass " + std::string(type) + " tensors";
  if (const auto type = number_after(message, "Unsupported data type: "); !type.empty())
    return "its JavaScript binding cannot pass ONNX data type " + std::string(type);
  // reduce's own worker (scripts/ort/ort_worker.js): a type it has no typed array for.
  if (message.find("its type cannot be given to ONNX Runtime") != std::string_view::npos)
    return "reduce's worker cannot pass an input of this type";
  if (message.find("which reduce cannot take") != std::string_view::npos) return "reduce's worker cannot read an output of this type";
  if (message.find("must be a typed array") != std::string_view::npos)
    return "its JavaScript binding refuses a tensor's data (" + std::string(sentence_with(message, "must be a typed array")) + ")";
  // A kernel that says what it does not do: "Batchwise recurrent operations (layout == 1) are not supported."
  for (const std::string_view said : {" are not supported", " is not supported", " is not implemented", " are not implemented"})
    if (const auto sentence = sentence_with(message, said); !sentence.empty()) return std::string(sentence);
  return {};
}

}  // namespace reduce
