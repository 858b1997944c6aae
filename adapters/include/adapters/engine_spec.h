// Engine specs: the strings that name an engine everywhere (`ref`, `opt:fp16,fault=...`, `opencv`,
// `trt:fp16`, `ort:opt=disable`, `cmd:TEMPLATE`, `isolated:SPEC`), parsed once into an EngineSpec, and the one factory that turns
// a spec into an Engine.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/optimized.h"
#include "adapters/timing_cache.h"
#include "adapters/trt_preset.h"
#include "adapters/ort.h"

namespace reduce {

// The kinds of adapters/engines.def, in its order.
enum class EngineKind {
#define REDUCE_ENGINE(Kind, ...) Kind,
#include "adapters/engines.def"
#undef REDUCE_ENGINE
};

// What engines.def says of a kind.
struct EngineKindTraits {
  EngineKind kind;
  std::string_view name;   // as written in a spec
  bool in_process;         // runs in this process
  bool external;           // reads models with a parser not ours (a wrapper: see EngineSpec::external)
  bool gives_values;       // computes outputs; false: a check: script that decides by itself
  std::string_view usage;  // "opt[:OPTIONS]"
  std::string_view help;
};
const EngineKindTraits& engine_kind_traits(EngineKind kind);
// Every kind, in engines.def's order.
std::span<const EngineKindTraits> engine_kinds();

// A parsed engine spec. Build one with parse_engine_spec; to_string gives it back in canonical form.
struct EngineSpec {
  EngineKind kind = EngineKind::Ref;
  OptimizedOptions opt;                     // Opt: precision, faults, disabled passes
  TrtOptions trt;                           // Trt: precisions, FP32 nodes, tool
  OrtOptions ort;                           // Ort: optimization level, threads, execution provider
  std::string command;                      // Cmd, Check: the command template (never empty)
  Fp32Nodes fp32_nodes;                     // Cmd, Check: `[fp32=...]`, given as {fp32_nodes}, {fp32_nodes_file};
                                            // Fp16, Bf16: `[fp32=...]`, the nodes left in FP32
  std::shared_ptr<const EngineSpec> inner;  // Isolated: the spec the worker runs (never Isolated or Check);
                                            // Fp16, Bf16: the spec that runs the converted model

  const EngineKindTraits& traits() const { return engine_kind_traits(kind); }
  // Runs in this process (`ref`, `opt`, `opencv-inprocess`, and `fp16:` of those): a crash would end the tool.
  bool in_process() const { return traits().in_process && (!inner || inner->in_process()); }
  // Computes outputs to compare; false for a check: script, which decides by itself.
  bool gives_values() const { return innermost().traits().gives_values; }

