// The optimized engine's faults as a type: `enum class Fault` and its name/help table, from faults.def.
// Header-only and constexpr, so tools that only name faults (the corpus generator) need no engine.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace reduce {

enum class Fault : unsigned char {
#define REDUCE_FAULT(id, name, help) id,
#include "engine/faults.def"
#undef REDUCE_FAULT
};

struct FaultInfo {
  Fault fault;
  std::string_view name;  // as written in `opt:fault=NAME`
  std::string_view help;
};

inline constexpr FaultInfo kFaultTable[] = {
#define REDUCE_FAULT(id, name, help) {Fault::id, name, help},
#include "engine/faults.def"
#undef REDUCE_FAULT
};

// Every fault, in the order of faults.def.
constexpr std::span<const FaultInfo> faults() { return kFaultTable; }

constexpr std::string_view fault_name(Fault fault) { return kFaultTable[static_cast<size_t>(fault)].name; }

constexpr std::optional<Fault> find_fault(std::string_view name) {
  for (const FaultInfo& f : kFaultTable)
    if (f.name == name) return f.fault;
  return std::nullopt;
}

// "broadcast-batch1, attention-unstable-softmax, ...": for error messages that list the known faults.
inline std::string fault_names() {
  std::string out;
  for (const FaultInfo& f : kFaultTable) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

}  // namespace reduce
