// The order of a batch's reductions: manifest order, or largest first over several ranks.
#include "batch/order.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace reduce {

std::vector<size_t> reduction_order(const std::vector<BatchRow>& rows, bool spread_over_ranks) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].already_done) todo.push_back(i);
  if (!spread_over_ranks) return todo;
  // file_size gives uintmax_t(-1) for a file it cannot read: the largest.
  std::vector<uintmax_t> bytes(rows.size());
  for (size_t i : todo) {
    std::error_code ec;
    bytes[i] = std::filesystem::file_size(rows[i].item.model, ec);
  }
  std::stable_sort(todo.begin(), todo.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  return todo;
}

}  // namespace reduce
