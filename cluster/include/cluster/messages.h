// What ranks say to each other: a candidate to check, the verdict, a worker's greeting. Bytes are
// CBOR (exact doubles, NaN and infinities included); a candidate travels as its journal record
// (session/journal.h): node indices and edit names, a few hundred bytes, never a model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/candidate.h"
#include "core/status.h"
#include "oracle/oracle.h"

namespace reduce::cluster {

// MPI tags, one per message kind.
enum Tag : int {
  kHello = 1,      // worker -> rank 0: Hello
  kCheck = 2,      // rank 0 -> worker: id + candidate
  kCancel = 3,     // rank 0 -> worker: id (the check is stale: kill its engine run)
  kVerdict = 4,    // worker -> rank 0: id + verdict
  kHeartbeat = 5,  // worker -> rank 0 and rank 0 -> worker, every heartbeat period: still alive
  kStop = 6,       // rank 0 -> worker: the reduction is over (payload: encode_stop)
  kWant = 7,       // batch, worker -> rank 0: the next model, please
  kWork = 8,       // batch, rank 0 -> worker: an Attempt at a model (or none: stop)
  kDone = 9,       // batch, worker -> rank 0: the Attempt + the model's status
};

// A worker's greeting once its oracle is ready (or could not be built): rank 0 sends it checks
// only when `ready`, and only when its model has as many nodes as rank 0's (control flow is
// flattened on every rank: a flattening that went another way must not get candidates).
struct Hello {
  bool ready = false;
  std::string error;  // why not ready
  int slots = 0;
  uint64_t model_nodes = 0;
};

std::string encode_hello(const Hello& hello);
Expected<Hello> decode_hello(const std::string& bytes);

std::string encode_check(uint64_t id, const Candidate& candidate);
Expected<std::pair<uint64_t, Candidate>> decode_check(const std::string& bytes);

std::string encode_verdict(uint64_t id, const Verdict& verdict);
Expected<std::pair<uint64_t, Verdict>> decode_verdict(const std::string& bytes);

std::string encode_id(uint64_t id);
Expected<uint64_t> decode_id(const std::string& bytes);

// Stop, and whether a rank was lost (then no rank may call MPI_Finalize: MpiLink::skip_finalize).
std::string encode_stop(bool rank_lost);
bool decode_stop(const std::string& bytes);

// One try at a batch item. A rank lost while holding an item has the item tried once more elsewhere:
// `number` tells the tries apart, and `place` (chosen by rank 0, e.g. a folder of its own) keeps
// a lost try that still runs from writing where the next one does.
struct Attempt {
  uint64_t item = 0;
  int number = 1;
  std::string place;
  bool operator==(const Attempt&) const = default;
};

// kWork: the attempt, or none (nothing left: the worker stops asking).
std::string encode_work(const std::optional<Attempt>& attempt);
Expected<std::optional<Attempt>> decode_work(const std::string& bytes);

// kDone: the attempt and its result.
std::string encode_done(const Attempt& attempt, const std::string& status);
Expected<std::pair<Attempt, std::string>> decode_done(const std::string& bytes);

}  // namespace reduce::cluster
