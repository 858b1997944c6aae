// A worker rank's life: greet rank 0, check the candidates it sends (each on its own thread, at
// most the oracle's slots at once) until it says stop, or until it is silent for the rank timeout.
#pragma once

#include <chrono>

#include "cluster/messages.h"
#include "cluster/mpi_link.h"
#include "oracle/oracle.h"

namespace reduce::cluster {

// `oracle` is null when this rank could not build it (`hello.error` says why): it then only waits
// for rank 0's stop, so that the job ends together. False when rank 0 sent nothing (not even a
// heartbeat) for `rank_timeout`: the checks still running were cancelled (their engine runs killed)
// and this rank must not wait for MPI_Finalize (MpiLink::skip_finalize is set).
bool serve_checks(MpiLink& link, Oracle* oracle, const Hello& hello, std::chrono::milliseconds rank_timeout);

}  // namespace reduce::cluster
