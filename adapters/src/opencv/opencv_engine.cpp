// The `opencv` engine: OpenCV's DNN module (readNetFromONNX, CPU backend) behind our Engine interface.
#include "adapters/library_settings.h"
#include "factories/engine_factories.h"

#ifdef REDUCE_HAVE_OPENCV

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include <cstring>
#include <list>
#include <mutex>

#include "core/model_io.h"
#include "external/output_model.h"

namespace reduce {

namespace {

// cv::Exception text spans several lines, quotes '>'-prefixed nested messages and repeats the
// source paths of OpenCV's build; keep the description on one line, e.g.
// "Node [Div@ai.onnx]:(onnx_node!/ln/Div) parse error: (-215:Assertion failed) axis != outShape.size() in function 'parseMul'".
std::string opencv_message(const cv::Exception& e) {
  // A nested error (the importer rethrowing a node's error) has the meaningful part in `err`; the
  // outer "(-2:Unspecified error) in function 'handleNode'" adds nothing.
  std::string text = e.err.find("OpenCV(") != std::string::npos ? e.err : e.what();
  for (size_t at; (at = text.find("OpenCV(")) != std::string::npos;) {
    const size_t end = text.find(": error: ", at);
    if (end == std::string::npos) break;
    text.erase(at, end + 9 - at);
  }
  // "in function 'void cv::dnn::dnn4_v20220524::ONNXImporter::parseClip(cv::dnn::...&, ...)'" -> 'parseClip'.
  for (size_t at = 0; (at = text.find("in function '", at)) != std::string::npos;) {
    const size_t open = at + 13, close = text.find('\'', open);
    if (close == std::string::npos) break;
    std::string name = text.substr(open, close - open);
    if (const size_t paren = name.find('('); paren != std::string::npos) name.resize(paren);
    if (const size_t scope = name.rfind("::"); scope != std::string::npos) name = name.substr(scope + 2);
    if (const size_t space = name.rfind(' '); space != std::string::npos) name = name.substr(space + 1);
    text.replace(open, close - open, name);
    at = open + name.size();
  }
  std::string one_line;
  bool line_start = true;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      line_start = true;
      c = ' ';
    } else if (line_start && (c == '>' || c == ' ' || c == '\t')) {
      continue;  // the '>' quoting of nested lines
    } else {
      line_start = false;
    }
    if (c == '\t') c = ' ';
    if (!(c == ' ' && (one_line.empty() || one_line.back() == ' '))) one_line += c;
  }
  while (!one_line.empty() && one_line.back() == ' ') one_line.pop_back();
  return "OpenCV: " + one_line;
}

Expected<int> mat_type(DType dtype) {
  switch (dtype) {
    case DType::Float: return CV_32F;
    case DType::Double: return CV_64F;
    case DType::Float16: return CV_16F;
    case DType::UInt8: case DType::Bool: return CV_8U;
    case DType::Int8: return CV_8S;
    case DType::UInt16: return CV_16U;
    case DType::Int16: return CV_16S;
    case DType::Int32: case DType::Int64: return CV_32S;  // OpenCV 4 has no 64-bit integer Mat
    default: return make_error(std::string("OpenCV cannot take ") + std::string(dtype_name(dtype)) + " tensors");
  }
}

Expected<DType> tensor_dtype(int depth) {
  switch (depth) {
    case CV_32F: return DType::Float;
    case CV_64F: return DType::Double;
    case CV_16F: return DType::Float16;
    case CV_8U: return DType::UInt8;
    case CV_8S: return DType::Int8;
    case CV_16U: return DType::UInt16;
    case CV_16S: return DType::Int16;
    case CV_32S: return DType::Int32;
    default: return make_error("OpenCV returned a Mat of unknown depth " + std::to_string(depth));
  }
}

// A Mat holding the tensor's values (int64 narrowed to int32: an error when a value does not fit).
// OpenCV Mats have at least two dims, so scalars and vectors become 1x1 and 1xN.
Expected<cv::Mat> to_mat(const std::string& name, const Tensor& tensor) {
  REDUCE_ASSIGN(int type, mat_type(tensor.dtype()));
  std::vector<int> sizes;
  for (int64_t d : tensor.shape()) {
    if (d > INT32_MAX) return make_error("input '" + name + "' has a dimension too large for OpenCV");
    sizes.push_back(static_cast<int>(d));
  }
  while (sizes.size() < 2) sizes.insert(sizes.begin(), 1);
  cv::Mat mat(static_cast<int>(sizes.size()), sizes.data(), type);
  if (tensor.dtype() == DType::Int64) {
    int32_t* out = mat.ptr<int32_t>();
    const auto values = tensor.data<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] < INT32_MIN || values[i] > INT32_MAX)
        return make_error("input '" + name + "' holds an int64 value OpenCV cannot represent (int32 only)");
      out[i] = static_cast<int32_t>(values[i]);
    }
  } else if (tensor.byte_size()) {
    std::memcpy(mat.data, tensor.bytes().data(), tensor.byte_size());
  }
  return mat;
}

