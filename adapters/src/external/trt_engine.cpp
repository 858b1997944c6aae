// make_trt_engine: the `trt` preset as a command engine running the Polygraphy or trtexec found on PATH.
#include "adapters/process.h"
#include "factories/engine_factories.h"

namespace reduce {

std::string path_variable(const EngineEnvironment& environment) {
  for (const auto& entry : environment_with(environment.env))
    if (entry.rfind("PATH=", 0) == 0) return entry.substr(5);
  return "";
}

Expected<TrtCommand> trt_command_in(const TrtOptions& options, const EngineEnvironment& environment) {
  const auto probe = [&environment](TrtTool tool, const std::filesystem::path& program) {
    return probe_trt_version(tool, program, environment.env);
  };
  REDUCE_ASSIGN(TrtCommand command, trt_command(options, path_variable(environment), probe));
  if (environment.timing_caches) {
    const auto cache = trt_timing_cache_arguments(command.tool);
    command.argv.insert(command.argv.end(), cache.begin(), cache.end());
  }
  return command;
}

Expected<std::unique_ptr<Engine>> make_trt_engine(const TrtOptions& options, const EngineEnvironment& environment) {
  const std::string name = to_string(options).empty() ? "trt" : "trt:" + to_string(options);
  auto command = trt_command_in(options, environment);
  if (!command) return Error{name, command.error().what};
  if (command->version >= 11) {
    // Strongly typed: the tool runs the model as it is typed; fp16/bf16 convert it first, the
    // fp32= nodes kept in FP32 (no layer precision flags exist any more).
    CommandSetup setup;
    setup.name = name;
    setup.tokens = std::move(command->argv);
    REDUCE_ASSIGN(auto typed_as_given, make_command_engine(std::move(setup), environment));
    if (!options.fp16 && !options.bf16) return typed_as_given;
    return make_typed_engine(options.bf16 ? DType::BFloat16 : DType::Float16, options.fp32_nodes,
                             std::move(typed_as_given), name);
  }
  // Every name of the set is checked now: a name the tool cannot take is a usage error, never a
  // failing run of a candidate that happens to hold the node.
  if (auto all = trt_fp32_arguments(command->tool, options.fp32_nodes.names); !all) return Error{name, all.error().what};
  CommandSetup setup;
  setup.name = name;
  setup.tokens = std::move(command->argv);
  setup.fp32_nodes = options.fp32_nodes;
  setup.fp32_arguments = [tool = command->tool](const std::vector<std::string>& nodes) {
    return trt_fp32_arguments(tool, nodes);
  };
  return make_command_engine(std::move(setup), environment);
}

}  // namespace reduce
