// The build functions of the corpus families, one per file in this folder (listed in families.def).
#pragma once

#include "../bodies.h"
#include "../corpus_model.h"

namespace reduce::corpus {

#define CORPUS_FAMILY(fault, stem, engine, kind, build, description) void build(GraphBuilder& b, size_t target, Random& rng);
#include "../families.def"
#undef CORPUS_FAMILY
#define PRECISION_FAMILY(name, stem, engine, kind, build, description) void build(GraphBuilder& b, size_t target, Random& rng);
#include "../precision.def"
#undef PRECISION_FAMILY
#define QUANTIZED_FAMILY(name, stem, scheme, build, description) void build(GraphBuilder& b, size_t target, Random& rng);
#include "../quantized.def"
#undef QUANTIZED_FAMILY

}  // namespace reduce::corpus
