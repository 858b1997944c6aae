// The user's cache folder for downloaded engine releases (cache_folder.h).
#include "adapters/cache_folder.h"

#include <cstdlib>

namespace reduce {

std::string environment_value(const std::string& name, const std::vector<std::string>& env) {
  const std::string prefix = name + "=";
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->compare(0, prefix.size(), prefix) == 0) return it->substr(prefix.size());
  const char* value = std::getenv(name.c_str());
  return value ? value : "";
}

std::filesystem::path reduce_cache_folder(const std::filesystem::path& chosen, const std::vector<std::string>& env) {
  if (!chosen.empty()) return chosen;
  if (auto dir = environment_value("REDUCE_CACHE_DIR", env); !dir.empty()) return dir;
  // The XDG spec: a relative $XDG_CACHE_HOME is invalid and is ignored.
  if (auto xdg = environment_value("XDG_CACHE_HOME", env); !xdg.empty() && xdg[0] == '/')
    return std::filesystem::path(xdg) / "reduce";
  if (auto home = environment_value("HOME", env); !home.empty()) return std::filesystem::path(home) / ".cache" / "reduce";
  std::error_code ec;
  const auto temp = std::filesystem::temp_directory_path(ec);
  return (ec ? std::filesystem::path("/tmp") : temp) / "reduce-cache";
}

}  // namespace reduce
