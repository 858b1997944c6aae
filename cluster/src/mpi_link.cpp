// The MPI link's thread: nonblocking sends and probes in one loop, so that no caller ever waits
// inside MPI (a send to a rank that died would never return).
#include "cluster/mpi_link.h"

#include <mpi.h>
// LeakSanitizer comes with AddressSanitizer: GCC says __SANITIZE_ADDRESS__, clang __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define REDUCE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDUCE_LSAN 1
#endif
#endif
#if REDUCE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <list>

#include "cluster/messages.h"

namespace reduce::cluster {

namespace {

// A send in flight owns its bytes until MPI is done with them.
struct InFlight {
  MPI_Request request = MPI_REQUEST_NULL;
  std::unique_ptr<std::string> bytes;
  int heartbeat_to = -1;  // the peer, for a heartbeat
};

// Open MPI keeps what MPI_Init and its calls allocate until exit, and frees little of it in
// MPI_Finalize: LeakSanitizer is told to ignore allocations made inside MPI calls (ours elsewhere
// are still checked). Only sanitized builds know LeakSanitizer.
struct InsideMpi {
#if REDUCE_LSAN
  InsideMpi() { __lsan_disable(); }
  ~InsideMpi() { __lsan_enable(); }
#endif
};

// One MPI call, its allocations ignored.
template <typename Call>
int mpi(Call&& call) {
  InsideMpi inside;
  return call();
}

// Sends still pending this long after the link stops are to ranks that are gone.
constexpr auto kFlushLimit = std::chrono::seconds(3);
// The link's thread turns every millisecond or so: a gap this long means this process was stopped
// (or starved), not that its peers fell silent.
constexpr auto kStalled = std::chrono::milliseconds(500);

}  // namespace

std::unique_ptr<MpiLink> MpiLink::start(std::chrono::milliseconds heartbeat) {
  std::unique_ptr<MpiLink> link(new MpiLink());
  {
    InsideMpi inside;
    int provided = 0;
    // Calls come from the link's thread only (and MPI_Init/Finalize from the caller's): serialized.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    // A rank that died must not abort the ones left: errors come back as codes.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &link->rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &link->size_);
  }
  link->heartbeat_ = heartbeat;
  link->looped_ = std::chrono::steady_clock::now();
  link->heard_.assign(static_cast<size_t>(link->size_), link->looped_);
  if (link->rank_ > 0) link->heartbeat_peers_ = {0};
  for (int peer = 1; link->rank_ == 0 && peer < link->size_; ++peer) link->heartbeat_peers_.push_back(peer);
  link->thread_ = std::thread([l = link.get()] { l->run(); });
  return link;
}

MpiLink::~MpiLink() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  thread_.join();
#if REDUCE_LSAN
  // The leak check runs now rather than at exit: what MPI_Finalize unloads (PMIx's event thread
  // keeps a few bytes that its unloaded component owned) would be reported from an unknown module
  // that no suppression can name. Everything a reduction allocated is released by now.
  __lsan_do_leak_check();
#endif
  InsideMpi inside;
  if (finalize_.load()) MPI_Finalize();
}

void MpiLink::send(int peer, int tag, std::string bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  outgoing_.push_back({peer, tag, std::move(bytes)});
}

std::chrono::steady_clock::time_point MpiLink::heard(int peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - looped_ > kStalled) return now;  // the link's thread has not caught up yet
  return heard_.at(static_cast<size_t>(peer));
}

std::optional<Envelope> MpiLink::receive(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!received_.wait_for(lock, wait, [this] { return !incoming_.empty(); })) return std::nullopt;
  Envelope e = std::move(incoming_.front());
  incoming_.pop_front();
  return e;
}

void MpiLink::run() {
  std::list<InFlight> in_flight;
  std::vector<bool> heartbeat_pending(static_cast<size_t>(size_), false);  // by peer
  auto next_heartbeat = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> flush_until;
  while (true) {
    std::deque<Envelope> to_send;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      to_send.swap(outgoing_);
      if (stopping_ && !flush_until) flush_until = now + kFlushLimit;
      if (now - looped_ > kStalled)
        for (auto& h : heard_) h = std::max(h, now);
      looped_ = now;
    }
    if (heartbeat_.count() > 0 && now >= next_heartbeat && !flush_until) {
      for (int peer : heartbeat_peers_)
        if (!heartbeat_pending[static_cast<size_t>(peer)]) to_send.push_back({peer, kHeartbeat, {}});
      next_heartbeat = now + heartbeat_;
    }
    for (auto& e : to_send) {
      InFlight f{MPI_REQUEST_NULL, std::make_unique<std::string>(std::move(e.bytes)),
                 e.tag == kHeartbeat ? e.peer : -1};
      if (mpi([&] {
            return MPI_Isend(f.bytes->data(), static_cast<int>(f.bytes->size()), MPI_BYTE, e.peer, e.tag, MPI_COMM_WORLD,
                             &f.request);
          }) == MPI_SUCCESS) {
        if (f.heartbeat_to >= 0) heartbeat_pending[static_cast<size_t>(f.heartbeat_to)] = true;
        in_flight.push_back(std::move(f));
      }
    }
    for (auto it = in_flight.begin(); it != in_flight.end();) {
      int done = 0;
      // An error completes the request too: the peer is gone, and rank 0 finds out by its silence.
      if (mpi([&] { return MPI_Test(&it->request, &done, MPI_STATUS_IGNORE); }) != MPI_SUCCESS || done) {
        if (it->heartbeat_to >= 0) heartbeat_pending[static_cast<size_t>(it->heartbeat_to)] = false;
        it = in_flight.erase(it);
      } else {
        ++it;
      }
    }
    if (flush_until && (in_flight.empty() || now > *flush_until)) break;
    int arrived = 0;
    MPI_Status status;
    if (mpi([&] { return MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status); }) == MPI_SUCCESS &&
        arrived) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      Envelope e{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<size_t>(count), '\0')};
      mpi([&] {
        return MPI_Recv(e.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
      });
      std::lock_guard<std::mutex> lock(mutex_);
      if (e.peer >= 0 && e.peer < size_) heard_[static_cast<size_t>(e.peer)] = std::chrono::steady_clock::now();
      if (e.tag != kHeartbeat) {
        incoming_.push_back(std::move(e));
        received_.notify_all();
      }
      continue;
    }
    // Idle: a millisecond is far below any engine run, and keeps an idle rank's CPU use negligible.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Sends to a rank that is gone never complete; they are left to MPI_Finalize.
  for (auto& f : in_flight) mpi([&] { return MPI_Request_free(&f.request); });
}

}  // namespace reduce::cluster
