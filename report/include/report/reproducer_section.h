// report.md's Reproducer section: the reproducer's opsets, inputs, weights and nodes as text, one
// line each, to paste in an issue without opening the model in another tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"
#include "report/report.h"

namespace reduce {

// Node lines shown before "... K more nodes" (the same bound for weight lines).
inline constexpr size_t kReproducerLines = 40;

// A fenced text block: opset imports, then `input NAME: TYPE`, `weight NAME: TYPE, SUMMARY` (a few
// values, "all V" or MIN..MAX: never the values of a large weight), one line per node
// (`OUT: TYPE = Op<attributes>(inputs)  # node name`; bodies of If/Loop/Scan as their node count and
// op types), and `output NAME: TYPE`. Types are those of `inputs` and `outputs` (the tensors the run
// fed and produced), else ONNX shape inference's, else the model's declarations.
std::string reproducer_section(const Model& model, const std::vector<NamedTensor>& inputs,
                               const std::vector<NamedTensor>& outputs, size_t max_lines = kReproducerLines);

// How model.onnx stores its weights, when it is worth a word ("; ..." for the section's heading, or
// ""): filled weights made by ConstantOfShape nodes, weights still in a link of the original's file.
std::string reproducer_storage_note(const ReductionReport& report);

// "812 B", "12.3 KB", "128 MB", "6.4 GB" (powers of 1024).
std::string byte_size_text(uint64_t bytes);

}  // namespace reduce
