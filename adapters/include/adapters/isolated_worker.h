// The worker side of isolated engines: a process that runs engine requests so crashes cannot end the tool.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "core/status.h"
#include "engine/engine.h"
#include "adapters/engine_spec.h"

namespace reduce {

// Builds the engine a request names (make_engine in `reduce __worker`; tests add engines that
// crash on purpose).
using EngineFactory = std::function<Expected<std::unique_ptr<Engine>>(std::string_view spec, int threads)>;

// `isolated:SPEC`: runs `worker_spec` in worker processes (environment.worker_program, default this
// executable), so crashes and hangs become errors. The worker builds the spec, so it may name engines
// only that worker knows (a test worker's crashing engines); an unknown one fails at prepare().
// `release`: what Engine::release() says (the worker's engine's, when the caller knows it).
Expected<std::unique_ptr<Engine>> make_isolated_engine(std::string_view worker_spec, const EngineEnvironment& environment,
                                                       std::string release = {});

// Answers requests arriving on `socket_fd` (a Unix stream socket) until it is closed: loads models
// (kept prepared between requests), runs them on input folders and writes the outputs to folders.
// Returns the process exit code. The protocol is private to engine/src/isolated.
int serve_engine_worker(int socket_fd, const EngineFactory& make);

}  // namespace reduce
