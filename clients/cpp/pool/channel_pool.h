// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool: N gRPC C++ channels to one target, each with its own
// subchannel (so its own TCP connection), behind one grpc::ChannelInterface
// (channel()) that picks a channel for each RPC as docs/pool.md says: round
// robin or least loaded (power of two choices) over the READY and IDLE
// channels, optionally growing at a configured per-connection stream limit,
// replacing a channel stuck in TRANSIENT_FAILURE, and closing with a drain
// then a cancel. Each channel counts its RPCs in flight with a client
// interceptor, from the start of the call until its status arrives (a
// stream: until it ends). See README.md.
#ifndef RPCLAB_POOL_CHANNEL_POOL_H_
#define RPCLAB_POOL_CHANNEL_POOL_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rpclab {

// How a pool picks a channel.
enum class Pick {
  kRoundRobin,   // the candidate channels in turn
  kLeastLoaded,  // power of two choices: two different candidates at random, the one with fewer RPCs in flight
};

// ParsePick reads "round-robin" or "least-loaded"; else throws
// std::invalid_argument naming s.
Pick ParsePick(const std::string& s);
const char* PickName(Pick p);

// The most channels a pool may have, and the most max_connections (as every
// rpclab pool library).
inline constexpr int kMaxPoolSize = 1024;
// The size to use when none is given: the available CPUs clamped to 2..8.
int DefaultPoolSize();

// What a pool tells an observer (an OpenTelemetry adapter, say): the
// metrics named in docs/pool.md. Called on the RPC path, some with the
// pool's lock held: keep it cheap and do not call back into the pool.
class PoolObserver {
 public:
  virtual ~PoolObserver() = default;
  virtual void OnSize(int channels) = 0;                   // rpclab.pool.size (the new value)
  virtual void OnPick(int channel) = 0;                    // rpclab.pool.picks
  virtual void OnInFlight(int channel, int inflight) = 0;  // rpclab.pool.inflight (the new value)
  virtual void OnRedial() {}                               // rpclab.pool.redials
  virtual void OnResize(const char* /*direction*/) {}      // rpclab.pool.resizes: "grow" or "shrink"
};

// A pool's options. Growth at the server's stream limit is on when
// max_connections is above size; gRPC C++ 1.51 does not expose the peer's
// SETTINGS_MAX_CONCURRENT_STREAMS, so the limit is configured.
struct PoolOptions {
  int size = DefaultPoolSize();  // 1..kMaxPoolSize channels, never fewer
  Pick pick = Pick::kRoundRobin;
  int max_connections = 0;         // 0: size (growth off); else size..kMaxPoolSize
  int streams_per_connection = 0;  // RPCs in flight per channel before growing; needed when growth is on
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);  // a grown channel idle this long is retired
  std::chrono::milliseconds redial_after = std::chrono::seconds(5);   // TRANSIENT_FAILURE this long: replaced
  grpc::ChannelArguments args;                                        // every channel's arguments
  PoolObserver* observer = nullptr;  // must outlive the pool and the channels taken from it
};

class ChannelPool {
 public:
  // The channel a pick chose: its index (its rpclab.pool.connection), and
  // the channel. RPCs are counted by the channel itself, from their start
  // until their status, not by holding a Lease. After close: index -1 and a
  // channel whose calls fail with UNAVAILABLE.
  class Lease {
   public:
    Lease() = default;
    Lease(int index, std::shared_ptr<grpc::Channel> ch) : index_(index), channel_(std::move(ch)) {}
    int index() const { return index_; }
    const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

   private:
    int index_ = 0;
    std::shared_ptr<grpc::Channel> channel_;
  };

  // Channels to target with creds (grpc::SslCredentials for TLS;
  // grpc::InsecureChannelCredentials() only when plaintext is meant). Throws
  // std::invalid_argument naming the value, before any channel is made, when
  // target is empty or unparsable, creds is null, or an option is out of
  // range (size, max_connections, streams_per_connection, idle_timeout,
  // redial_after).
  ChannelPool(const std::string& target, std::shared_ptr<grpc::ChannelCredentials> creds, PoolOptions options);
  ChannelPool(const std::string& target, int size, Pick pick, const grpc::ChannelArguments& args,
              std::shared_ptr<grpc::ChannelCredentials> creds, PoolObserver* observer = nullptr);
  // Closes the pool with a drain of 0 if it is still open.
  ~ChannelPool();
  ChannelPool(const ChannelPool&) = delete;
  ChannelPool& operator=(const ChannelPool&) = delete;

  // The pool as a channel: each RPC started on it (a generated stub's, a
  // grpc::GenericStub's; blocking, async or callback) picks its channel
  // when it starts, and a stream stays on it. It outlives the pool; after
  // close its RPCs fail with UNAVAILABLE.
  std::shared_ptr<grpc::ChannelInterface> channel() const { return channel_; }
  // A stub whose every RPC picks its channel: FooService::NewStub's drop-in.
  template <typename Service>
  std::unique_ptr<typename Service::Stub> NewStub() const {
    return Service::NewStub(channel_);
  }

  // Picks a channel now (as an RPC on channel() would, without counting
  // it): for a caller that keeps a stub per channel. With growth on, picks
  // through channel() are the ones that count at the moment of the pick.
  Lease Acquire();
  std::shared_ptr<grpc::Channel> Next() { return Acquire().channel(); }

  // Waits until every channel is READY (connecting idle ones); false if one
  // is not by deadline. The channels are the pool's as they are while it
  // waits: one redialled meanwhile is left alone, its replacement waited on.
  bool WaitForConnected(std::chrono::system_clock::time_point deadline);

  // Closes the pool: it takes no RPC from now on (they fail with
  // UNAVAILABLE), RPCs in flight may finish until drain_deadline, those
  // still running then are cancelled (CANCELLED), and the pool lets go of
  // every channel at once. Returns whether everything ended by the drain
  // deadline. Closing again returns true at once and does nothing.
  bool Close(std::chrono::system_clock::time_point drain_deadline);
  bool Close();  // a drain of 5 s
  bool closed() const;

  // The pool's channels now (a snapshot: growth and redial change them).
  std::vector<std::shared_ptr<grpc::Channel>> channels() const;
  int size() const;
  Pick pick() const;
  // The RPCs in flight per channel, in the order of channels().
  std::vector<int> InFlight() const;
  int redials() const;  // channels replaced after TRANSIENT_FAILURE so far
  int resizes() const;  // channels added or retired by growth so far

  class Core;

 private:
  std::shared_ptr<Core> core_;
  std::shared_ptr<grpc::ChannelInterface> channel_;
};

}  // namespace rpclab

#endif  // RPCLAB_POOL_CHANNEL_POOL_H_