  // The spec that computes: the wrapped one for `isolated:`, else this one.
  const EngineSpec& innermost() const { return inner ? inner->innermost() : *this; }
  // The engine that reads candidate models is not this project's own (a command, a check: script,
  // TensorRT, ONNX Runtime, OpenCV), isolated or not: it gets only models the ONNX checker accepts.
  bool external() const;
  // Reduced float precision of the optimized engine or of `trt` (bf16 when it is allowed, else fp16
  // when it is; int8 and tf32 alone count as FP32), FP32 for every other engine: picks the default
  // tolerances and the overflow limit.
  Precision precision() const;
  // The spec that decides the precision and the FP32 nodes: the first along the wrappers that takes
  // FP32 nodes (`fp16[fp32=...]:SPEC` itself), else the innermost.
  const EngineSpec& precision_owner() const;
  // The spec that runs the model a typed wrapper (`fp16:SPEC`, `bf16:SPEC`) converted, as it is:
  // past isolated: and the wrappers that convert, to what they wrap (`isolated:bf16:ref` -> ref);
  // the spec itself when no wrapper converts. The type itself is the engine's to say
  // (Engine::converts_models_to: `trt:fp16` converts only on TensorRT 11, known once settled).
  const EngineSpec& typed_model_runner() const;
  // The nodes the computing spec keeps in FP32: `opt:...,fp32=`, `trt:...,fp32=`, `cmd[fp32=...]:` or
  // `fp16[fp32=...]:` (empty: none).
  const Fp32Nodes& fp32() const;
  // Whether the engine runs nodes in FP32 on request: `opt` in fp16/bf16, `trt` with fp16, bf16 or
  // int8, or a cmd:/check: template that uses {fp32_nodes} or {fp32_nodes_file}. Other engines
  // compute everything in FP32 already.
  bool controls_precision() const;
};

// The spec with `nodes` kept in FP32 (replacing any set it had), for every kind that takes a set:
// opt, trt, cmd, check, and isolated: of those. Errors (one line naming the spec): ref, opencv.
Expected<EngineSpec> with_fp32_nodes(const EngineSpec& spec, Fp32Nodes nodes);

// Parses a spec. Errors are one line naming the spec (Error::where) and the problem: unknown
// engine, unknown option or fault (listing the known ones), options on an engine that takes none,
// an empty template, `isolated:` of an isolated engine or of a check: script; a `fp32=@FILE` that
// cannot be read or holds no name (Error::where is the file then).
Expected<EngineSpec> parse_engine_spec(std::string_view spec);
// The specs of a list of releases, `ort@1.14.0,ort@1.16.3,ort-web` (each with its own options:
// `ort@1.14.0:threads=1,ort@1.16.3:threads=1`; a bare `1.16.3` after `ort@1.14.0` is `ort@1.16.3`), for
// `reduce check`. A comma starts a new spec only before `ort`/`ort-web` (alone, or with @ or :) or
// a bare release number after a spec without options, so any other spec comes back whole.
std::vector<std::string> split_release_list(std::string_view text);
// The canonical spec string; parse_engine_spec(to_string(s)) gives s back, and a spec written in
// canonical form (`opt:fp16,fp32=N+M,fault=A+B,no-PASS`: precision, FP32 nodes, faults, passes;
// `cmd[fp32=N+M]:TEMPLATE`) prints unchanged. FP32 nodes read from a file are printed inline.
std::string to_string(const EngineSpec& spec);
bool operator==(const EngineSpec& a, const EngineSpec& b);

// What the environment gives engines: limits of every run, and for those that run outside this
// process (`cmd:`) or in a worker, their environment and program.
struct EngineEnvironment {
  // Per-run limit in seconds (0: none), for every engine: external runs are killed, in-process
  // engines stop between nodes (RunLimits). A run over it ends with ErrorKind::Timeout.
  double timeout_seconds = 0;
  // Bytes of computed values one in-process run may hold at once (0: none; RunLimits).
  uint64_t max_memory_bytes = 0;
  // Where in-process runs charge the values they hold (RunLimits::ledger); null: nowhere.
  std::shared_ptr<MemoryLedger> ledger;
  RunLimits limits() const { return {timeout_seconds, max_memory_bytes, ledger}; }
  // Extra environment variables for external runs ("NAME=VALUE"), e.g. a device pinned per slot.
  std::vector<std::string> env;
  // The oracle slot this environment serves (SlotPool: never two runs at once): `{slot}` in a
  // cmd:/check: template, for a device flag (trtexec --device={slot}).
  int slot = 0;
  // Threads an in-process engine may use for one run (0: all cores).
  int threads = 0;
  // The program that serves isolated engines (`isolated:SPEC`, `opencv`) as `PROGRAM __worker FD`:
  // the `reduce` executable. Empty: this process's own executable (/proc/self/exe).
  std::filesystem::path worker_program;
  // TensorRT timing caches every engine build of one reduction reuses (`trt`, `{timing_cache}` in a
  // cmd: template); null: none (--no-timing-cache).
  std::shared_ptr<TimingCachePool> timing_caches;
  // Where engine releases are installed on first use (--cache-dir); empty: reduce_cache_folder()'s
  // choice (REDUCE_CACHE_DIR, $XDG_CACHE_HOME/reduce, ~/.cache/reduce).
  std::filesystem::path cache_folder;
  // Where an engine says what it does on the user's machine (installing a release): one line,
  // without `note: `. Empty: stderr. A command's -q gives a function that drops it.
  std::function<void(const std::string&)> on_note;
  void note(const std::string& text) const;
};

// Builds the engine a spec names. Errors (one line) name the spec and the problem: a check: script
// (not an engine), engine not built in (e.g. `opencv` without OpenCV), a bad command template,
// `trt` without Polygraphy or trtexec on PATH (saying what to install).
Expected<std::unique_ptr<Engine>> make_engine(const EngineSpec& spec, const EngineEnvironment& environment = {});
// The same for a spec string (parse_engine_spec, then make_engine).
Expected<std::unique_ptr<Engine>> make_engine(std::string_view spec, const EngineEnvironment& environment = {});

// The spec with what its engines would ask of the environment at every make asked once now (the
// `trt` preset: TensorRT's major version, from the tool on PATH), wrappers included. It prints and
// compares as `spec` does; engines made from it, and from its with_fp32_nodes copies, do not ask
// again. A reduction settles its spec once, not once per candidate engine.
EngineSpec settled(const EngineSpec& spec, const EngineEnvironment& environment);

// The command an external engine of a preset runs (`trt`: the Polygraphy or trtexec line, with its
// placeholders), as a line for people; empty for other engines or when the tool is not found.
std::string preset_command_line(const EngineSpec& spec, const EngineEnvironment& environment = {});

// The engine kinds `make_engine` knows, with a one-line description each (for --help texts).
std::vector<std::pair<std::string, std::string>> engine_spec_help();
// "ref, opt[:OPTIONS], opencv, ...": every kind's usage, in engines.def's order (the --engine help
// of every command and the unknown-engine error, so that no list a user reads is written by hand).
std::string engine_kinds_usage(std::string_view separator = ", ");

}  // namespace reduce
