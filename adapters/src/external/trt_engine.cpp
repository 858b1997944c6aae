// make_trt_engine: the `trt` preset as a command engine running the Polygraphy or trtexec found on PATH.
#include "adapters/process.h"
#include "spec/engine_factories.h"

namespace reduce {

std::string path_variable(const EngineEnvironment& environment) {
  for (const auto& entry : environment_with(environment.env))
    if (entry.rfind("PATH=", 0) == 0) return entry.substr(5);
  return "";
}

Expected<std::unique_ptr<Engine>> make_trt_engine(const TrtOptions& options, const EngineEnvironment& environment) {
  const std::string name = to_string(options).empty() ? "trt" : "trt:" + to_string(options);
  auto command = trt_command(options, path_variable(environment));
  if (!command) return Error{name, command.error().what};
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