// The Mat as a tensor. Where the graph declares the value, its dtype is restored when OpenCV only
// changed the representation (int64/bool held as int32/uint8), and a declared rank below 2 is
// restored when the element count agrees (OpenCV 4 cannot represent it).
Expected<Tensor> to_tensor(const std::string& name, const cv::Mat& mat, const ValueInfo* declared) {
  if (mat.channels() != 1) return make_error("OpenCV returned a multi-channel Mat for '" + name + "'");
  cv::Mat dense = mat.isContinuous() ? mat : mat.clone();
  REDUCE_ASSIGN(DType dtype, tensor_dtype(dense.depth()));
  Shape shape;
  for (int i = 0; i < dense.dims; ++i) shape.push_back(dense.size[i]);
  const bool low_rank = declared && declared->type.is_tensor() && declared->type.has_shape && declared->type.dims.size() < 2;
  if (low_rank && declared->type.dims.empty() && dense.total() == 1) shape = {};
  if (low_rank && declared->type.dims.size() == 1 && dense.dims == 2 && (dense.size[0] == 1 || dense.size[1] == 1))
    shape = {static_cast<int64_t>(dense.total())};
  REDUCE_ASSIGN(Tensor tensor, Tensor::copy_of(dtype, shape, {reinterpret_cast<const std::byte*>(dense.data),
                                                              dense.total() * dense.elemSize()}));
  const auto want = declared && declared->type.is_tensor() ? dtype_from_onnx(declared->type.elem_type) : std::nullopt;
  if (want && (*want == DType::Int64 || *want == DType::Bool) && dtype == DType::Int32) {
    REDUCE_ASSIGN(Tensor wide, Tensor::allocate(*want, shape));
    const auto narrow = tensor.data<int32_t>();
    for (size_t i = 0; i < narrow.size(); ++i) {
      if (*want == DType::Int64) wide.mutable_data<int64_t>()[i] = narrow[i];
      else wide.mutable_data<uint8_t>()[i] = narrow[i] != 0;
    }
    return wide;
  }
  if (want == DType::Bool && dtype == DType::UInt8) return Tensor::copy_of(DType::Bool, shape, tensor.bytes());
  return tensor;
}

class OpenCvPrepared : public PreparedModel {
 public:
  explicit OpenCvPrepared(const Model& model) : model_(model) {}

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    std::lock_guard lock(mutex_);  // a cv::dnn::Net runs one forward at a time
    try {
      REDUCE_ASSIGN(cv::dnn::Net * net, net_for(outputs));
      for (const auto& [name, tensor] : inputs) {
        REDUCE_ASSIGN(cv::Mat mat, to_mat(name, tensor));
        net->setInput(mat, name);
      }
      std::vector<cv::Mat> mats;
      net->forward(mats, std::vector<cv::String>(outputs.begin(), outputs.end()));
      if (mats.size() != outputs.size())
        return make_error("OpenCV returned " + std::to_string(mats.size()) + " values for " +
                          std::to_string(outputs.size()) + " requested outputs");
      TensorMap values;
      for (size_t i = 0; i < outputs.size(); ++i) {
        REDUCE_ASSIGN(Tensor t, to_tensor(outputs[i], mats[i], model_.graph.find_value_info(outputs[i])));
        values.emplace(outputs[i], std::move(t));
      }
      return values;
    } catch (const cv::Exception& e) {
      return make_error(opencv_message(e));
    } catch (const std::exception& e) {
      return make_error(std::string("OpenCV: ") + e.what());
    }
  }

  // Reads the net for the graph outputs now, so that import errors show at prepare time.
  Status load() {
    try {
      auto net = net_for(requested_outputs(model_, {}));
      if (!net) return net.error();
      return {};
    } catch (const cv::Exception& e) {
      return make_error(opencv_message(e));
    }
  }

 private:
  // OpenCV only computes a value when some layer is an output: a net per set of requested outputs,
  // read from the model with those values as graph outputs.
  Expected<cv::dnn::Net*> net_for(const std::vector<std::string>& outputs) {
    for (auto& [names, net] : nets_)
      if (names == outputs) return &net;
    std::string bytes;
    if (are_graph_outputs(model_, outputs)) {
      REDUCE_ASSIGN(bytes, serialize_model(model_));
    } else {
      REDUCE_ASSIGN(Model variant, model_with_outputs(model_, outputs));
      REDUCE_ASSIGN(bytes, serialize_model(variant));
    }
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    nets_.emplace_back(outputs, std::move(net));
    return &nets_.back().second;
  }

  const Model& model_;
  std::mutex mutex_;
  std::list<std::pair<std::vector<std::string>, cv::dnn::Net>> nets_;
};

class OpenCvEngine : public Engine {
 public:
  std::string name() const override { return "opencv"; }
  std::string release() const override { return "OpenCV " CV_VERSION; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto prepared = std::make_unique<OpenCvPrepared>(model);
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_opencv_engine(const EngineEnvironment&) {
  return std::unique_ptr<Engine>(std::make_unique<OpenCvEngine>());
}

std::vector<std::pair<std::string, std::string>> engine_library_versions() { return {{"OpenCV", CV_VERSION}}; }

void configure_engine_libraries(int threads) {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  if (threads > 0) cv::setNumThreads(threads);
}

}  // namespace reduce

#else

namespace reduce {

Expected<std::unique_ptr<Engine>> make_opencv_engine(const EngineEnvironment&) {
  return Error{"opencv", "engine 'opencv' is not built in (OpenCV not found)"};
}

std::vector<std::pair<std::string, std::string>> engine_library_versions() { return {}; }

void configure_engine_libraries(int) {}

}  // namespace reduce

#endif
