// TempFolder: a fresh private folder (mkdtemp) removed with everything in it when the object dies.
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"

namespace reduce {

class TempFolder {
 public:
  // Creates <temp dir>/<prefix>XXXXXX, readable only by this user.
  static Expected<TempFolder> create(const std::string& prefix);
  TempFolder(TempFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempFolder& operator=(TempFolder&& other) noexcept;
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder();

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  explicit TempFolder(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace reduce
