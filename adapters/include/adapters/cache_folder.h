// Where reduce keeps what it downloads (engine releases from npm): the user's cache, not the tree it
// was built in, so that an installed `reduce` runs from any folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace reduce {

// The cache folder: `chosen` when set (--cache-dir), else REDUCE_CACHE_DIR (from `env`, the engine's
// extra "NAME=VALUE" entries, then this process's environment), else $XDG_CACHE_HOME/reduce (when
// absolute, as the XDG base directory spec asks), else $HOME/.cache/reduce, else reduce-cache in the
// temporary folder. Not created here: what installs into it creates its own folder.
std::filesystem::path reduce_cache_folder(const std::filesystem::path& chosen = {},
                                          const std::vector<std::string>& env = {});

// The value of NAME in `env` ("NAME=VALUE", the last one wins), else in this process's environment;
// empty when unset or empty.
std::string environment_value(const std::string& name, const std::vector<std::string>& env = {});

}  // namespace reduce
