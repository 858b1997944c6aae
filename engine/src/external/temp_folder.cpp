// TempFolder: mkdtemp under std::filesystem::temp_directory_path, recursive removal at the end.
#include "external/temp_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

namespace reduce {

namespace fs = std::filesystem;

Expected<TempFolder> TempFolder::create(const std::string& prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) return Error{"temporary folder", ec.message()};
  std::string pattern = (base / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) return Error{pattern, std::string("cannot create folder: ") + std::strerror(errno)};
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
