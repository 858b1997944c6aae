// A stand-in for TensorRT's trtexec (not TensorRT): its command line and file contract, as TensorRT 10
// or 11 (env TRTEXEC_STAND_IN_VERSION, default 11) has it, for tests that put it first on PATH as
// `trtexec`. What it implements, and what it refuses the way trtexec does:
//   --help                  the banner `&&&& RUNNING TensorRT.trtexec [TensorRT vMMmmpp] ...` (how the preset
//                           learns the version), then a usage text
//   --onnx=F --loadInputs='NAME':FILE,... --exportOutput=F --shapes='NAME':AxB,...
//   --iterations, --warmUp, --duration, --noTF32, --stronglyTyped, --timingCacheFile=F
//   10 only: --fp16 --bf16 --int8 --fp8 --int4 --best --precisionConstraints=obey --layerPrecisions=N:fp32,...
//   11: those are `[E] Unknown option: --fp16` (removed in 11; the graph is built as it is typed)
//   --shapes on a model without dynamic inputs is an error; dynamic dims without --shapes are 1.
// It computes with the optimized engine (10: weak typing, --fp16 and the FP32 layers honoured) or the
// reference (11: an FP16 node computes in FP16), $FAULT injected when set. Each run (and --help)
// appends its command line to $TRTEXEC_STAND_IN_LOG when set; with --timingCacheFile it holds an exclusive
// lock on the cache file while it runs and appends `overlap` to the log if another run held it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/engine_spec.h"
#include "core/model_io.h"

namespace {

using namespace reduce;

int version() {
  const char* v = std::getenv("TRTEXEC_STAND_IN_VERSION");
  return v && *v ? std::atoi(v) : 11;
}

std::string banner(const std::string& status, const std::string& line) {
  return "&&&& " + status + " TensorRT.trtexec [TensorRT v" + std::to_string(version()) + "0400] [b12] # " + line;
}

int fail(const std::string& line, const std::string& what) {
  std::cout << "[E] " << what << "\n" << banner("FAILED", line) << std::endl;
  return 1;
}

// 'NAME':VALUE,... (names quoted or not; trtexec splits at ',' and at the last ':').
std::map<std::string, std::string> name_list(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t colon = item.rfind(':');
    std::string name = item.substr(0, colon);
    if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'') name = name.substr(1, name.size() - 2);
    out[name] = colon == std::string::npos ? "" : item.substr(colon + 1);
  }
  return out;
}

