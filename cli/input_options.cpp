// Parsing of the input options and building the inputs of a run from them.
#include "input_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include "command_line.h"
#include "core/tensor_set.h"
#include "oracle_options.h"
#include "oracle/inputs.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

bool parse_int(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// NAME:D0xD1x... (also comma-separated); the name is everything before the last ':'.
Expected<std::pair<std::string, Shape>> parse_shape_option(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("--input-shape '" + text + "': expected NAME:D0xD1x... (e.g. x:1x3x224x224)");
  Shape shape;
  std::string dims = text.substr(colon + 1);
  size_t start = 0;
  while (start <= dims.size() && !dims.empty()) {
    size_t end = dims.find_first_of("x,", start);
    if (end == std::string::npos) end = dims.size();
    int64_t d = 0;
    if (!parse_int(std::string_view(dims).substr(start, end - start), d) || d < 0)
      return make_error("--input-shape '" + text + "': '" + dims.substr(start, end - start) + "' is not a dimension");
    shape.push_back(d);
    start = end + 1;
  }
  return std::pair{text.substr(0, colon), shape};
}

// NAME:LO,HI
Expected<std::pair<std::string, ValueRange>> parse_range_option(const std::string& text) {
  const auto colon = text.rfind(':');
  const auto comma = text.rfind(',');
  if (colon == std::string::npos || colon == 0 || comma == std::string::npos || comma < colon)
    return make_error("--input-range '" + text + "': expected NAME:LO,HI (e.g. x:0,255)");
  try {
    size_t used = 0;
    const std::string lo_text = text.substr(colon + 1, comma - colon - 1), hi_text = text.substr(comma + 1);
    const double lo = std::stod(lo_text, &used);
    if (used != lo_text.size()) throw std::invalid_argument(lo_text);
    const double hi = std::stod(hi_text, &used);
    if (used != hi_text.size()) throw std::invalid_argument(hi_text);
    if (!std::isfinite(lo) || !std::isfinite(hi))
      return make_error("--input-range '" + text + "': LO and HI must be finite numbers");
    if (hi < lo) return make_error("--input-range '" + text + "': HI is below LO");
    return std::pair{text.substr(0, colon), ValueRange{lo, hi}};
  } catch (const std::exception&) {
    return make_error("--input-range '" + text + "': LO and HI must be numbers");
  }
}

}  // namespace

void add_input_options(po::options_description& opts) {
  po::options_description inputs("input (the values the model runs on)");
  inputs.add_options()
      ("inputs", po::value<std::vector<std::string>>()->composing(),
       "input tensors: .npz, .npy, .pb, or a folder of input_K.pb / NAME.npy; a folder of test_data_set_N "
       "folders or of .npz files, or --inputs repeated, gives several samples (a check fails when any sample fails)")
      ("input-shape", po::value<std::vector<std::string>>()->composing(),
       "fix an input's shape: NAME:D0xD1x... (repeatable)")
      ("input-range", po::value<std::vector<std::string>>()->composing(),
       "value range of a random input: NAME:LO,HI (repeatable)")
      ("seed", po::value<uint64_t>()->default_value(0), "seed of the random inputs");
  opts.add(inputs);
}

Expected<std::vector<TensorSample>> read_expected_samples(const po::variables_map& vm, const Model& model,
                                                                     size_t input_samples) {
  std::vector<TensorSample> out;
  if (!vm.count("expected")) return out;
  if (!vm.count("inputs"))
    return make_error("--expected: expected values belong to the inputs they were computed from; give those with --inputs");
  // --max-memory bounds what compressed tensor files may inflate to.
  REDUCE_ASSIGN(const uint64_t read_limit, max_memory_from(vm));
  for (const auto& path : vm["expected"].as<std::vector<std::string>>()) {
    REDUCE_ASSIGN(auto read, read_tensor_samples(path, "output", read_limit));
    for (auto& sample : read) {
      if (out.size() == kMaxTensorSamples)
        return Error{path, "more than " + std::to_string(kMaxTensorSamples) + " expected samples in all"};
      REDUCE_ASSIGN(auto bound, bind_expected(model.graph, std::move(sample.tensors), sample.source));
      out.push_back({sample.source, std::move(bound)});
    }
  }
  if (out.size() != input_samples)
    return make_error("--expected gives " + std::to_string(out.size()) + " sample(s) for " + std::to_string(input_samples) +
                      " input sample(s); give one per input sample, in the same order");
  return out;
}

Expected<std::vector<InputSample>> prepare_input_samples(const po::variables_map& vm, Model& model,
                                                         const std::filesystem::path& model_path) {
  if (vm.count("input-shape"))
    for (const auto& text : vm["input-shape"].as<std::vector<std::string>>()) {
      REDUCE_ASSIGN(auto parsed, parse_shape_option(text));
      Status s = set_input_shape(model, parsed.first, parsed.second);
      if (!s.ok()) return s.error().at(model_path.string());
    }
  if (vm.count("inputs")) {
    REDUCE_ASSIGN(const uint64_t read_limit, max_memory_from(vm));
    std::vector<InputSample> samples;
    for (const auto& path : vm["inputs"].as<std::vector<std::string>>()) {
      REDUCE_ASSIGN(auto read, read_tensor_samples(path, "input", read_limit));
      for (auto& sample : read) {
        if (samples.size() == kMaxTensorSamples)
          return Error{path, "more than " + std::to_string(kMaxTensorSamples) + " input samples in all"};
        // A lone tensor named after no input is bound by position: said, since a wrong file would be too.
        std::string unnamed;
        if (sample.tensors.size() == 1 && !sample.tensors[0].name.empty() &&
            std::none_of(model.graph.inputs.begin(), model.graph.inputs.end(),
                         [&](const ValueInfo& vi) { return vi.name == sample.tensors[0].name; }))
          unnamed = sample.tensors[0].name;
        REDUCE_ASSIGN(auto bound, bind_inputs(model.graph, std::move(sample.tensors), sample.source));
        if (!unnamed.empty() && !bound.empty())
          console_from(vm).note(sample.source + ": its one tensor '" + unnamed + "' names no input of the model; " +
                                "bound by position to input '" + bound[0].name + "'");
        samples.push_back({sample.source, std::move(bound)});
      }
    }
    return samples;
  }
  RandomInputOptions options;
  options.seed = vm["seed"].as<uint64_t>();
  if (vm.count("input-range"))
    for (const auto& text : vm["input-range"].as<std::vector<std::string>>()) {
      REDUCE_ASSIGN(auto parsed, parse_range_option(text));
      options.ranges[parsed.first] = parsed.second;
    }
  std::vector<std::string> notes;
  auto inputs = make_random_inputs(model.graph, options, &notes);
  if (!inputs) return inputs.error().at(model_path.string());
  for (const auto& n : notes) console_from(vm).note(n);
  return std::vector<InputSample>{{"seed " + std::to_string(options.seed), std::move(*inputs)}};
}

}  // namespace reduce::cli
