// Linked into every test driver: the drivers, and every `reduce` they start, use the build's cache
// folder (REDUCE_ORT_DIR's parent, where the install fixtures put the releases) unless the caller
// chose one; reduce's own default is the user's cache (adapters/cache_folder.h).
#include <cstdlib>
#include <filesystem>

namespace {

const bool kCacheFolderSet = [] {
  setenv("REDUCE_CACHE_DIR", std::filesystem::path(REDUCE_ORT_DIR).parent_path().c_str(), /*overwrite=*/0);
  return true;
}();

}  // namespace
