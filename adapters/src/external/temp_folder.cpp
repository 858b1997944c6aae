// TempFolder: mkdtemp under std::filesystem::temp_directory_path, recursive removal at the end.
#include "external/temp_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace reduce {

namespace fs = std::filesystem;

// A folder that cannot be made is the tool's problem (TMPDIR missing, read-only or full), never
// an engine's verdict: ErrorKind::Setup, naming the folder.
Expected<TempFolder> TempFolder::create(const std::string& prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) {
    const char* tmpdir = std::getenv("TMPDIR");
    return Error{std::string("temporary folder ") + (tmpdir ? tmpdir : "/tmp") + " (TMPDIR)", ec.message(), ErrorKind::Setup};
  }
  std::string pattern = (base / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    return Error{pattern, std::string("cannot create folder: ") + std::strerror(errno), ErrorKind::Setup};
  return TempFolder(fs::path(pattern));
}

TempFolder& TempFolder::operator=(TempFolder&& other) noexcept {
  if (this != &other) {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

}  // namespace reduce
