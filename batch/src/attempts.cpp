// Per-try bundle folders of `reduce batch` under MPI, created and moved in place by rank 0.
#include "batch/attempts.h"

namespace reduce {

namespace fs = std::filesystem;

fs::path make_attempt_folder(const fs::path& bundle, int attempt) {
  const std::string base = "." + bundle.filename().string() + ".attempt-" + std::to_string(attempt);
  fs::path folder = bundle.parent_path() / base;
  std::error_code ec;
  // create_directory says false for a folder that exists: each try gets one nobody else has.
  for (int k = 2; !fs::create_directory(folder, ec) && !ec && k < 1000; ++k)
    folder = bundle.parent_path() / (base + "-" + std::to_string(k));
  return folder;
}

std::string accept_attempt_folder(const fs::path& attempt, const fs::path& bundle, const std::string& status) {
  std::error_code ec;
  if (!fs::exists(attempt, ec)) return status;  // never made: the reduction said why
  if (fs::is_empty(attempt, ec)) {
    fs::remove(attempt, ec);
    return status;
  }
  fs::remove_all(bundle, ec);
  if (!ec) fs::rename(attempt, bundle, ec);
  if (ec) return "error (cannot move " + attempt.string() + " to " + bundle.string() + ": " + ec.message() + ")";
  return status;
}

}  // namespace reduce
