// reproduction_files: the kind's scripts (engines.def), through wrappers to the kind that computes.
// Here, not in reproduction/: the kinds call reproduction/'s script writers, this asks the kinds.
#include "adapters/reproduction.h"
#include "kinds/engine_kinds.h"
#include "reproduction/scripts.h"

namespace reduce {

std::vector<ReproductionFile> reproduction_files(const EngineSpec& spec, const ReproductionContext& context) {
  for (const EngineSpec* s = &spec; s; s = s->inner.get())
    if (const auto reproduce = kinds::ops(s->kind).reproduce) {
      std::vector<ReproductionFile> files = reproduce(*s, context);
      // repro.py and repro.mjs read inputs/ and expected/: tensors they cannot read leave only what does not.
      if (!context.script_data)
        std::erase_if(files, [](const ReproductionFile& f) { return f.name == "repro.py" || f.name == "repro.mjs"; });
      return files.empty() ? repro::reduce_check_scripts(spec, context) : files;
    }
  return repro::reduce_check_scripts(spec, context);
}

}  // namespace reduce
