// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool: N gRPC C++ channels to one target, each with its own
// subchannel (so its own TCP connection), handed out round robin or least
// loaded (power of two choices) over the READY ones. C-core shares one
// subchannel, one connection, between channels made with identical
// arguments (the global subchannel pool); the pool gives channel i the
// distinct argument "rpclab.pool.channel"=i. Each channel counts its RPCs in
// flight with a client interceptor, from the start of the call until its
// status arrives (a stream: until it ends). See README.md.
#ifndef RPCLAB_POOL_CHANNEL_POOL_H_
#define RPCLAB_POOL_CHANNEL_POOL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rpclab {

// How a pool picks a channel.
enum class Pick {
  kRoundRobin,   // each READY channel in turn
  kLeastLoaded,  // power of two choices: the next READY channel in turn against another READY one at random,
                 // the one with fewer RPCs in flight (ties to the one in turn)
};

// ParsePick reads "round-robin" or "least-loaded"; else throws
// std::invalid_argument naming s.
Pick ParsePick(const std::string& s);
const char* PickName(Pick p);

// The most channels a pool may have (as every rpclab pool library).
inline constexpr int kMaxPoolSize = 1024;
// The size to use when none is given: the available CPUs clamped to 2..8.
int DefaultPoolSize();

// What a pool tells an observer (an OpenTelemetry adapter, say): the
// metrics named in docs/pool.md, rpclab.pool.size, rpclab.pool.inflight
// (per channel), rpclab.pool.picks. Called on the RPC path: keep it cheap.
class PoolObserver {
 public:
  virtual ~PoolObserver() = default;
  virtual void OnSize(int channels) = 0;                   // rpclab.pool.size
  virtual void OnPick(int channel) = 0;                    // rpclab.pool.picks
  virtual void OnInFlight(int channel, int inflight) = 0;  // rpclab.pool.inflight
};

class ChannelPool {
 public:
  // The channel a pick chose: its index in channels(), and the channel.
  // (RPCs are counted by the channel itself, not by holding a Lease.)
  class Lease {
   public:
    Lease() = default;
    int index() const { return index_; }
    const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

   private:
    friend class ChannelPool;
    Lease(int index, std::shared_ptr<grpc::Channel> ch) : index_(index), channel_(std::move(ch)) {}
    int index_ = 0;
    std::shared_ptr<grpc::Channel> channel_;
  };

  // size channels to target with creds (grpc::SslCredentials for TLS;
  // grpc::InsecureChannelCredentials() only when plaintext is meant), each
  // made with args plus its own "rpclab.pool.channel" argument. Throws
  // std::invalid_argument naming the value when size is not 1..kMaxPoolSize,
  // target is empty, or creds is null.
  ChannelPool(const std::string& target, int size, Pick pick, const grpc::ChannelArguments& args,
              std::shared_ptr<grpc::ChannelCredentials> creds, PoolObserver* observer = nullptr);
  ~ChannelPool();
  ChannelPool(const ChannelPool&) = delete;
  ChannelPool& operator=(const ChannelPool&) = delete;

  // The channel for the next call. Lock-free. Throws std::logic_error once
  // the pool is closed.
  Lease Acquire();
  // The next channel (as Acquire picks).
  std::shared_ptr<grpc::Channel> Next() { return Acquire().channel(); }
  // A new stub of Service on the next channel: FooService::NewStub's drop-in.
  template <typename Service>
  std::unique_ptr<typename Service::Stub> NewStub() {
    return Service::NewStub(Next());
  }

  // Waits until every channel is READY (connecting idle ones); false if one
  // is not by deadline.
  bool WaitForConnected(std::chrono::system_clock::time_point deadline);

  // Closes the pool: Acquire throws from now on; waits until the RPCs in
  // flight end or deadline, and returns whether they all ended. gRPC C++
  // has no way to cancel another's call from a channel, so RPCs still
  // running at the deadline run on (their stubs keep their channels). Closing
  // again returns at once when nothing is in flight.
  bool Close(std::chrono::system_clock::time_point deadline);
  bool closed() const { return closed_.load(); }

  int size() const { return static_cast<int>(channels_.size()); }
  Pick pick() const { return pick_; }
  const std::vector<std::shared_ptr<grpc::Channel>>& channels() const { return channels_; }
  // The RPCs in flight per channel (a snapshot).
  std::vector<int> InFlight() const;

  // Shared with each channel's interceptors, which may outlive the pool.
  struct Counts {
    explicit Counts(int n, PoolObserver* o) : inflight(new std::atomic<int>[n]), observer(o) {
      for (int i = 0; i < n; i++) inflight[i] = 0;
    }
    std::unique_ptr<std::atomic<int>[]> inflight;
    PoolObserver* observer;
    std::atomic<int> total{0};
    std::mutex mu;
    std::condition_variable drained;
    void Add(int i, int d);
  };

 private:
  int Choose();
  Pick pick_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::shared_ptr<Counts> counts_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> closed_{false};
};

}  // namespace rpclab

#endif  // RPCLAB_POOL_CHANNEL_POOL_H_
