// `reduce __worker FD` (hidden): serves isolated engines (`opencv`, `isolated:SPEC`) over socket FD.
#include <charconv>
#include <iostream>

#include "command.h"
#include "adapters/engine_spec.h"
#include "adapters/isolated_worker.h"
#include "adapters/library_settings.h"

namespace reduce::cli {

int worker_command(const std::vector<std::string>& args) {
  int fd = -1;
  if (args.size() != 1 || std::from_chars(args[0].data(), args[0].data() + args[0].size(), fd).ec != std::errc() ||
      fd < 0) {
    std::cerr << "error: __worker: expects one socket descriptor (it is started by isolated engines)\n";
    return kExitUsage;
  }
  // A worker serves one engine: its requests all carry the same thread count.
  return serve_engine_worker(fd, [](std::string_view spec, int threads) {
    configure_engine_libraries(threads);
    EngineEnvironment environment;
    environment.threads = threads;
    return make_engine(spec, environment);
  });
}

}  // namespace reduce::cli
