// Folders of the tries at a batch model in an MPI job: each try reduces into a hidden folder of its
// own, and the try that counts is moved to the model's bundle folder by rank 0, so a rank that was
// dropped but still runs can never write into the bundle that another rank's try produced.
#pragma once

#include <filesystem>
#include <string>

namespace reduce {

// Creates OUT/.<stem>.attempt-<N> (or, when that exists from an earlier job, the first free
// OUT/.<stem>.attempt-<N>-<K>) and returns it; on failure, the path that could not be made (the
// reduction then fails on it and says why).
std::filesystem::path make_attempt_folder(const std::filesystem::path& bundle, int attempt);

// Replaces `bundle` (an earlier, incomplete bundle of the model) by the try's folder; `status`, or
// an error when the folder cannot be moved. An empty try folder (the reduction wrote nothing) is removed.
std::string accept_attempt_folder(const std::filesystem::path& attempt, const std::filesystem::path& bundle,
                                  const std::string& status);

}  // namespace reduce
