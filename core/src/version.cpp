// The releases of the libraries core was built with, from their headers.
#include "core/version.h"

#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

namespace reduce {

std::vector<std::pair<std::string, std::string>> core_library_versions() {
  return {{"protobuf", google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION)},
          {"onnx", ONNX_NAMESPACE::LAST_RELEASE_VERSION}};
}

}  // namespace reduce