std::string dims_text(const Shape& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

// trtexec prints values with C++ streams' defaults: 6 significant digits, inf/nan bare.
std::string value_text(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string line = "trtexec";
  for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
  const int v = version();
  std::cout << banner("RUNNING", line) << std::endl;
  std::string model_path, load_inputs, export_output, shapes_text, timing_cache, constraints;
  std::vector<std::string> fp32_layers;
  bool fp16 = false, bf16 = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--help") {
      if (const char* log = std::getenv("TRTEXEC_STAND_IN_LOG"); log && *log) std::ofstream(log, std::ios::app) << line << "\n";
      std::cout << "=== Build Options ===\n  --onnx=<file>  ONNX model\n  --stronglyTyped  (always on)\n"
                << (v < 11 ? "  --fp16  --bf16  --int8  --fp8  --int4  --best\n" : "") << "=== Inference Options ===\n"
                << "  --loadInputs=<specs>  --exportOutput=<file>  --shapes=<spec>\n";
      return 0;
    }
    if (key == "--onnx") model_path = value;
    else if (key == "--loadInputs") load_inputs = value;
    else if (key == "--exportOutput") export_output = value;
    else if (key == "--shapes") shapes_text = value;
    else if (key == "--timingCacheFile") timing_cache = value;
    else if (key == "--iterations" || key == "--warmUp" || key == "--duration" || key == "--noTF32" ||
             key == "--stronglyTyped")
      continue;
    else if (v < 11 && (key == "--fp16" || key == "--best")) fp16 = true;
    else if (v < 11 && key == "--bf16") bf16 = true;
    else if (v < 11 && (key == "--int8" || key == "--fp8" || key == "--int4")) continue;
    else if (v < 11 && key == "--precisionConstraints") constraints = value;
    else if (v < 11 && key == "--layerPrecisions")
      for (const auto& [name, precision] : name_list(value)) {
        if (precision == "fp32") fp32_layers.push_back(name);
      }
    else
      return fail(line, "Unknown option: " + a);
  }
  if (const char* log = std::getenv("TRTEXEC_STAND_IN_LOG"); log && *log) {
    std::ofstream(log, std::ios::app) << line << "\n";
  }
  // The timing cache: trtexec reads it before the build and writes it after; two builds writing one
  // file at once would be a bug of the caller, so the stand-in reports any overlap.
  int cache_fd = -1;
  if (!timing_cache.empty()) {
    cache_fd = open(timing_cache.c_str(), O_RDWR | O_CREAT, 0644);
    if (cache_fd < 0) return fail(line, "Cannot open timing cache file " + timing_cache);
    if (flock(cache_fd, LOCK_EX | LOCK_NB) != 0) {
      if (const char* log = std::getenv("TRTEXEC_STAND_IN_LOG"); log && *log)
        std::ofstream(log, std::ios::app) << "overlap " << timing_cache << "\n";
      flock(cache_fd, LOCK_EX);
    }
  }
  if (model_path.empty()) return fail(line, "Model missing or format not recognized");
  auto model = load_model(model_path);
  if (!model.ok()) return fail(line, "Failed to parse onnx file: " + model.error().message());

  const auto shapes = name_list(shapes_text);
  bool dynamic = false;
  for (const auto& vi : model->graph.inputs)
    for (const auto& d : vi.type.dims) dynamic = dynamic || !d.is_static();
  if (!shapes_text.empty() && !dynamic)
    return fail(line, "Static model does not take explicit shapes since the shape of inference tensors will be "
                      "determined by the model itself");
  const auto files = name_list(load_inputs);
  TensorMap inputs;
  for (const auto& vi : model->graph.inputs) {
    if (model->graph.find_initializer(vi.name)) continue;
    Shape shape;
    if (auto it = shapes.find(vi.name); it != shapes.end()) {
      std::stringstream dims(it->second);
      for (std::string d; std::getline(dims, d, 'x');) shape.push_back(std::stoll(d));
    } else {
      for (const auto& d : vi.type.dims) shape.push_back(d.is_static() ? d.value : 1);
    }
    const auto dtype = dtype_from_onnx(vi.type.elem_type);
    if (!dtype) return fail(line, "input " + vi.name + ": unsupported type");
    auto tensor = Tensor::allocate(*dtype, shape);
    if (!tensor.ok()) return fail(line, tensor.error().message());
    const auto file = files.find(vi.name);
    if (file == files.end()) return fail(line, "no --loadInputs for input " + vi.name);
    std::ifstream in(file->second, std::ios::binary | std::ios::ate);
    if (!in || static_cast<size_t>(in.tellg()) != tensor->byte_size())
      return fail(line, "Cannot load input " + vi.name + " from " + file->second + ": expected " +
                            std::to_string(tensor->byte_size()) + " bytes for shape " + dims_text(shape));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(tensor->mutable_bytes().data()), static_cast<std::streamsize>(tensor->byte_size()));
    inputs.emplace(vi.name, std::move(*tensor));
  }

  std::string spec = v < 11 ? "opt" : "ref";
  std::vector<std::string> options;
  if (fp16) options.push_back("fp16");
  if (bf16) options.push_back("bf16");
  if (constraints == "obey" && !fp32_layers.empty()) {
    std::string list;
    for (const auto& n : fp32_layers) list += (list.empty() ? "" : "+") + n;
    options.push_back("fp32=" + list);
  }
  if (const char* fault = std::getenv("FAULT"); fault && *fault) {
    spec = "opt";
    options.push_back(std::string("fault=") + fault);
  }
  for (size_t i = 0; i < options.size(); ++i) spec += (i ? "," : ":") + options[i];
  auto engine = make_engine(spec);
  if (!engine.ok()) return fail(line, engine.error().message());
  auto prepared = (*engine)->prepare(*model);
  if (!prepared.ok()) return fail(line, "Engine could not be created: " + prepared.error().message());
  auto outputs = (*prepared)->run(inputs, RunOptions{});
  if (!outputs.ok()) return fail(line, "Inference failed: " + outputs.error().message());

  if (!export_output.empty()) {
    std::ofstream out(export_output);
    out << "[";
    bool first = true;
    for (const auto& vi : model->graph.outputs) {
      const Tensor& t = outputs->at(vi.name);
      out << (first ? "\n" : "\n, ") << "  { \"name\" : \"" << vi.name << "\"\n  , \"dimensions\" : \""
          << dims_text(t.shape()) << "\"\n  , \"values\" : [ ";
      for (uint64_t k = 0; k < t.elements(); ++k) out << (k ? ", " : "") << value_text(t.element_as_double(k));
      out << " ]\n  }";
      first = false;
    }
    out << "\n]\n";
  }
  if (cache_fd >= 0) {
    (void)!write(cache_fd, "cache", 5);
    close(cache_fd);
  }
  std::cout << banner("PASSED", line) << std::endl;
  return 0;
}
