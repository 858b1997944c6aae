// A worker rank's life: greet rank 0, check the candidates it sends (each on its own thread, at
// most the oracle's slots at once) until it says stop.
#pragma once

#include "cluster/messages.h"
#include "cluster/mpi_link.h"
#include "oracle/oracle.h"

namespace reduce::cluster {

// `oracle` is null when this rank could not build it (`hello.error` says why): it then only waits
// for rank 0's stop, so that the job ends together.
void serve_checks(MpiLink& link, Oracle* oracle, const Hello& hello);

}  // namespace reduce::cluster
