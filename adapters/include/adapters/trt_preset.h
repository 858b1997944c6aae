// The `trt[:OPTIONS]` engine spec: TensorRT run through Polygraphy or trtexec, whichever is on PATH,
// as a command engine (docs/tensorrt.md). Options: precisions `fp16`, `bf16`, `int8`, `fp8`, `int4`, `tf32`; nodes
// kept in FP32 (`fp32=NODE+NODE|@FILE`); `tool=polygraphy|trtexec` to choose the tool.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/fp32_nodes.h"
#include "adapters/script_words.h"  // shell_command_line

namespace reduce {

enum class TrtTool { Auto, Polygraphy, Trtexec };

struct TrtOptions {
  // Precisions TensorRT may use besides FP32. Without tf32 both tools run FP32 layers without TF32
  // (Polygraphy's default; trtexec gets --noTF32), so that `trt` alone is plain FP32.
  // One member per line of trt_precisions.def: fp16, bf16, int8, fp8 (TensorRT 10: --fp8, both tools),
  // int4 (TensorRT 10: trtexec's --int4; Polygraphy has no such flag).
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized) bool member = false;
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  bool tf32 = false;
  Fp32Nodes fp32_nodes;  // layers kept in FP32 under a precision constraint (`obey`)
  TrtTool tool = TrtTool::Auto;
  // TensorRT's major version (`version=10|11`); 0: asked of the tool (trtexec's banner
  // `[TensorRT vMMmmpp]`, Polygraphy's Python `tensorrt.__version__`), 10 when it does not say.
  // From 11 on the graph is built as typed: no precision flags, fp16/bf16 convert the model at the
  // ONNX level with the fp32= nodes kept in FP32, int8, fp8 and int4 are refused (explicit
  // quantization only).
  int version = 0;
  // The version the tool said when the spec was settled (`settled`): not printed, asked no more.
  int detected_version = 0;

  bool reduced_precision() const {
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized) \
  if (member) return true;
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
    return false;
  }
  // The quantized precisions set, as the option words ("int8", "fp8", "int4").
  std::vector<std::string> quantized_words() const;
};

// Every option word `trt:` takes, as its errors list them: the precisions of trt_precisions.def,
// then tf32, fp32=, tool= and version=.
std::string trt_option_words();
// The builder's precision flags of `options` for `tool` (never Auto), the words of
// trt_precisions.def: none from TensorRT 11 on (the precision is the graph's), none a tool lacks.
std::vector<std::string> trt_precision_flags(const TrtOptions& options, TrtTool tool, int version);

// Parses the options after `trt:` (a comma list). Errors are one line: an unknown option (listing
// the known ones), an unknown tool, a bad fp32= set (Error::where is its file for @FILE).
Expected<TrtOptions> parse_trt_options(std::string_view options);
// Canonical form: `fp16,bf16,int8,fp8,int4,tf32,fp32=A+B,tool=T,version=V` (only those set), empty
// for the defaults.
std::string to_string(const TrtOptions& options);

// The command the preset runs: the program found on PATH and its arguments, with the placeholders
// of a command template ({model}; {inputs_json}, {outputs_json} for Polygraphy; {trtexec_inputs},
// {trtexec_output_json} and {trtexec_shapes} (--shapes for dynamic inputs) for trtexec). The FP32 layer flags are not in it: they depend on the model
// run (trt_fp32_arguments).
struct TrtCommand {
  TrtTool tool = TrtTool::Polygraphy;  // never Auto
  std::vector<std::string> argv;
  int version = 10;                    // TensorRT's major version the command was built for
};

// Finds the tool in the folders of `path_variable` (a PATH value): the one `options.tool` names, or
// Polygraphy, else trtexec. Errors (one line) say what to install.
// The version is options.version, else `detect_version(tool, program)` (0: unknown, taken as 10).
// From TensorRT 11 on no precision flag is passed; int8, fp8, int4 (and fp16 with bf16) are errors.
// int4 through Polygraphy is an error on every version (it has no --int4; tool=trtexec does).
using TrtVersionProbe = std::function<int(TrtTool tool, const std::filesystem::path& program)>;
Expected<TrtCommand> trt_command(const TrtOptions& options, std::string_view path_variable,
                                 const TrtVersionProbe& detect_version = {});

// TensorRT's major version as the tool says it: trtexec's banner line (`&&&& RUNNING
// TensorRT.trtexec [TensorRT v110400] ...`, printed by `trtexec --help` too), or `tensorrt.__version__`
// ("10.3.0") printed by the Python of Polygraphy's script. 0 when `output` holds neither.
int trt_major_version(TrtTool tool, std::string_view output);
// Runs the tool to ask (trtexec --help; the interpreter of polygraphy's #! line with
// `-c "import tensorrt; print(tensorrt.__version__)"`), at most `timeout_seconds`; 0 when it does not say.
int probe_trt_version(TrtTool tool, const std::filesystem::path& program, const std::vector<std::string>& env,
                      double timeout_seconds = 60);

// The flags that make a build read and update the timing cache `{timing_cache}` (a placeholder the
// command engine fills with a file lent for that build): trtexec's --timingCacheFile, Polygraphy's
// --load-timing-cache and --save-timing-cache.
std::vector<std::string> trt_timing_cache_arguments(TrtTool tool);

// The flags that keep `nodes` in FP32 with `tool`, appended to argv as they are (node names are
// model data: never split, never filled as placeholders): Polygraphy `--precision-constraints obey
// --layer-precisions N:float32 ...`, trtexec `--precisionConstraints=obey --layerPrecisions=N:fp32,...`.
// None when `nodes` is empty. Errors name a node the tool's syntax cannot express (trtexec: a `,`
// or `'`; Polygraphy: a leading `-`, which its argument parser would take for a flag).
Expected<std::vector<std::string>> trt_fp32_arguments(TrtTool tool, const std::vector<std::string>& nodes);

std::string_view trt_tool_name(TrtTool tool);

}  // namespace reduce
