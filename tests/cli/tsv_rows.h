// Reading the corpus manifests (tab-separated, a header line first) in the CLI tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace reduce::testing {

struct TsvFile {
  std::string header;
  std::vector<std::vector<std::string>> rows;  // the columns of each line after the header
};

inline TsvFile read_tsv(const std::filesystem::path& path) {
  TsvFile out;
  std::ifstream in(path);
  std::getline(in, out.header);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cols;
    std::stringstream l(line);
    for (std::string c; std::getline(l, c, '\t');) cols.push_back(c);
    out.rows.push_back(std::move(cols));
  }
  return out;
}

}  // namespace reduce::testing
