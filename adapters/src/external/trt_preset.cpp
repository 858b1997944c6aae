// The `trt` preset: its options, the Polygraphy or trtexec command it expands to, the FP32 layer flags.
#include "adapters/trt_preset.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/process.h"

namespace reduce {

namespace {

constexpr std::string_view kInstall =
    "install TensorRT's trtexec (its bin/ folder on PATH) or Polygraphy (`pip install polygraphy`, with TensorRT's "
    "Python package)";

// The first executable regular file named `program` in the folders of `path_variable`.
std::filesystem::path find_program(std::string_view program, std::string_view path_variable) {
  size_t start = 0;
  while (start <= path_variable.size()) {
    const size_t colon = std::min(path_variable.find(':', start), path_variable.size());
    std::string_view folder = path_variable.substr(start, colon - start);
    start = colon + 1;
    const std::filesystem::path candidate = std::filesystem::path(folder.empty() ? "." : std::string(folder)) / program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
      return std::filesystem::absolute(candidate, ec);
  }
  return {};
}

std::vector<std::string> polygraphy_argv(const TrtOptions& o, const std::filesystem::path& program, int version) {
  std::vector<std::string> argv{program.string(), "run", "{model}", "--trt"};
  for (auto& flag : trt_precision_flags(o, TrtTool::Polygraphy, version)) argv.push_back(std::move(flag));
  if (o.tf32) argv.push_back("--tf32");
  for (const char* a : {"--load-inputs", "{inputs_json}", "--save-outputs", "{outputs_json}"}) argv.push_back(a);
  return argv;
}

std::vector<std::string> trtexec_argv(const TrtOptions& o, const std::filesystem::path& program, int version) {
  std::vector<std::string> argv{program.string(), "--onnx={model}", "{trtexec_shapes}"};
  for (auto& flag : trt_precision_flags(o, TrtTool::Trtexec, version)) argv.push_back(std::move(flag));
  // trtexec enables TF32 unless told not to; Polygraphy does the opposite. `tf32` decides for both.
  if (!o.tf32) argv.push_back("--noTF32");
  // One inference is what is compared: no warm-up, no timed repetitions.
  for (const char* a : {"--loadInputs={trtexec_inputs}", "--exportOutput={trtexec_output_json}", "--iterations=1",
                        "--warmUp=0", "--duration=0"})
    argv.push_back(a);
  return argv;
}


// Sets the flag `word` names (a precision of trt_precisions.def, or tf32); false when it names none.
bool set_flag(TrtOptions& o, std::string_view word) {
  if (word == "tf32") return o.tf32 = true;
#define TRT_PRECISION(name, member, trtexec_flag, polygraphy_flag, quantized) \
  if (word == name) return o.member = true;
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  return false;
}

}  // namespace

std::string trt_option_words() {
  std::string words;
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized) words += word ", ";
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  return words + "tf32, fp32=NODE+NODE|@FILE, tool=polygraphy|trtexec, version=10|11";
}

std::vector<std::string> trt_precision_flags(const TrtOptions& o, TrtTool tool, int version) {
  std::vector<std::string> flags;
  if (version >= 11) return flags;
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized)                      \
  if (const std::string_view flag = tool == TrtTool::Trtexec ? trtexec_flag : polygraphy_flag; \
      o.member && !flag.empty())                                                               \
    flags.emplace_back(flag);
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  return flags;
}

std::string_view trt_tool_name(TrtTool tool) {
  switch (tool) {
    case TrtTool::Polygraphy: return "polygraphy";
    case TrtTool::Trtexec: return "trtexec";
    default: return "auto";
  }
}

