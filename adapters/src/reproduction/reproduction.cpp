// reproduction_files: the kind's scripts (engines.def), through wrappers to the kind that computes.
#include "adapters/reproduction.h"

#include <nlohmann/json.hpp>

#include "kinds/engine_kinds.h"
#include "reproduction/scripts.h"

namespace reduce {

const std::vector<std::string>& reproduction_file_names() {
  static const std::vector<std::string> names{"repro.py", "repro.mjs", "repro.sh", "compare.py"};
  return names;
}

bool reproduction_needs_polygraphy_files(const EngineSpec& spec) {
  const EngineSpec& computing = spec.innermost();
  return computing.kind == EngineKind::Trt || computing.command.find("{inputs_json}") != std::string::npos;
}

std::vector<ReproductionFile> reproduction_files(const EngineSpec& spec, const ReproductionContext& context) {
  for (const EngineSpec* s = &spec; s; s = s->inner.get())
    if (const auto reproduce = kinds::ops(s->kind).reproduce) {
      std::vector<ReproductionFile> files = reproduce(*s, context);
      // repro.py and repro.mjs read inputs.npz and expected.npz: without them, only what does not.
      if (!context.npz)
        std::erase_if(files, [](const ReproductionFile& f) { return f.name == "repro.py" || f.name == "repro.mjs"; });
      return files.empty() ? repro::reduce_check_scripts(spec, context) : files;
    }
  return repro::reduce_check_scripts(spec, context);
}

namespace repro {

std::string spec_in_comment(const EngineSpec& spec) {
  std::string text = to_string(spec);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string config_json(const ReproductionContext& c, const std::string& extra_key, const std::string& extra_json) {
  nlohmann::ordered_json j;
  j["model"] = c.model_file;
  j["inputs"] = c.inputs;
  j["outputs"] = nlohmann::ordered_json::array();
  for (const auto& o : c.outputs) j["outputs"].push_back({{"name", o.name}, {"atol", o.atol}, {"rtol", o.rtol}});
  j["stat"] = c.stat;
  j["quantile"] = c.quantile;
  j["failure"] = c.failure;
  if (!extra_key.empty()) j[extra_key] = nlohmann::ordered_json::parse(extra_json);
  return j.dump(-1, ' ', true);
}

}  // namespace repro

}  // namespace reduce