Expected<TrtOptions> parse_trt_options(std::string_view options) {
  TrtOptions out;
  if (options.empty()) return make_error("empty options after 'trt:' (known: " + trt_option_words() + ")");
  for (size_t start = 0;;) {
    const size_t comma = options.find(',', start);
    const std::string_view word = options.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (word.empty()) return make_error("empty option in '" + std::string(options) + "'");
    if (set_flag(out, word)) {
      // a word without a value
    } else if (word.substr(0, 5) == "fp32=") {
      REDUCE_ASSIGN(Fp32Nodes nodes, parse_fp32_nodes(word.substr(5)));
      for (auto& name : nodes.names)
        if (!out.fp32_nodes.contains(name)) out.fp32_nodes.names.push_back(std::move(name));
      if (out.fp32_nodes.file.empty()) out.fp32_nodes.file = nodes.file;
    } else if (word == "version=10") out.version = 10;
    else if (word == "version=11") out.version = 11;
    else if (word.substr(0, 8) == "version=")
      return make_error("unknown TensorRT version '" + std::string(word.substr(8)) + "' (known: 10, 11)");
    else if (word == "tool=polygraphy") out.tool = TrtTool::Polygraphy;
    else if (word == "tool=trtexec") out.tool = TrtTool::Trtexec;
    else if (word.substr(0, 5) == "tool=")
      return make_error("unknown tool '" + std::string(word.substr(5)) + "' (known: polygraphy, trtexec)");
    else
      return make_error("unknown option '" + std::string(word) + "' (known: " + trt_option_words() + ")");
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string to_string(const TrtOptions& o) {
  std::vector<std::string> words;
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized) \
  if (o.member) words.push_back(word);
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  if (o.tf32) words.push_back("tf32");
  if (!o.fp32_nodes.empty()) words.push_back("fp32=" + to_string(o.fp32_nodes));
  if (o.tool != TrtTool::Auto) words.push_back("tool=" + std::string(trt_tool_name(o.tool)));
  if (o.version) words.push_back("version=" + std::to_string(o.version));
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

std::vector<std::string> TrtOptions::quantized_words() const {
  std::vector<std::string> out;
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized) \
  if (quantized && member) out.push_back(word);
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  return out;
}

int trt_major_version(TrtTool tool, std::string_view output) {
  const auto digits_at = [&](size_t at) {
    size_t end = at;
    while (end < output.size() && std::isdigit(static_cast<unsigned char>(output[end]))) ++end;
    return end > at && end - at <= 9 ? std::stol(std::string(output.substr(at, end - at))) : -1L;
  };
  if (tool == TrtTool::Trtexec) {
    const size_t at = output.find("[TensorRT v");
    if (at == std::string_view::npos) return 0;
    const long packed = digits_at(at + 11);  // MMmmpp: 100300 is 10.3.0
    return packed >= 10000 ? static_cast<int>(packed / 10000) : 0;
  }
  // "10.3.0" on a line of its own (the last such line: imports may print before it).
  int major = 0;
  for (size_t start = 0; start < output.size();) {
    const size_t end = std::min(output.find('\n', start), output.size());
    const std::string_view line = output.substr(start, end - start);
    const size_t dot = line.find('.');
    if (dot != std::string_view::npos && dot > 0 && line.find_first_not_of("0123456789.\r") == std::string_view::npos) {
      const long m = digits_at(start);
      if (m > 0) major = static_cast<int>(m);
    }
    start = end + 1;
  }
  return major;
}

int probe_trt_version(TrtTool tool, const std::filesystem::path& program, const std::vector<std::string>& env,
                      double timeout_seconds) {
  std::vector<std::string> argv;
  if (tool == TrtTool::Trtexec) {
    argv = {program.string(), "--help"};
  } else {
    // Polygraphy is a Python script: its #! line names the Python that imports tensorrt.
    std::ifstream in(program);
    std::string first;
    std::getline(in, first);
    if (first.rfind("#!", 0) != 0) return 0;
    std::istringstream words(first.substr(2));
    for (std::string w; words >> w;) argv.push_back(w);
    if (argv.empty()) return 0;
    for (const char* a : {"-c", "import tensorrt; print(tensorrt.__version__)"}) argv.push_back(a);
  }
  ProcessOptions options;
  options.timeout_seconds = timeout_seconds;
  options.env = env;
  auto ran = run_process(argv, options);
  return ran ? trt_major_version(tool, ran->output) : 0;
}

Expected<TrtCommand> trt_command(const TrtOptions& options, std::string_view path_variable,
                                 const TrtVersionProbe& detect_version) {
  const auto version_of = [&](TrtTool tool, const std::filesystem::path& program) {
    int v = options.version          ? options.version
            : options.detected_version ? options.detected_version
            : detect_version           ? detect_version(tool, program)
                                       : 0;
    return v == 0 ? 10 : v;
  };
  const auto made = [&](TrtTool tool, const std::filesystem::path& program) -> Expected<TrtCommand> {
    const int version = version_of(tool, program);
    if (const auto quantized = options.quantized_words(); version >= 11 && !quantized.empty()) {
      std::string words;
      for (const auto& w : quantized) words += (words.empty() ? "" : "/") + w;
      return make_error("TensorRT " + std::to_string(version) + " builds the graph as typed: " + words +
                        " needs explicit quantization (QuantizeLinear/DequantizeLinear in the model), not a flag");
    }
    if (tool == TrtTool::Polygraphy && options.int4)
      return make_error("Polygraphy has no INT4 builder flag (trtexec's --int4 does it: add tool=trtexec)");
    if (version >= 11 && options.fp16 && options.bf16)
      return make_error("TensorRT " + std::to_string(version) + " builds the graph as typed: choose fp16 or bf16, "
                        "the type the model is converted to");
    return TrtCommand{tool, tool == TrtTool::Polygraphy ? polygraphy_argv(options, program, version)
                                                        : trtexec_argv(options, program, version),
                      version};
  };
  const auto polygraphy = options.tool == TrtTool::Trtexec ? std::filesystem::path() : find_program("polygraphy", path_variable);
  if (!polygraphy.empty()) return made(TrtTool::Polygraphy, polygraphy);
  const auto trtexec = options.tool == TrtTool::Polygraphy ? std::filesystem::path() : find_program("trtexec", path_variable);
  if (!trtexec.empty()) return made(TrtTool::Trtexec, trtexec);
  switch (options.tool) {
    case TrtTool::Polygraphy:
      return make_error("polygraphy is not on PATH; install it with `pip install polygraphy` (with TensorRT's Python package)");
    case TrtTool::Trtexec:
      return make_error("trtexec is not on PATH; install TensorRT and put its bin/ folder (which holds trtexec) on PATH");
    default: return make_error("neither polygraphy nor trtexec is on PATH; " + std::string(kInstall));
  }
}

std::vector<std::string> trt_timing_cache_arguments(TrtTool tool) {
  if (tool == TrtTool::Polygraphy)
    return {"--load-timing-cache", "{timing_cache}", "--save-timing-cache", "{timing_cache}"};
  return {"--timingCacheFile={timing_cache}"};
}

Expected<std::vector<std::string>> trt_fp32_arguments(TrtTool tool, const std::vector<std::string>& nodes) {
  if (nodes.empty()) return std::vector<std::string>{};
  if (tool == TrtTool::Polygraphy) {
    std::vector<std::string> out{"--precision-constraints", "obey", "--layer-precisions"};
    for (const auto& n : nodes) {
      // argparse takes a word starting with '-' for the next flag; Polygraphy splits at the last ':'.
      if (!n.empty() && n[0] == '-')
        return make_error("node '" + n + "': Polygraphy's --layer-precisions cannot take a name starting with '-' (use tool=trtexec)");
      out.push_back(n + ":float32");
    }
    return out;
  }
  // trtexec splits the list at every ',' and treats a quote as name quoting; it splits NAME:fp32 at the last ':'.
  std::string list;
  for (const auto& n : nodes) {
    if (n.find_first_of(",'") != std::string::npos)
      return make_error("node '" + n + "': trtexec's --layerPrecisions cannot express a name with ',' or \"'\" (use tool=polygraphy)");
    list += (list.empty() ? "" : ",") + n + ":fp32";
  }
  return std::vector<std::string>{"--precisionConstraints=obey", "--layerPrecisions=" + list};
}


}  // namespace reduce
